package consolidate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
)

// TestRewriteNeverDropsACandidatesValue (found by the simulation): a
// compress or merge whose text leaves out a candidate's names or numbers
// is rejected; the candidates stay queued, nothing is lost.
func TestRewriteNeverDropsACandidatesValue(t *testing.T) {
	for _, op := range []string{"compress", "merge", "merge-unrelated"} {
		t.Run(op, func(t *testing.T) {
			dir := newRepo(t, "# Core profile\n\n## Key decisions\n- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)\n\n# Archive\n", "")
			cs := []*mdmem.Candidate{
				cand("Backups of the Alpha database are kept for 30 days", "decision", testNow),
				cand("Backups of the Beta database are kept for 60 days", "decision", testNow),
				cand("Backups of the Gamma database are kept for 90 days", "decision", testNow),
			}
			enqueue(t, dir, cs...)
			comp := completerFunc(func(ctx context.Context, r Request) (Response, error) {
				var cands []int
				target, text := 0, ""
				for _, it := range fakellm.ParseItems(r.User) {
					if it.Kind == "candidate" {
						cands = append(cands, it.ID)
						if text == "" {
							text = it.Text
						}
					} else if target == 0 {
						target = it.ID
					}
				}
				ids := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(cands)), ","), "[]")
				if len(cands) < 2 || target == 0 {
					t.Errorf("test premise: %d candidates and entry %d in one request", len(cands), target)
				}
				if op == "merge-unrelated" {
					// folds the candidates into an unrelated entry, keeping its text
					return Response{Text: fmt.Sprintf(`{"operations":[{"op":"merge","target":%d,"sources":[%s],"text":"","category":"","reason":"same"}]}`, target, ids)}, nil
				}
				if op == "merge" {
					return Response{Text: fmt.Sprintf(`{"operations":[{"op":"merge","target":%d,"sources":[%s],"text":%q,"category":"","reason":"same"}]}`, target, ids, text)}, nil
				}
				return Response{Text: fmt.Sprintf(`{"operations":[{"op":"compress","target":0,"sources":[%s],"text":%q,"category":"","reason":"same"}]}`, ids, text)}, nil
			})
			rep := run(t, dir, Options{Completer: comp})
			if rep.Summary.Compressed+rep.Summary.Merged != 0 {
				t.Fatalf("a lossy %s was applied: %+v", op, rep.Summary)
			}
			if q := queued(t, dir); len(q) != len(cs) {
				t.Fatalf("queue %v", q)
			}
			if why := FormatOp(rep.Plan.Ops[0]); !strings.Contains(why, "drop") {
				t.Errorf("reason %q", why)
			}
		})
	}
}
