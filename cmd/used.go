package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newUsedCmd) }

func newUsedCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "used ID...",
		Short: "Record which injected entries the agent used",
		Long: `Record the ids of injected entries an agent actually used, for the hit rate
of ` + "`memctl stats`" + ` (used ids / injected ids). The ids of existing entries
are recorded; an unknown id (agents mistype them) is reported on stderr with
the closest ids, and recorded nowhere; the exit status is 1 only when no
given id exists. The record is one JSON line appended (O_APPEND, one write) to the
git-ignored .memctl/cache/inject.log, so concurrent agents never interleave.
It is written whether or not inject logging is on; turn that on with
inject.log = true or MEMCTL_INJECT_LOG=1 so the injects are counted too.`,
		Example: `  memctl used dec-014 inc-004
  memctl inject --task "$TASK" --format json | jq -r '.entries[].id' | head -2 | xargs memctl used`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUsed(cmd.Context(), f, args)
		},
	}
	return cmd
}

func runUsed(ctx context.Context, f *Factory, ids []string) error {
	s, c, err := loadCorpus(ctx, f)
	if err != nil {
		return err
	}
	clean, unknown := splitKnown(c, ids)
	if len(unknown) > 0 {
		all := make([]string, 0, len(c.Notes))
		for i := range c.Notes {
			all = append(all, c.Notes[i].Ref())
		}
		for _, id := range unknown {
			msg := "no entry with id " + id + "; not recorded"
			if dym := mdmem.DidYouMean(mdmem.SuggestIDs(id, all)); dym != "" {
				msg += " (" + dym + ")"
			}
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", msg)
		}
	}
	if len(clean) == 0 {
		return &ExitError{Code: ExitFailure, Msg: "no known id given; nothing recorded"}
	}
	if err := inject.AppendLog(s.Dir, inject.LogRecord{Kind: "used", Time: f.Now().UTC(), IDs: clean}); err != nil {
		return err
	}
	if len(unknown) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: recorded %s\n", strings.Join(clean, ", "))
	}
	return nil
}
