package consolidate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/templates"
)

// Review of the model's answers (2026-12-03): answers the validation let
// through although they lose a value.

// oneOpCompleter answers every request with one operation: op on the
// first entry shown, with every candidate (and, for compress, every
// entry) as sources.
func oneOpCompleter(op, text string, withEntries bool) completerFunc {
	return completerFunc(func(ctx context.Context, r Request) (Response, error) {
		var srcs []string
		target := 0
		for _, it := range fakellm.ParseItems(r.User) {
			if it.Kind == "candidate" {
				srcs = append(srcs, fmt.Sprint(it.ID))
				continue
			}
			if target == 0 {
				target = it.ID
			}
			if withEntries {
				srcs = append(srcs, fmt.Sprint(it.ID))
			}
		}
		if withEntries {
			target = 0
		}
		return Response{Text: fmt.Sprintf(`{"operations":[{"op":%q,"target":%d,"sources":[%s],"text":%q,"category":"","reason":"r"}]}`,
			op, target, strings.Join(srcs, ","), text)}, nil
	})
}

func memoryWithDecisions(lines ...string) string {
	return strings.Replace(templates.Embedded("MEMORY.md"), "## Key decisions\n", "## Key decisions\n"+strings.Join(lines, "\n")+"\n", 1)
}

// everywhere returns the memory files' text and the queue's.
func everywhere(t *testing.T, dir string) string {
	var b strings.Builder
	b.WriteString(readFile(t, dir, "MEMORY.md"))
	for _, slug := range []string{"decision", "fact"} {
		b.WriteString(readFile(t, dir, "topics/"+slug+".md"))
	}
	cs, _, err := mdmem.ReadQueue(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		b.WriteString(c.Content + "\n")
	}
	return b.String()
}

// TestLLMSupersedeWithoutTextKeepsEveryCandidate: a supersede or conflict
// with two candidates and no text kept the first candidate's text and
// consumed the second: its value was gone.
func TestLLMSupersedeWithoutTextKeepsEveryCandidate(t *testing.T) {
	for _, op := range []string{"supersede", "conflict"} {
		t.Run(op, func(t *testing.T) {
			dir := newRepo(t, memoryWithDecisions("- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)"), "")
			enqueue(t, dir,
				cand("Backups of the Delta database are kept for 30 days", "decision", testNow),
				cand("Backups of the Beta database are kept for 60 days", "decision", testNow.Add(time.Minute)))
			run(t, dir, Options{Completer: oneOpCompleter(op, "", false)})
			if !strings.Contains(everywhere(t, dir), "Beta database are kept for 60 days") {
				t.Errorf("the second candidate's text is gone:\n%s", readFile(t, dir, "MEMORY.md"))
			}
		})
	}
}

// TestLLMCompressKeepsTheEntriesItArchives: a summary that drops the
// values of the entries it would archive is refused.
func TestLLMCompressKeepsTheEntriesItArchives(t *testing.T) {
	dir := newRepo(t, memoryWithDecisions(
		"- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)",
		"- [dec-002] Backups of the Epsilon database are kept for 14 days (user · 2026-01-01)"),
		"[consolidate]\nmax_archive_share = 1.0\n")
	enqueue(t, dir, cand("Backups of the Alpha database are kept for 30 days", "decision", testNow))
	run(t, dir, Options{Completer: oneOpCompleter("compress", "Backups of the Alpha database are kept for 30 days", true)})
	m := readFile(t, dir, "MEMORY.md")
	for _, id := range []string{"dec-001", "dec-002"} {
		for _, l := range strings.Split(m, "\n") {
			if strings.Contains(l, "["+id+"]") && strings.Contains(l, "superseded by") {
				t.Errorf("%s archived by a summary that drops its value: %s", id, l)
			}
		}
	}
}

// TestLLMMergeThatChangesTheMeaningIsRefused: a merge without text whose
// newer wording changes a unit or adds a negation would have replaced
// the entry's value in place, with nothing archived.
func TestLLMMergeThatChangesTheMeaningIsRefused(t *testing.T) {
	for _, newer := range []string{"Backups of the Delta database are kept for 7 weeks", "Backups of the Delta database are not kept for 7 days"} {
		t.Run(newer, func(t *testing.T) {
			dir := newRepo(t, memoryWithDecisions(
				"- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)",
				"- [dec-002] Deploys run on Tuesdays (user · 2026-01-01)"), "")
			enqueue(t, dir, cand(newer, "decision", testNow))
			run(t, dir, Options{Completer: oneOpCompleter("merge", "", false)})
			all := everywhere(t, dir)
			if !strings.Contains(all, "Delta database are kept for 7 days") || !strings.Contains(all, newer) {
				t.Errorf("one of the two values is gone:\n%s", all)
			}
		})
	}
}
