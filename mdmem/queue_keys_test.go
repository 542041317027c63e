package mdmem

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// BenchmarkDecodeJSONLines measures the strict JSON Lines reader that
// import and add --json use, per line of a typical candidate.
func BenchmarkDecodeJSONLines(b *testing.B) {
	var in bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&in, `{"content":"The report service %d caches results for 30 minutes","category":"fact","source":"user_explicit","refs":["session:2026-01-08"],"tags":["cache","report"]}`+"\n", i)
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		err := DecodeJSONLines(bytes.NewReader(data), 1<<20, func(_ int, _ *Candidate, err error) error { return err })
		if err != nil {
			b.Fatal(err)
		}
	}
}

// tokenKeys is topLevelKeys the slow way, through encoding/json's tokens.
func tokenKeys(data []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return keys, true
}

func TestTopLevelKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`{}`, nil, true},
		{` { "a" : 1 , "b":"x,}" }`, []string{"a", "b"}, true},
		{`{"a":{"b":[1,{"c":"]"}]},"d":null,"e":[],"f":{}}`, []string{"a", "d", "e", "f"}, true},
		{`{"\u0063ontent":"x","con\"tent":"\\"}`, []string{"content", `con"tent`}, true},
		{`{"a":1,"a":2}`, []string{"a", "a"}, true},
		{"{\"a\":true\n,\t\"B\":false}", []string{"a", "B"}, true},
		{`[{"a":1}]`, nil, false},
		{`"{\"a\":1}"`, nil, false},
	}
	for _, tt := range tests {
		got, ok := topLevelKeys([]byte(tt.in))
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("topLevelKeys(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if tok, tokOK := tokenKeys([]byte(tt.in)); tokOK != ok || !slices.Equal(tok, got) {
			t.Errorf("topLevelKeys(%s) = %q, %v; encoding/json reads %q, %v", tt.in, got, ok, tok, tokOK)
		}
	}
}

// FuzzTopLevelKeys checks the key scanner against encoding/json on every
// valid JSON value.
func FuzzTopLevelKeys(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[{"c":"}"}]}`, `{"\u00e9":"\"","x":{"y":{}}}`, `[1]`, `"s"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := topLevelKeys(data)
		want, wantOK := tokenKeys(data)
		if ok != wantOK || !slices.Equal(got, want) {
			t.Fatalf("topLevelKeys(%q) = %q, %v; encoding/json reads %q, %v", data, got, ok, want, wantOK)
		}
	})
}
