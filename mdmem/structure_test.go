package mdmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingSections: entries land under their own heading, a
// missing subsection is created in canonical order, and a missing
// "# Core profile" is written once, however many subsections it gets.
func TestMissingSections(t *testing.T) {
	pref := &Entry{ID: "pref-009", Category: "preference", Content: "New pref"}
	cons := &Entry{ID: "cons-009", Category: "constraint", Content: "New cons"}
	dec := &Entry{ID: "dec-009", Category: "decision", Content: "New dec"}
	for _, tc := range []struct {
		name, src string
		insert    []*Entry
		want      string
	}{
		{
			name:   "constraints heading deleted, its entries left under preferences",
			src:    "# Core profile\n\n## User preferences\n- [pref-001] Old pref\n\n- [cons-001] Old cons\n\n## Key decisions\n\n# Archive\n",
			insert: []*Entry{pref, cons},
			want:   "# Core profile\n\n## User preferences\n- [pref-001] Old pref\n- [pref-009] New pref\n\n- [cons-001] Old cons\n\n## Project constraints\n- [cons-009] New cons\n\n## Key decisions\n\n# Archive\n",
		},
		{
			name:   "only misplaced entries in the section",
			src:    "# Core profile\n\n## User preferences\n- [cons-001] Old cons\n\n## Key decisions\n",
			insert: []*Entry{pref},
			want:   "# Core profile\n\n## User preferences\n- [pref-009] New pref\n- [cons-001] Old cons\n\n## Key decisions\n",
		},
		{
			name:   "core profile missing: one heading, subsections in order",
			src:    "# Topic index\n\n# Archive\n",
			insert: []*Entry{dec, pref, cons},
			want:   "# Core profile\n## User preferences\n- [pref-009] New pref\n\n## Project constraints\n- [cons-009] New cons\n\n## Key decisions\n- [dec-009] New dec\n\n# Topic index\n\n# Archive\n",
		},
		{
			name:   "core profile missing, CRLF",
			src:    "# Archive\r\n",
			insert: []*Entry{dec, pref},
			want:   "# Core profile\r\n## User preferences\r\n- [pref-009] New pref\r\n\r\n## Key decisions\r\n- [dec-009] New dec\r\n\r\n# Archive\r\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := memoryFrom(t, map[string]string{MainFile: tc.src})
			ed := m.Edit()
			for _, e := range tc.insert {
				must(t, ed.Insert(e, Target{Place: PlaceCore}))
			}
			out, err := ed.Changed()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out[MainFile]); got != tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
			if n := strings.Count(string(out[MainFile]), "# Core profile"); n != 1 {
				t.Errorf("%d core profile headings", n)
			}
			m2 := memoryFrom(t, map[string]string{MainFile: string(out[MainFile])})
			for _, e := range tc.insert {
				if got := m2.Find(e.ID); got == nil || got.Place != PlaceCore || got.Category != e.Category {
					t.Errorf("%s not in its core section: %+v", e.ID, got)
				}
			}
		})
	}
}

// TestLintRepeatedHeadings: a section or core subsection written
// twice is a lint problem.
func TestLintRepeatedHeadings(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# Core profile\n## User preferences\n# Core profile\n## Key decisions\n", `heading "Core profile" appears again (first at line 1)`},
		{"# Core profile\n## User preferences\n## Key decisions\n## User preferences\n", `heading "User preferences" appears again (first at line 2)`},
		{"# Archive\n# Archive\n", `heading "Archive" appears again`},
		{"# Core profile\n## User preferences\n## Notes\n## Notes\n# Archive\n", ""},
	} {
		m := memoryFrom(t, map[string]string{MainFile: tc.src})
		var got []string
		for _, p := range m.Lint() {
			if strings.Contains(p.Message, "appears again") {
				got = append(got, p.Message)
			}
		}
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%q: %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestConfigSections: a mistake stops only the commands that use
// its section; the section falls back to its defaults; every problem is
// listed with its line.
func TestConfigSections(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		bad        string // the section Check refuses ("" none; "warn" only a warning)
		want       string // the problem's message
		line       int
	}{
		{"type error", "[add]\nmax_content_bytes = 100\n[consolidate]\nbatch_size = \"many\"\n", "consolidate", "batch_size", 4},
		{"unknown key", "[inject]\nbudgt = 5\n", "inject", `unknown setting "inject.budgt"`, 1},
		{"invalid value", "[inject]\nbudget = -1\n", "inject", "inject.budget = -1: must be positive", 1},
		{"bad duration", "[git]\nlock_wait = \"soon\"\n", "git", "invalid duration", 2},
		{"syntax error in a section", "[add]\nmax_content_bytes = 100\n\n[llm]\nmodel = = =\n", "llm", "line 5", 5},
		{"repeated section", "[llm]\nmodel = \"a\"\n[llm]\nmodel = \"b\"\n", "llm", "[llm] appears again (first at line 1)", 3},
		{"add itself", "[add]\nmax_content_bytes = 0\n", "add", "max_content_bytes must be between 1 and 262144", 1},
		{"junk before the first section", "not toml at all = = =\n[add]\nmax_content_bytes = 100\n", "warn", "line 1", 1},
		{"unknown section", "[injct]\nbudget = 5\n", "warn", "unknown section [injct]", 1},
		{"unknown top-level key", "budget = 5\n", "warn", `unknown setting "budget"`, 1},
		{"fine", "[add]\n# [not a header]\n[llm]\nmodel = '''\n[x]\n'''\n", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(dir, ".memctl"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, ConfigPath), []byte(tc.text), 0o644))
			cfg, err := LoadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "fine" {
				for _, name := range ConfigSections {
					if err := cfg.Check(name); err != nil {
						t.Errorf("[%s]: %v", name, err)
					}
				}
				if cfg.LLM.Model != "[x]\n" || len(cfg.Problems()) != 0 {
					t.Errorf("llm.model = %q", cfg.LLM.Model)
				}
				return
			}
			ps := cfg.Problems()
			if len(ps) != 1 || !strings.Contains(ps[0].Err.Error(), tc.want) || ps[0].Line != tc.line {
				t.Fatalf("problems %v, want one with %q at line %d", ps, tc.want, tc.line)
			}
			for _, name := range ConfigSections {
				err := cfg.Check(name)
				if (name == tc.bad) != (err != nil) {
					t.Errorf("Check(%s) = %v", name, err)
				}
			}
			if tc.bad == "warn" && len(cfg.Warnings()) != 1 {
				t.Errorf("warnings %v", cfg.Warnings())
			}
			// The broken section keeps its defaults; the others their values.
			def := DefaultConfig()
			if tc.bad == "consolidate" && (cfg.Consolidate != def.Consolidate || cfg.Add.MaxContentBytes != 100) {
				t.Errorf("consolidate %+v, add %+v", cfg.Consolidate, cfg.Add)
			}
			if tc.bad == "llm" && cfg.LLM.Model != "" {
				t.Errorf("llm.model = %q, want the default", cfg.LLM.Model)
			}
		})
	}
}
