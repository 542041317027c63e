package mdmem

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// plainLines are JSON lines near decodePlain's form: its keys and others,
// strings with and without escapes, other values, white space, repeats,
// text after the object, broken UTF-8.
func plainLines() []string {
	lines := []string{
		`{"content": "a", "category": "note", "topic": "t", "source": "bench"}`,
		`{}`, `{"content":"a"}`, ` {"content":"a"} `, "{\"content\":\"a\"}\t\r\n", `{"content":"a"}x`,
		`{"content":"a"}{"content":"b"}`, `{"content":"a","content":"b"}`, `{"Content":"a"}`,
		`{"content":"a\"b"}`, `{"content":"a\u0041"}`, "{\"content\":\"a\tb\"}", `{"content":null}`,
		`{"content":"a",}`, `{"content":"a"`, `{"content" "a"}`, `{"id":"x"}`, `{"seen":"typed"}`,
		`{"content":"é ünï \u2028"}`, "{\"content\":\"\xff\"}", `{"content":"a"}` + "\u00a0",
		`{"content":"","category":""}`, `{"content":"a", "tags":"x"}`, `{"content":1}`, `["content"]`,
		`{"content":"a"} ,`, `{ "content" : "a" , "topic" : "b" }`,
	}
	pieces := []string{`{`, `}`, `"content"`, `"category"`, `"source"`, `"topic"`, `"tags"`, `"id"`, `:`, `,`,
		` `, "\t", "\n", `"plain text"`, `"with \"escape\""`, `"é"`, `"\u0041"`, `null`, `1`, `[]`, `"`, `\`, "\x01", "\xc3"}
	rng := rand.New(rand.NewPCG(25, 4))
	for range 20000 {
		var b strings.Builder
		if rng.IntN(2) == 0 { // objects, mostly of decodePlain's form
			ws := func() string { return []string{"", " ", "\t", "\n", "  "}[rng.IntN(5)] }
			keys := []string{`"content"`, `"category"`, `"source"`, `"topic"`}
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteString(ws() + "{")
			for k := range 1 + rng.IntN(4) {
				if k > 0 {
					b.WriteString(ws() + "," + ws())
				}
				key := keys[k]
				if rng.IntN(10) == 0 {
					key = pieces[2+rng.IntN(6)] // a repeat or another field
				}
				val := `"plain text ` + strings.Repeat("é", rng.IntN(3)) + `"`
				if rng.IntN(10) == 0 {
					val = pieces[13+rng.IntN(7)]
				}
				b.WriteString(key + ws() + ":" + ws() + val)
			}
			b.WriteString(ws() + "}" + ws())
		} else {
			for range rng.IntN(12) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		}
		lines = append(lines, b.String())
	}
	return lines
}

func TestDecodePlainGivesWhatDecodeStrictGives(t *testing.T) {
	plain := 0
	for _, line := range plainLines() {
		fast := &Candidate{}
		if !decodePlain([]byte(line), fast) {
			if !reflect.DeepEqual(fast, &Candidate{}) {
				t.Fatalf("%q: decodePlain declined the line but changed the candidate: %#v", line, fast)
			}
			continue
		}
		plain++
		full := &Candidate{}
		if err := decodeStrict([]byte(line), &inputCandidate{Candidate: full}); err != nil {
			t.Fatalf("%q: decodePlain took a line decodeStrict refuses: %v", line, err)
		}
		if !reflect.DeepEqual(fast, full) {
			t.Fatalf("%q:\ndecodePlain  %#v\ndecodeStrict %#v", line, fast, full)
		}
	}
	if plain < 2000 {
		t.Fatalf("decodePlain took only %d lines: the test does not exercise it", plain)
	}
}
