package cmd

import (
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
