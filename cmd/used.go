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
of ` + "`memctl stats`" + ` (used ids / injected ids). Every id must exist in the
memory. The record is one JSON line appended (O_APPEND, one write) to the
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
	known := map[string]bool{}
	for i := range c.Notes {
		known[c.Notes[i].Ref()] = true
	}
	var unknown []string
	seen := map[string]bool{}
	var clean []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if !known[id] {
			unknown = append(unknown, id)
			continue
		}
		if !seen[id] {
			seen[id] = true
			clean = append(clean, id)
		}
	}
	if len(unknown) > 0 {
		err := fmt.Errorf("no entry with id %s; nothing recorded", strings.Join(unknown, ", "))
		ids := make([]string, 0, len(known))
		for id := range known {
			ids = append(ids, id)
		}
		if dym := mdmem.DidYouMean(mdmem.SuggestIDs(unknown[0], ids)); dym != "" {
			return &HintError{Err: err, Hint: unknown[0] + ": " + dym}
		}
		return err
	}
	return inject.AppendLog(s.Dir, inject.LogRecord{Kind: "used", Time: f.Now().UTC(), IDs: clean})
}
