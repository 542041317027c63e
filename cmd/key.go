package cmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newKeyCmd) }

func newKeyCmd(f *Factory) *cobra.Command {
	key := &cobra.Command{
		Use:   "key",
		Short: "Copy the tombstone key between copies of a memory (out of band)",
		Long: `A forget leaves a tombstone: a keyed hash of the forgotten text under a
key kept in the git directory (` + mdmem.TombstoneKeyName + `), never
committed or pushed, plus a public, deliberately slow hash of it. Every
copy of the memory (a clone, another machine) refuses the exact text again
by the public hash; only a copy holding the key also refuses near repeats
("Alex now lives at 12 Harbour Road in Leith" after "Alex lives at 12
Harbour Road, Leith"). See docs/FORMAT.md, "Forget and tombstones".

key export prints the key on stdout as one line; key import reads that
line on stdin and keeps it (mode 0600) in this copy's git directory. Copy
it over a channel you trust, never through the repository:

  memctl key export | ssh laptop memctl key import

A copy without a key takes the imported one as its own; a copy that has
one keeps both.`,
		Example: "  memctl key export | ssh laptop memctl key import\n  memctl key import --json < key.txt",
		Args:    cobra.NoArgs,
	}
	export := &cobra.Command{
		Use:     "export",
		Short:   "Print the tombstone key on stdout, for memctl key import",
		Long:    "export prints this copy's tombstone key as one line on stdout, and nowhere else. It fails when the memory has none yet (no forget made one).",
		Example: "  memctl key export | ssh laptop memctl key import",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			text, err := s.ExportTombstoneKey()
			if errors.Is(err, mdmem.ErrTombstoneKey) {
				return &HintError{Err: err, Hint: "export the key from the copy where entries were forgotten"}
			}
			if err != nil {
				return err
			}
			_, err = f.IO.Out.Write(text)
			return err
		},
	}
	var asJSON bool
	imp := &cobra.Command{
		Use:   "import",
		Short: "Keep a tombstone key read from stdin (from memctl key export)",
		Long: `import reads one line, as memctl key export prints it, on stdin and keeps
the key in this copy's git directory (mode 0600). It says on stderr
whether the key became this copy's own (it had none), was added beside
its own, or was already there.`,
		Example: "  ssh workstation memctl key export | memctl key import",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			text, err := io.ReadAll(io.LimitReader(f.IO.In, 4096))
			if err != nil {
				return err
			}
			res, err := s.ImportTombstoneKey(text)
			if err != nil {
				return &HintError{Err: err, Hint: "pipe it from the other copy: memctl key export | memctl key import"}
			}
			if asJSON {
				return f.printJSON(res)
			}
			switch res.As {
			case "own":
				fmt.Fprintf(f.IO.ErrOut, "memctl: imported tombstone key %s: this copy's own from now on\n", res.ID)
			case "added":
				fmt.Fprintf(f.IO.ErrOut, "memctl: imported tombstone key %s, beside this copy's own\n", res.ID)
			default:
				fmt.Fprintf(f.IO.ErrOut, "memctl: tombstone key %s is here already\n", res.ID)
			}
			return nil
		},
	}
	imp.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON ({\"key_id\", \"as\"})")
	key.AddCommand(export, imp)
	return key
}
