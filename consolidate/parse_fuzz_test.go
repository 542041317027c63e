package consolidate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// fuzzBatch is a batch of three entries (ids 1..3) and three candidates
// (ids 4..6), as buildPrompt numbers them.
func fuzzBatch() *batchMap {
	bm := &batchMap{entries: map[int]*mdmem.Entry{}, cands: map[int]*mdmem.Candidate{}}
	for i := 1; i <= 3; i++ {
		bm.entries[i] = &mdmem.Entry{ID: fmt.Sprintf("dec-%03d", i), Category: "decision", Content: "entry", Raw: fmt.Sprintf("- [dec-%03d] entry", i)}
	}
	for i := 4; i <= 6; i++ {
		bm.cands[i] = &mdmem.Candidate{ID: fmt.Sprintf("c20260101T000000.00000%d-abcdef0%d", i, i), Category: "decision", Content: "cand"}
	}
	return bm
}

var parseSeeds = []string{
	`{"operations": [{"op": "add", "target": 0, "sources": [4], "text": "", "category": "", "reason": "new"}]}`,
	"Here is the plan:\n```json\n{\"operations\": [{\"op\": \"merge\", \"target\": 1, \"sources\": [\"5\"], \"text\": \"\", \"category\": \"\", \"reason\": \"dup\"}]}\n```\nDone.",
	"```\n{\"ops\": [{\"op\": \"supersede\", \"target\": \"#2\", \"sources\": [6], \"reason\": \"newer\"}]}\n```",
	`Sure! {"operations": [{"op": "compress", "target": 0, "sources": [1, 2, 4, 5], "text": "All services use Redis", "category": "decision", "reason": "same"}]} Hope this helps.`,
	`[{"op": "conflict", "target": 3, "sources": 4, "reason": "which?"}, {"op": "noop", "target": "id1", "sources": ["id6"]}]`,
	`{"operations": [{"op": "archive", "target": 1, "sources": [], "text": "", "category": "", "reason": "obsolete"}]}`,
	`{"operations": [{"op": "add", "target": 0, "sources": [4], "text": "`, // truncated
	`{"operations": [{"op": "merge", "target": 99999999999999999999999999, "sources": [4]}]}`,
	`{"operations": [{"op": "merge", "target": 1e3, "sources": [-4, 0, 4.0]}]}`,
	`{"operations": [{"op": "merge", "target": 999, "sources": [4]}]}`, // invented
	`{"operations": [{"op": "merge", "target": 5, "sources": [4]}]}`,   // candidate as target
	`{"operations": [{"op": "delete_everything", "target": 1}]}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	strings.Repeat(`{"operations":`, 5000) + "[]" + strings.Repeat("}", 5000),
	"{\"operations\": [{\"op\": \"add\", \"sources\": [4], \"text\": \"caf\xe9 \xff\xfe\"}]}",
	"\xff\xfe{\"operations\": []}\x00",
	"```json\n```json\n```",
	`{"operations": null}`,
	`{"operations": {"op": "add"}}`,
	`I'm sorry, as an AI I cannot consolidate memories today.`,
	`{"operations": [{"op": "ADD ", "target": null, "sources": null}]}`,
	`{"operations": [{"op": "compress", "sources": [1, 2, 3], "text": "x"}, {"op": "archive", "target": 2, "reason": "r"}]}`,
}

// FuzzParseAnswer: whatever the model answers, parsing never panics and
// never yields an operation naming an id outside the batch.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		bm := fuzzBatch()
		entries, cands := map[string]bool{}, map[string]bool{}
		for _, e := range bm.entries {
			entries[e.ID] = true
		}
		for _, c := range bm.cands {
			cands[c.ID] = true
		}
		ds, err := translate(answer, bm, 2, 1)
		if err != nil {
			if ds != nil {
				t.Fatalf("decisions with an error: %v", err)
			}
			return
		}
		for _, d := range ds {
			switch d.Op {
			case OpAdd, OpMerge, OpSupersede, OpArchive, OpCompress, OpConflict, OpNoop:
			default:
				t.Fatalf("accepted op %q", d.Op)
			}
			if d.Target != "" && !entries[d.Target] {
				t.Fatalf("target %q outside the batch", d.Target)
			}
			for _, c := range d.Candidates {
				if !cands[c] {
					t.Fatalf("candidate %q outside the batch", c)
				}
			}
			for _, e := range d.Entries {
				if !entries[e] || d.Op != OpCompress {
					t.Fatalf("entry source %q in a %s", e, d.Op)
				}
			}
		}
	})
}

// answerShapes are the answer shapes that make naive parsers slow.
var answerShapes = map[string]func(n int) string{
	"nesting":  func(n int) string { return strings.Repeat("[", n/2) + strings.Repeat("]", n/2) },
	"fences":   func(n int) string { return strings.Repeat("```\n", n/4) },
	"brackets": func(n int) string { return strings.Repeat("} {", n/3) },
	"quotes":   func(n int) string { return `{"operations": "` + strings.Repeat(`\"`, n/2) },
	"ops": func(n int) string {
		op := `{"op":"noop","target":1,"sources":[4,5,6]},`
		return `{"operations":[` + strings.Repeat(op, n/len(op)) + `{}]}`
	},
	"ids": func(n int) string {
		return `{"operations":[{"op":"compress","sources":[` + strings.Repeat(`"4",`, n/4) + `5],"text":"x"}]}`
	},
}

// TestParseAnswerCap: every slow shape at the size cap is handled (the
// test timeout bounds it), and an answer over the cap is refused unread.
func TestParseAnswerCap(t *testing.T) {
	bm := fuzzBatch()
	for _, gen := range answerShapes {
		_, _ = translate(gen(maxAnswerBytes-64), bm, 2, 1) // must return, not panic
	}
	huge := strings.Repeat(" ", maxAnswerBytes) + `{"operations": []}`
	if _, err := translate(huge, bm, 2, 1); err == nil {
		t.Fatal("an answer over the cap was accepted")
	}
}

// BenchmarkParseAnswer reports ns/byte for each slow shape at 1/16 and 1/2
// of the size cap: equal figures at both sizes mean linear time.
func BenchmarkParseAnswer(b *testing.B) {
	bm := fuzzBatch()
	for name, gen := range answerShapes {
		for _, n := range []int{maxAnswerBytes / 16, maxAnswerBytes / 2} {
			in := gen(n)
			b.Run(fmt.Sprintf("%s/%dKiB", name, n>>10), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					_, _ = translate(in, bm, 2, 1)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/byte")
			})
		}
	}
}
