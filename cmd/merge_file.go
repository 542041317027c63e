package cmd

import (
	"errors"
	"io/fs"
	"os"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newMergeFileCmd) }

func newMergeFileCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "merge-file BASE OURS THEIRS PATH",
		Short: "git's merge driver for memory files (installed by memctl sync --install-merge-driver)",
		Long: `merge-file is the merge driver git runs for memory files once
memctl sync --install-merge-driver registered it: BASE, OURS and THEIRS are
git's temporary files (%O %A %B) and PATH the file's path (%P). It merges
entry by entry with sync's rules (docs/SYNC.md) and writes the result into
OURS (exit 0). A file it cannot merge on its own (a conflicting edit in a
topic file, whose Pending variant belongs in MEMORY.md) gets git's line
merge with conflict markers instead (exit 1): finish with memctl resolve.`,
		Example: `  git config merge.memctl.driver "memctl merge-file %O %A %B %P"`,
		Hidden:  true,
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			read := func(p string) ([]byte, error) {
				b, err := os.ReadFile(p)
				if errors.Is(err, fs.ErrNotExist) {
					return nil, nil
				}
				return b, err
			}
			base, err := read(args[0])
			if err != nil {
				return err
			}
			ours, err := read(args[1])
			if err != nil {
				return err
			}
			theirs, err := read(args[2])
			if err != nil {
				return err
			}
			if merged, ok := mdmem.MergeFile(args[3], base, ours, theirs); ok {
				return os.WriteFile(args[1], merged, 0o644)
			}
			conflicts, err := mdmem.TextMergeFile(cmd.Context(), args[1], args[0], args[2])
			if err != nil {
				return err
			}
			if conflicts {
				return &ExitError{Code: ExitFailure}
			}
			return nil
		},
	}
}
