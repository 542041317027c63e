package inject

import (
	"context"
	"strings"
	"testing"
)

// TestInjectDeduplicatesIDs: two entries with one id (written by
// hand, not yet renumbered) never both reach the block: the first in file
// order wins, and a warning says so.
func TestInjectDeduplicatesIDs(t *testing.T) {
	main := "# Core profile\n\n## User preferences\n- [pref-002] Prefers tabs for indentation (user · 2026-01-01)\n- [pref-002] Prefers spaces for indentation (user · 2026-01-02)\n"
	topic := "# Style\n\n- [pref-002] Prefers two-space indentation in YAML (user · 2026-01-03)\n- [fact-001] YAML files use indentation (user · 2026-01-03)\n"
	tests := []struct {
		name      string
		files     map[string]string
		task      string
		wantFirst string
		warnings  int
	}{
		{"twice in the core", map[string]string{"MEMORY.md": main}, "", "Prefers tabs", 1},
		{"core and a topic file", map[string]string{"MEMORY.md": main, "topics/style.md": topic}, "indentation yaml", "Prefers tabs", 2},
		{"topic only copy is not shadowed by itself", map[string]string{"topics/style.md": topic}, "indentation yaml", "two-space", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeMem(t, tc.files)
			c, err := LoadCorpus(context.Background(), dir, false)
			if err != nil {
				t.Fatal(err)
			}
			o := baseOpts(t)
			o.Task = tc.task
			r, err := Inject(c, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(r.Block, "\npref-002 "); n != 1 {
				t.Fatalf("%d lines with [pref-002]:\n%s", n, r.Block)
			}
			if !strings.Contains(r.Block, tc.wantFirst) {
				t.Errorf("not the first occurrence:\n%s", r.Block)
			}
			var dups int
			for _, w := range r.Warnings {
				if strings.Contains(w, "duplicate id pref-002") {
					dups++
				}
			}
			if dups != tc.warnings {
				t.Errorf("warnings %q, want %d about pref-002", r.Warnings, tc.warnings)
			}
		})
	}
}
