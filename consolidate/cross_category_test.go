package consolidate

import (
	"context"
	"strings"
	"testing"
)

// TestModelOperationAcrossCategoriesIsRefused: soak seed 390211's merge
// also folded a constraint candidate into a decision. The rules never
// cross categories; the model's merge, noop, supersede and compress of
// items of two categories are refused, so the candidate's category (a
// preference is not a fact) is never lost. The candidate stays queued.
func TestModelOperationAcrossCategoriesIsRefused(t *testing.T) {
	const entry = "Deploys to production happen on Tuesdays"
	const candidate = "Deploys to production happen on Tuesdays only"
	for _, tt := range []struct {
		name, op, text string
		withEntries    bool
	}{
		{"merge with text", "merge", candidate, false},
		{"merge without text", "merge", "", false},
		{"noop", "noop", "", false},
		{"supersede", "supersede", "", false},
		{"compress", "compress", candidate, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t, memoryWithDecisions("- [dec-001] "+entry+" (user · 2026-01-01)"), "")
			enqueue(t, dir, cand(candidate, "preference", testNow))
			rep := run(t, dir, Options{Completer: oneOpCompleter(tt.op, tt.text, tt.withEntries)})
			if n := rep.Plan.Count(OpMerge) + rep.Plan.Count(OpNoop) + rep.Plan.Count(OpSupersede) + rep.Plan.Count(OpCompress); n != 0 {
				t.Fatalf("the %s across categories was applied: %+v", tt.op, rep.Plan.Ops)
			}
			if !strings.Contains(strings.Join(rep.Plan.Warnings, "\n"), "categories") {
				t.Errorf("no warning names the categories: %q", rep.Plan.Warnings)
			}
			mem := readFile(t, dir, "MEMORY.md")
			if !strings.Contains(mem, "[dec-001] "+entry+" (") {
				t.Errorf("dec-001 changed:\n%s", mem)
			}
			if all := everywhere(t, dir); !strings.Contains(all, candidate) {
				t.Errorf("the candidate is gone:\n%s", all)
			}
		})
	}
}

// TestModelCompressIntoAnotherCategoryIsRefused: a summary of two
// decisions filed as a preference would turn them into one.
func TestModelCompressIntoAnotherCategoryIsRefused(t *testing.T) {
	dir := newRepo(t, memoryWithDecisions("- [dec-001] Deploys to production happen on Tuesdays (user · 2026-01-01)"), "")
	enqueue(t, dir, cand("Deploys to production happen on Tuesdays after standup", "decision", testNow))
	completer := completerFunc(func(ctx context.Context, r Request) (Response, error) {
		resp, err := oneOpCompleter("compress", "Deploys to production happen on Tuesdays after standup", true)(ctx, r)
		resp.Text = strings.Replace(resp.Text, `"category":""`, `"category":"preference"`, 1)
		return resp, err
	})
	rep := run(t, dir, Options{Completer: completer})
	if rep.Plan.Count(OpCompress) != 0 {
		t.Fatalf("the compress was applied: %+v", rep.Plan.Ops)
	}
	if !strings.Contains(strings.Join(rep.Plan.Warnings, "\n"), "never crosses categories") {
		t.Errorf("warnings: %q", rep.Plan.Warnings)
	}
}

// TestModelMergeWithinACategoryStillApplies: the same merge within one
// category goes through.
func TestModelMergeWithinACategoryStillApplies(t *testing.T) {
	dir := newRepo(t, memoryWithDecisions("- [dec-001] Deploys to production happen on Tuesdays (user · 2026-01-01)"), "")
	enqueue(t, dir, cand("Deploys to production happen on Tuesdays only", "decision", testNow))
	rep := run(t, dir, Options{Completer: oneOpCompleter("merge", "Deploys to production happen on Tuesdays only", false)})
	if rep.Plan.Count(OpMerge) != 1 {
		t.Fatalf("the merge was refused: %+v %q", rep.Plan.Ops, rep.Plan.Warnings)
	}
}
