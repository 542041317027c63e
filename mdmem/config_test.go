package mdmem

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/memctl/memctl/templates"
)

// TestConfigTemplateMatchesDefaults: the config.toml init writes documents
// exactly the built-in defaults, and sets every setting there is.
func TestConfigTemplateMatchesDefaults(t *testing.T) {
	var fromTemplate Config
	md, err := toml.Decode(templates.Embedded("config.toml"), &fromTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("template sets unknown keys %v", und)
	}
	if def := DefaultConfig(); !reflect.DeepEqual(&fromTemplate, def) {
		t.Errorf("template and defaults differ:\ntemplate %+v\ndefaults %+v", fromTemplate, *def)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := map[string]string{
		"[inject]\nbudgt = 5\n":               `unknown setting "inject.budgt"`,
		"[inject]\nbudget = -1\n":             "inject.budget = -1: must be positive",
		"[git]\nlock_wait = \"soon\"\n":       "invalid duration",
		"[consolidate]\nbatch_size = 0\n":     "batch_size",
		"not toml at all = = =\n":             "config.toml",
		"[add]\nmax_content_bytes = 0\n":      "max_content_bytes must be between 1 and 262144",
		"[llm]\nmodel = \"gpt-4o-mini\"\n":    "",
		"[inject]\nl2_reserve = 1.5\n":        "l2_reserve",
		"[consolidate]\nnear_duplicate = 2\n": "near_duplicate",
		"[consolidate]\nbatch_tokens = -1\n":  "consolidate.batch_tokens = -1",
		"[llm]\nparallel = 0\n":               "llm.parallel = 0: must be in 1..32",
		"[llm]\nparallel = 33\n":              "llm.parallel = 33",
	}
	for text, want := range tests {
		dir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, ".memctl"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ConfigPath), []byte(text), 0o644))
		cfg, err := LoadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ps := cfg.Problems(); len(ps) > 0 {
			err = ps[0]
		}
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}
