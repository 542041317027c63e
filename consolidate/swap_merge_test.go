package consolidate

import (
	"strings"
	"testing"
)

// TestModelMergeOfASwappedStatementIsRefused: soak seed 390211. The model
// merged "Backups of the egret database are kept for 4339 days" into the
// entry "Backups of the jackal database are kept for 4339 days" with the
// candidate's text: the names and numbers checks passed (the same number,
// no capitalised name), and the jackal database's retention was gone
// without an archive record. A merge of a statement about another thing,
// with or without text, is refused whichever text it keeps.
func TestModelMergeOfASwappedStatementIsRefused(t *testing.T) {
	const entry = "Backups of the jackal database are kept for 4339 days"
	const swapped = "Backups of the egret database are kept for 4339 days"
	for _, tt := range []struct {
		name, op, text string
	}{
		{"merge with the candidate's text", "merge", swapped},
		{"merge with the entry's text", "merge", entry},
		{"merge without text", "merge", ""},
		{"noop", "noop", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t, memoryWithDecisions("- [dec-001] "+entry+" (user · 2026-01-01)"), "")
			enqueue(t, dir, cand(swapped, "decision", testNow))
			rep := run(t, dir, Options{Completer: oneOpCompleter(tt.op, tt.text, false)})
			all := everywhere(t, dir)
			for _, want := range []string{entry, swapped} {
				if !strings.Contains(all, want) {
					t.Errorf("%q is gone; ops %+v:\n%s", want, rep.Plan.Ops, readFile(t, dir, "MEMORY.md"))
				}
			}
			if rep.Plan.Count(OpMerge)+rep.Plan.Count(OpNoop) != 0 {
				t.Errorf("the merge was applied: %+v", rep.Plan.Ops)
			}
		})
	}
}

// TestModelMergeOfARewordingStillApplies: a restatement in other words
// (not a few words swapped in place in the same sentence) is the model's
// call.
func TestModelMergeOfARewordingStillApplies(t *testing.T) {
	const entry = "The order service uses Redis for caching"
	dir := newRepo(t, memoryWithDecisions("- [dec-001] "+entry+" (user · 2026-01-01)"), "")
	enqueue(t, dir, cand("Order service caching is done with Redis", "decision", testNow))
	rep := run(t, dir, Options{Completer: oneOpCompleter("merge", entry, false)})
	if rep.Plan.Count(OpMerge) != 1 {
		t.Fatalf("the merge was refused: %+v", rep.Plan.Ops)
	}
}
