package transcript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTracesKeepPruneSearch(t *testing.T) {
	ctx := context.Background()
	mem := t.TempDir()
	src := filepath.Join(t.TempDir(), "s.md")
	if err := os.WriteFile(src, []byte("User: the İstanbul office opens at nine\n\nAssistant: noted the office hours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := KeepTrace(ctx, mem, src, Text, "a/b c")
	if err != nil {
		t.Fatal(err)
	}
	if rel != ".memctl/traces/text-a_b_c.md" {
		t.Errorf("kept as %s", rel)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, ".memctl", "traces", ".gitignore")); !strings.Contains(string(b), "\n*\n") {
		t.Errorf(".gitignore: %q", b)
	}
	hits, err := SearchTraces(ctx, mem, "office İSTANBUL", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Turn != 1 || hits[0].Score != 2 || hits[1].Turn != 3 || hits[1].Score != 1 {
		t.Fatalf("hits %+v", hits)
	}
	if _, err := SearchTraces(ctx, mem, " ,. ", 0); err == nil {
		t.Error("a query without words was accepted")
	}
	// retention: young traces stay, old ones go, dot files never
	now := time.Now()
	if gone, err := PruneTraces(ctx, mem, 24*time.Hour, now); err != nil || len(gone) != 0 {
		t.Fatalf("pruned %v, %v", gone, err)
	}
	gone, err := PruneTraces(ctx, mem, 24*time.Hour, now.Add(48*time.Hour))
	if err != nil || len(gone) != 1 || gone[0] != rel {
		t.Fatalf("pruned %v, %v", gone, err)
	}
	if _, err := os.Stat(filepath.Join(mem, ".memctl", "traces", ".gitignore")); err != nil {
		t.Error(".gitignore pruned")
	}
}

func TestSnippetMultibyte(t *testing.T) {
	text := strings.Repeat("İ", 100) + " needle " + strings.Repeat("ğ", 100)
	s := snippet(text, []string{"absent", "needle"})
	if !strings.Contains(s, "needle") || !strings.HasPrefix(s, "…") {
		t.Errorf("snippet %q", s)
	}
	for _, r := range s {
		if r == '\uFFFD' {
			t.Fatalf("snippet cut a rune: %q", s)
		}
	}
}
