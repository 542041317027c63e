package cmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

func TestWriteJSON(t *testing.T) {
	type inner struct {
		IDs []string `json:"ids"`
	}
	type outer struct {
		List   []string       `json:"list"`
		Map    map[string]int `json:"map"`
		Inner  *inner         `json:"inner"`
		Items  []inner        `json:"items"`
		Any    any            `json:"any"`
		Bytes  []byte         `json:"bytes"`
		Hidden []string       `json:"-"`
		Text   string         `json:"text"`
	}
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"nil top-level list", []string(nil), []string{"[]\n"}},
		{"nil lists and maps, nested", outer{Inner: &inner{}, Items: []inner{{}}, Any: inner{}, Text: "a & <b>"},
			[]string{`"list": []`, `"map": {}`, `"inner": {` + "\n" + `    "ids": []`, `"items": [` + "\n" + `    {` + "\n" + `      "ids": []`,
				`"any": {` + "\n" + `    "ids": []`, `"bytes": null`, `"text": "a & <b>"`}},
		{"a pointer to a struct", &outer{}, []string{`"list": []`, `"inner": null`}},
		{"entries keep their own view, unescaped", []*mdmem.Entry{{ID: "fact-001", Content: "x & <y>"}},
			[]string{`"refs": []`, `"content": "x & <y>"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeJSON(&b, tt.v); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), `\u00`) {
				t.Errorf("output escapes HTML:\n%s", b.String())
			}
		})
	}
}

func TestTimedWriterStartsEachLineWithTheTime(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 5, 10, 12, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"one line", []string{"a\n"}, "2026-01-05T10:12:00Z a\n"},
		{"two lines in one write", []string{"a\nb\n"}, "2026-01-05T10:12:00Z a\n2026-01-05T10:12:00Z b\n"},
		{"a line in pieces", []string{"memctl: ", "error\n"}, "2026-01-05T10:12:00Z memctl: error\n"},
		{"no newline at the end", []string{"a\nb"}, "2026-01-05T10:12:00Z a\n2026-01-05T10:12:00Z b"},
		{"nothing", []string{""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			w := newTimedWriter(&b, now)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}

// TestJSONArrayMatchesWriteJSON: the streamed array prints, element by
// element, the bytes writeJSON prints for the whole slice.
func TestJSONArrayMatchesWriteJSON(t *testing.T) {
	type item struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	tests := []struct {
		name  string
		items []any
	}{
		{"no element", nil},
		{"one entry", []any{&mdmem.Entry{ID: "fact-001", Content: "x & <y>", Scope: []string{"project:a"}}}},
		{"entries", []any{&mdmem.Entry{ID: "fact-001", Content: "a"}, &mdmem.Entry{ID: "dec-002", Content: "b\tc \"q\"", HasConf: true, Confidence: 0.8}}},
		{"structs with nil lists", []any{item{Name: "a"}, item{Name: "b", Tags: []string{"t"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want strings.Builder
			whole := tt.items
			if whole == nil {
				whole = []any{}
			}
			if err := writeJSON(&want, whole); err != nil {
				t.Fatal(err)
			}
			f, out, _ := testFactory(nil, "")
			a := f.jsonArray()
			for _, it := range tt.items {
				if err := a.add(it); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want.String() {
				t.Errorf("streamed:\n%s\nwhole:\n%s", out, want.String())
			}
		})
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("no space left on device")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestJSONArrayWriteError: a write that fails midway ends the array with
// an error that says the output is cut short, and no later write is tried.
func TestJSONArrayWriteError(t *testing.T) {
	f, _, _ := testFactory(nil, "")
	w := &failingWriter{n: 100}
	f.IO.Out = w
	a := f.jsonArray()
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = a.add(&mdmem.Entry{ID: "fact-001", Content: "a line long enough to fill the writer"})
	}
	if err == nil {
		err = a.close()
	}
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("error = %v, want the write error, saying the output is cut short", err)
	}
	if a.close() == nil {
		t.Error("close after a failed write succeeded")
	}
	if !f.wroteJSON {
		t.Error("wroteJSON not set: an error document would follow half an array")
	}
}
