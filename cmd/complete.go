package cmd

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

// idCommands are the commands whose arguments are entry ids, with the
// entries worth offering for each (nil: every entry).
var idCommands = map[string]func(*mdmem.Entry) bool{
	"show":    nil,
	"log":     nil,
	"used":    func(e *mdmem.Entry) bool { return e.Place != mdmem.PlaceArchive },
	"forget":  nil,
	"confirm": func(e *mdmem.Entry) bool { return e.Place == mdmem.PlacePending },
	"reject":  func(e *mdmem.Entry) bool { return e.Place == mdmem.PlacePending },
}

// addCompletions registers dynamic shell completion on the command tree:
// entry ids (with their content as the description) for the commands that
// take ids, and the values of every --category, --scope and --topic flag,
// read from the memory at completion time.
func addCompletions(f *Factory, root *cobra.Command) {
	for _, c := range root.Commands() {
		if keep, ok := idCommands[c.Name()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if c.Name() == "log" && len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return completeIDs(cmd.Context(), f, args, toComplete, keep), cobra.ShellCompDirectiveNoFileComp
			}
		}
		if c.Flags().Lookup("category") != nil {
			_ = c.RegisterFlagCompletionFunc("category", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeList(toComplete, mdmem.CategoryNames()), cobra.ShellCompDirectiveNoFileComp
			})
		}
		if c.Flags().Lookup("scope") != nil {
			_ = c.RegisterFlagCompletionFunc("scope", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeList(toComplete, memoryValues(cmd.Context(), f, entryScopes)), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
			})
		}
		if c.Flags().Lookup("topic") != nil {
			_ = c.RegisterFlagCompletionFunc("topic", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
				return memoryValues(cmd.Context(), f, func(m *mdmem.Memory) []string { return m.TopicSlugs() }), cobra.ShellCompDirectiveNoFileComp
			})
		}
	}
}

// completeIDs offers the ids that start with toComplete and are not given
// yet, each with a snippet of its content.
func completeIDs(ctx context.Context, f *Factory, given []string, toComplete string, keep func(*mdmem.Entry) bool) []string {
	mem := completionMemory(ctx, f)
	if mem == nil {
		return nil
	}
	var out []string
	for _, e := range mem.Entries() {
		if e.ID == "" || !strings.HasPrefix(e.ID, toComplete) || slices.Contains(given, e.ID) || (keep != nil && !keep(e)) {
			continue
		}
		out = append(out, e.ID+"\t"+snippet(e.Content, 50))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// completeList completes the last element of a comma-separated list.
func completeList(toComplete string, values []string) []string {
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, last) {
			out = append(out, head+v)
		}
	}
	return out
}

// memoryValues returns what values extracts from the memory, sorted and
// without repeats, or nil if the memory cannot be read.
func memoryValues(ctx context.Context, f *Factory, values func(*mdmem.Memory) []string) []string {
	mem := completionMemory(ctx, f)
	if mem == nil {
		return nil
	}
	out := values(mem)
	sort.Strings(out)
	return slices.Compact(out)
}

// entryScopes lists every scope an entry names.
func entryScopes(m *mdmem.Memory) []string {
	var out []string
	for _, e := range m.Entries() {
		out = append(out, e.Scope...)
	}
	return out
}

// completionMemory reads the memory for completion, quietly: completion
// must never print errors into a person's shell.
func completionMemory(ctx context.Context, f *Factory) *mdmem.Memory {
	if ctx == nil {
		ctx = context.Background()
	}
	dir, err := f.MemoryDir()
	if err != nil {
		return nil
	}
	mem, err := mdmem.Load(ctx, dir)
	if err != nil {
		return nil
	}
	return mem
}
