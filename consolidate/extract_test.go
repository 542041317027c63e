package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/consolidate/transcript"
	"github.com/memctl/memctl/mdmem"
)

// claudeLine is one Claude Code session record.
func claudeLine(typ, role string, content any, side bool) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "sessionId": "big-1", "isSidechain": side,
		"message": map[string]any{"role": role, "content": content}})
	return string(b) + "\n"
}

// bigTranscript writes a Claude Code session of at least size bytes: user
// and assistant turns, tool calls with large results (file reads), a
// subagent turn now and then, and every 97th user turn a preference worth
// remembering. It returns the path and the line numbers of those turns.
func bigTranscript(t testing.TB, dir string, size int) (string, map[string]int) {
	t.Helper()
	var b strings.Builder
	prefs := map[string]int{}
	line := 0
	write := func(s string) {
		b.WriteString(s)
		line++
	}
	filler := strings.Repeat("the quick brown fox jumps over the lazy dog ", 8)
	for i := 0; b.Len() < size; i++ {
		text := fmt.Sprintf("Step %d: please look at module %d and %s", i, i%37, filler[:120])
		if i%97 == 0 {
			pref := fmt.Sprintf("I prefer option-%d for module %d", i, i%37)
			text = pref + ". Then continue."
			prefs[pref] = line + 1
		}
		write(claudeLine("user", "user", text, false))
		write(claudeLine("assistant", "assistant", []any{
			map[string]any{"type": "thinking", "thinking": filler},
			map[string]any{"type": "text", "text": "Reading the file for step " + fmt.Sprint(i)},
			map[string]any{"type": "tool_use", "id": fmt.Sprint("t", i), "name": "Read", "input": map[string]any{"file_path": fmt.Sprintf("/src/m%d.go", i%37)}},
		}, false))
		write(claudeLine("user", "user", []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprint("t", i),
			"content": strings.Repeat(fmt.Sprintf("func f%d() { return %d }\n", i, i), 120)}}, false))
		if i%10 == 5 {
			write(claudeLine("assistant", "assistant", "Subagent checked module "+fmt.Sprint(i%37)+": nothing unusual.", true))
		}
	}
	p := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, prefs
}

func extractOpts(srv *fakellm.Server, path string) ExtractOptions {
	return ExtractOptions{Path: path, Completer: NewOpenAI(srv.URL+"/v1", "k", "fake"), Now: func() time.Time { return testNow }, RetryBase: time.Millisecond}
}

// TestExtractLargeTranscript: a 5 MB session is digested in chunks and
// reduced; the preferences in it are queued with their turns; a second
// run reads nothing; a grown file is read only for its new part. The
// figures go to BENCHMARKS.md.
func TestExtractLargeTranscript(t *testing.T) {
	if testing.Short() {
		t.Skip("5 MB transcript")
	}
	dir := newRepo(t, baseMemory, "")
	path, prefs := bigTranscript(t, t.TempDir(), 5<<20)
	fi, _ := os.Stat(path)
	srv := fakellm.New([]fakellm.Step{{Auto: "extract", Repeat: true}})
	defer srv.Close()
	ctx := context.Background()
	t0 := time.Now()
	// Each run stops at extract.max_calls (40) and keeps its chunk
	// digests; the next goes on from them, paying for none again.
	var rep *ExtractReport
	var total Usage
	runs := 0
	for {
		var err error
		rep, err = ExtractTranscript(ctx, open(t, dir), extractOpts(srv, path))
		runs++
		total.Calls += rep.Usage.Calls
		total.PromptTokens += rep.Usage.PromptTokens
		total.CompletionTokens += rep.Usage.CompletionTokens
		if err == nil {
			break
		}
		if !errors.Is(err, ErrExtractCap) || rep.Usage.Calls == 0 || runs > 10 {
			t.Fatalf("run %d: %v (%d calls)", runs, err, rep.Usage.Calls)
		}
	}
	rep.Usage = total
	el := time.Since(t0)
	t.Logf("transcript %d bytes (~%d tokens at 4 bytes/token), %d turns: %d runs, %d LLM calls, %d prompt + %d completion tokens (%.1f%% of the transcript), %v",
		fi.Size(), fi.Size()/4, rep.Turns, runs, rep.Usage.Calls, rep.Usage.PromptTokens, rep.Usage.CompletionTokens, 100*float64(rep.Usage.PromptTokens)/float64(fi.Size()/4), el.Round(time.Millisecond))
	if runs < 2 || total.Calls != srv.Calls() {
		t.Errorf("%d runs, %d calls counted, %d made: the cap of 40 calls must split the work", runs, total.Calls, srv.Calls())
	}
	if rep.Usage.Calls < 3 {
		t.Errorf("%d LLM calls: a 5 MB transcript must be chunked", rep.Usage.Calls)
	}
	// Every call fits the model: no prompt beyond the chunk size and the
	// prompt's own text.
	for i, r := range srv.Requests() {
		if n := len(r.System) + len(r.User); n > 4*DefaultChunkTokens+maxCoreBytes+8192 {
			t.Errorf("request %d is %d bytes", i, n)
		}
	}
	if rep.Usage.PromptTokens*2 > int(fi.Size()/4) {
		t.Errorf("%d prompt tokens for a transcript of ~%d tokens: the layered summary must send far less", rep.Usage.PromptTokens, fi.Size()/4)
	}
	cands, _, err := mdmem.ReadQueue(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cands {
		got[c.Content] = strings.Join(c.Refs, " ")
	}
	for pref, line := range prefs {
		want := fmt.Sprintf("session:big-1 turn:%d", line)
		if refs, ok := got[pref+"."]; !ok || refs != want {
			t.Errorf("%q: queued %v with refs %q, want refs %q", pref, ok, refs, want)
		}
	}
	if len(cands) != len(prefs) {
		t.Errorf("%d candidates queued, want %d", len(cands), len(prefs))
	}

	calls := srv.Calls()
	rep, err = ExtractTranscript(ctx, open(t, dir), extractOpts(srv, path))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.NothingNew || srv.Calls() != calls {
		t.Errorf("second run: nothing new %v, %d more calls", rep.NothingNew, srv.Calls()-calls)
	}

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(readFileAbs(t, path), "\n")
	fmt.Fprint(f, claudeLine("user", "user", "We decided to ship on Tuesdays.", false))
	f.Close()
	rep, err = ExtractTranscript(ctx, open(t, dir), extractOpts(srv, path))
	if err != nil {
		t.Fatal(err)
	}
	if rep.FromTurn != lines+1 || rep.Turns != 1 || len(rep.Queued) != 1 || srv.Calls() != calls+1 {
		t.Errorf("grown: from turn %d (want %d), %d turns, %d queued, %d calls", rep.FromTurn, lines+1, rep.Turns, len(rep.Queued), srv.Calls()-calls)
	}
}

func readFileAbs(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// echoCompleter answers every digest request with its whole input: a
// model that never shrinks anything.
type echoCompleter struct{ calls int }

func (e *echoCompleter) Complete(_ context.Context, r Request) (Response, error) {
	e.calls++
	if r.SchemaName == CandidateSchemaName {
		return Response{Text: `{"candidates": [{"category": "fact", "content": "x", "source": "tool", "scope": [], "confidence": 0.9, "turns": [999999]}]}`}, nil
	}
	b, _ := json.Marshal(map[string]string{"digest": r.User})
	return Response{Text: string(b)}, nil
}

// TestDigestEndsWithAModelThatDoesNotShrink: digests are cut to 1.5× their
// target, so the reduction ends whatever the model answers; a candidate
// citing only turns outside the transcript is dropped.
func TestDigestEndsWithAModelThatDoesNotShrink(t *testing.T) {
	var turns []transcript.Turn
	for i := 1; i <= 3000; i++ {
		turns = append(turns, transcript.Turn{N: i, Role: "user", Kind: transcript.KindText, Text: strings.Repeat(fmt.Sprintf("word%d ", i), 30)})
	}
	e := &echoCompleter{}
	x := &Extractor{Completer: e, Config: mdmem.DefaultConfig()}
	ex, err := x.Extract(context.Background(), turns, nil, "s")
	if err != nil {
		t.Fatal(err)
	}
	if e.calls > 200 {
		t.Errorf("%d calls", e.calls)
	}
	if n := estTokens(ex.DialogueDigest); n > DefaultDialogueTokens*3/2+16 {
		t.Errorf("dialogue digest of %d tokens", n)
	}
	if len(ex.Proposals) != 1 || !strings.Contains(ex.Proposals[0].Dropped, "not in this part") {
		t.Errorf("proposals %+v", ex.Proposals)
	}
}

func TestExtractAnswersFiltered(t *testing.T) {
	for _, tc := range []struct {
		name, answer, want string
	}{
		{"low confidence", `{"candidates":[{"category":"fact","content":"a","source":"tool","scope":[],"confidence":0.5,"turns":[1]}]}`, "confidence 0.50 below 0.70"},
		{"no confidence", `{"candidates":[{"category":"fact","content":"a","source":"tool","scope":[],"turns":[1]}]}`, "no confidence given"},
		{"unknown source becomes session_summary", `{"candidates":[{"category":"fact","content":"a","source":"agent","scope":["project:other"],"confidence":0.8,"turns":["1"]}]}`, "session_summary [project:app] [session:s turn:1]"},
		{"a bare list, no scope: the session's", `[{"category":"fact","content":"a","source":"inference","scope":[],"confidence":0.8,"turns":[1, 1]}]`, "inference [project:app] [session:s turn:1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := completerFunc(func(_ context.Context, r Request) (Response, error) {
				if r.SchemaName == DigestSchemaName {
					return Response{Text: `{"digest": "x"}`}, nil
				}
				return Response{Text: tc.answer}, nil
			})
			x := &Extractor{Completer: c, Config: mdmem.DefaultConfig(), MinConfidence: 0.7, Scopes: []string{"project:app"}}
			ex, err := x.Extract(context.Background(), []transcript.Turn{{N: 1, Role: "user", Kind: transcript.KindText, Text: "hello"}}, nil, "s")
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.Proposals) != 1 {
				t.Fatalf("%d proposals", len(ex.Proposals))
			}
			p := ex.Proposals[0]
			got := p.Dropped
			if got == "" {
				got = fmt.Sprintf("%s %v %v", p.Candidate.Source, p.Candidate.Scope, p.Candidate.Refs)
				if p.Candidate.Scope == nil {
					got = fmt.Sprintf("%s [] %v", p.Candidate.Source, p.Candidate.Refs)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Secrets in a transcript never reach the model, and a candidate holding
// one is dropped.
func TestExtractMasksSecrets(t *testing.T) {
	var prompts []string
	c := completerFunc(func(_ context.Context, r Request) (Response, error) {
		prompts = append(prompts, r.User)
		return Response{Text: `{"candidates":[{"category":"fact","content":"The deploy key is ghp_hktnwfrpV3tN6dK0N0K99B4lO72dQeGSG1bG","source":"tool","scope":[],"confidence":0.9,"turns":[1]}]}`}, nil
	})
	dir := newRepo(t, baseMemory, "")
	p := filepath.Join(t.TempDir(), "s.jsonl")
	line := claudeLine("user", "user", []any{map[string]any{"type": "tool_result", "content": "export OPENAI_API_KEY=sk-pLN86WyoJ8lLoRYHRfcVcxzWaYMw2XVnAOXupwn5l2f7P4ba"}}, false)
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := ExtractTranscript(context.Background(), open(t, dir), ExtractOptions{Path: p, Completer: c, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range prompts {
		if strings.Contains(pr, "sk-pLN86") {
			t.Errorf("the key reached the model:\n%s", pr)
		}
	}
	if len(prompts) == 0 || !strings.Contains(strings.Join(prompts, ""), "[REDACTED:openai-key]") {
		t.Errorf("prompts %q", prompts)
	}
	if len(rep.Queued) != 0 || len(rep.Proposals) != 1 || !strings.Contains(rep.Proposals[0].Dropped, "holds a secret (github-token") {
		t.Errorf("queued %v, proposals %+v", rep.Queued, rep.Proposals[0])
	}
}

// Every kind of secret of redact's corpus is masked before text reaches
// the model.
func TestMaskSecretsEveryKind(t *testing.T) {
	b, err := os.ReadFile("../mdmem/redact/testdata/positives.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		kind, text, ok := strings.Cut(line, "\t")
		if !ok || strings.HasPrefix(kind, "#") {
			continue
		}
		n++
		if got := maskSecrets("x " + text + " y"); !strings.Contains(got, "[REDACTED:") {
			t.Errorf("%s not masked: %q", kind, got)
		}
	}
	if n < 50 {
		t.Fatalf("only %d samples read", n)
	}
}

// TestExtractSessionNamedAfterAFileKeepsItsCandidates: a session named
// after its file ("chat (1), copy") is cited in refs with the characters
// an entry's trailer cannot hold replaced; its candidates pass Normalize,
// which refuses such refs, instead of every one being dropped.
func TestExtractSessionNamedAfterAFileKeepsItsCandidates(t *testing.T) {
	c := completerFunc(func(_ context.Context, r Request) (Response, error) {
		if r.SchemaName == DigestSchemaName {
			return Response{Text: `{"digest": "x"}`}, nil
		}
		return Response{Text: `{"candidates":[{"category":"fact","content":"The build uses Bazel","source":"tool","scope":[],"confidence":0.9,"turns":[1]}]}`}, nil
	})
	x := &Extractor{Completer: c, Config: mdmem.DefaultConfig(), MinConfidence: 0.7}
	ex, err := x.Extract(context.Background(), []transcript.Turn{{N: 1, Role: "user", Kind: transcript.KindText, Text: "we build with bazel"}}, nil, "chat (1), copy")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Proposals) != 1 || ex.Proposals[0].Dropped != "" {
		t.Fatalf("proposals %+v", ex.Proposals)
	}
	cand := ex.Proposals[0].Candidate
	if err := cand.Normalize(testNow, 4096, nil); err != nil {
		t.Fatalf("the candidate of a session named after its file is refused: %v", err)
	}
	if got := strings.Join(cand.Refs, " "); got != "session:chat [1]; copy turn:1" {
		t.Errorf("refs %q", got)
	}
}
