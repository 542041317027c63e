package consolidate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/templates"
)

// A sixth review (2026-12-03, hostile tester): the model's answers, confirm
// and extract. Each test fails on the code before its fix.

// TestModelSupersedeByOlderCandidateKeepsNewerValue: the model
// supersedes an entry with a candidate that is OLDER than it (a backfilled
// statement, created weeks before the entry's value was set). memctl
// checks recency on the rule path (directUpdateRule archives an older
// candidate), but applies the model's supersede without comparing dates:
// the newer value goes to the archive and the older one becomes the live
// entry.
func TestModelSupersedeByOlderCandidateKeepsNewerValue(t *testing.T) {
	dir := newRepo(t, memoryWithDecisions("- [dec-001] Backups of the Delta database are kept for 30 days (user · 2026-01-25)"), "")
	old := testNow.AddDate(0, -1, 0) // 2026-01-01, before the entry's 2026-01-25
	enqueue(t, dir, cand("Backups of the Delta database are kept for 7 days", "decision", old))
	rep := run(t, dir, Options{Completer: oneOpCompleter("supersede", "", false)})
	main := readFile(t, dir, "MEMORY.md")
	live, _, _ := strings.Cut(main, "# Archive")
	if !strings.Contains(live, "kept for 30 days") {
		t.Fatalf("the newer value (30 days, 2026-01-25) left the live memory for an older candidate (7 days, %s); ops %+v:\n%s",
			old.Format(time.DateOnly), rep.Plan.Ops, main)
	}
}

// reviewBSecret is a GitHub token the secret detectors know.
const reviewBSecret = "ghp_R8kQ2vXm9LpT4sWz7NcB1yHd6JfG3aE5uK0o"

// leaks lists the places under dir (the working tree, the .memctl cache
// and queue, and every commit message and blob in git) that hold s.
func leaks(t *testing.T, dir, s string) []string {
	t.Helper()
	var where []string
	for _, rel := range []string{"MEMORY.md", "topics/decision.md", ".memctl/cache/consolidate-attempts.json"} {
		if strings.Contains(readFile(t, dir, rel), s) {
			where = append(where, rel)
		}
	}
	if strings.Contains(git(t, dir, "log", "--all", "--format=%B"), s) {
		where = append(where, "git commit messages")
	}
	if strings.Contains(git(t, dir, "log", "--all", "-p", "--format="), s) {
		where = append(where, "git file history")
	}
	return where
}

// TestModelReasonSecretNeverStored: the model's "reason" is written
// without the output rules checkText applies to its "text": a conflict's
// reason becomes the Pending entry's note in MEMORY.md, and every
// operation's reason goes into the commit body. A secret in it (a model
// that copies one, or writes its own) reaches the file and git.
func TestModelReasonSecretNeverStored(t *testing.T) {
	for _, op := range []string{"conflict", "supersede"} {
		t.Run(op, func(t *testing.T) {
			dir := newRepo(t, memoryWithDecisions("- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)"), "")
			enqueue(t, dir, cand("Backups of the Delta database are kept for 30 days", "decision", testNow))
			comp := completerFunc(func(ctx context.Context, r Request) (Response, error) {
				e, c := 0, 0
				for _, it := range fakellm.ParseItems(r.User) {
					if it.Kind == "candidate" {
						c = it.ID
					} else if e == 0 {
						e = it.ID
					}
				}
				return Response{Text: fmt.Sprintf(`{"operations":[{"op":%q,"target":%d,"sources":[%d],"text":"","category":"","reason":"the deploy token is %s"}]}`,
					op, e, c, reviewBSecret)}, nil
			})
			rep := run(t, dir, Options{Completer: comp})
			if rep.Commit == "" {
				t.Fatalf("nothing committed: %+v", rep.Plan)
			}
			if w := leaks(t, dir, reviewBSecret); len(w) > 0 {
				t.Fatalf("the secret from the model's reason is stored in %v:\n%s\n%s", w, readFile(t, dir, "MEMORY.md"), git(t, dir, "log", "-1", "--format=%B"))
			}
		})
	}
}

// TestModelUnknownOpSecretNeverStored: an answer whose "op" is not an
// operation is rejected as a whole, and the error quotes the op verbatim
// ("unknown op %q"). That error is the held candidates' reason: it is
// written to .memctl/cache/consolidate-attempts.json, and once the
// candidate reaches max_attempts, into the commit body ("; last: ...").
func TestModelUnknownOpSecretNeverStored(t *testing.T) {
	dir := newRepo(t, memoryWithDecisions("- [dec-001] Backups of the Delta database are kept for 7 days (user · 2026-01-01)"), "[consolidate]\nmax_attempts = 2\n")
	enqueue(t, dir, cand("Backups of the Delta database are kept for 30 days", "decision", testNow))
	comp := completerFunc(func(ctx context.Context, r Request) (Response, error) {
		return Response{Text: `{"operations":[{"op":"` + reviewBSecret + `","target":0,"sources":[],"text":"","category":"","reason":""}]}`}, nil
	})
	run(t, dir, Options{Completer: comp})
	first := leaks(t, dir, reviewBSecret)
	run(t, dir, Options{Completer: comp})
	if w := append(first, leaks(t, dir, reviewBSecret)...); len(w) > 0 {
		t.Fatalf("the secret the model wrote as its op is stored in %v:\n%s", w, git(t, dir, "log", "-1", "--format=%B"))
	}
}

// TestExtractCorePromptRedacted: consolidate redacts every entry
// it shows the model (promptText: "an entry imported or edited by hand
// may hold one, and the prompt leaves the machine"), and extract masks
// the transcript; but extract sends the core entries as context to the
// model verbatim (askModel), so a secret a person typed into the core
// profile leaves the machine on every extract.
func TestExtractCorePromptRedacted(t *testing.T) {
	var prompts []string
	c := completerFunc(func(_ context.Context, r Request) (Response, error) {
		prompts = append(prompts, r.System+"\n"+r.User)
		if r.SchemaName == DigestSchemaName {
			return Response{Text: `{"digest": "x"}`}, nil
		}
		return Response{Text: `{"candidates":[]}`}, nil
	})
	dir := newRepo(t, memoryWithDecisions("- [dec-001] The CI job authenticates with "+reviewBSecret+" (user · 2026-01-01)"), "")
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(claudeLine("user", "user", "I prefer tabs over spaces in Go code", false)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractTranscript(context.Background(), open(t, dir), ExtractOptions{Path: p, Completer: c, Now: func() time.Time { return testNow }}); err != nil {
		t.Fatal(err)
	}
	if len(prompts) == 0 {
		t.Fatal("the model was not asked")
	}
	for _, pr := range prompts {
		if strings.Contains(pr, reviewBSecret) {
			t.Fatalf("the core entry's secret reached the model:\n%s", pr)
		}
	}
}

// TestModelMergeTextKeepsNewerNegation: a merge without text whose
// newer wording adds or removes a negation is refused (checkMerge,
// changedMeaning: "an update is a supersede"). A merge WITH text is not
// checked that way: the model merges the newer "Backups of the Delta
// database are not encrypted" into the older entry with the entry's own
// text, the candidate is consumed and its value is gone everywhere.
func TestModelMergeTextKeepsNewerNegation(t *testing.T) {
	const old = "Backups of the Delta database are encrypted at rest"
	dir := newRepo(t, memoryWithDecisions("- [dec-001] "+old+" (user · 2026-01-01)"), "")
	enqueue(t, dir, cand("Backups of the Delta database are not encrypted at rest", "decision", testNow))
	rep := run(t, dir, Options{Completer: oneOpCompleter("merge", old, false)})
	if !strings.Contains(everywhere(t, dir), "are not encrypted") {
		t.Fatalf("the newer candidate (a negation of dec-001) was merged away; ops %+v:\n%s", rep.Plan.Ops, readFile(t, dir, "MEMORY.md"))
	}
}

// TestConfirmAgentCoreUpdateArchivesOld: with
// consolidate.hold_agent_core, an agent's preference that changes a word
// of a live one ("dark" → "light") waits in Pending with "see pref-001",
// with only the agent-sourced note and (below the near-duplicate
// threshold) no "see": the "may update pref-001" the rules write for the
// same candidate from any other source (mayUpdate, relatedEntry) is left
// out, because waitsForPerson settles it first. Confirm archives only the entries a "conflicts with" or
// "may update" note names, so confirming the new value leaves the old one
// live beside it: two contradicting live preferences, the one thing the
// rules promise never to keep.
func TestConfirmAgentCoreUpdateArchivesOld(t *testing.T) {
	mem := strings.Replace(templates.Embedded("MEMORY.md"), "## User preferences\n", "## User preferences\n- [pref-001] The user prefers dark mode in the editor (user · 2026-01-01)\n", 1)
	dir := newRepo(t, mem, "[consolidate]\nhold_agent_core = true\n")
	c := cand("The user prefers light mode in the editor", "preference", testNow)
	c.Source = "agent"
	enqueue(t, dir, c)
	run(t, dir, Options{NoLLM: true})
	s := open(t, dir)
	m, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := Pending(m)
	if len(p) != 1 {
		t.Fatalf("pending %+v:\n%s", p, readFile(t, dir, "MEMORY.md"))
	}
	if _, err := Confirm(context.Background(), s, p[0].ID, "", false, testNow); err != nil {
		t.Fatal(err)
	}
	main := readFile(t, dir, "MEMORY.md")
	live, _, _ := strings.Cut(main, "# Archive")
	if strings.Contains(live, "dark mode") && strings.Contains(live, "light mode") {
		t.Fatalf("after confirm both values are live:\n%s", main)
	}
}
