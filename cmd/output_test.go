package cmd

import (
	"strings"
	"testing"

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
