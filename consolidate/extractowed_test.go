package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// TestOwedExtracts: a transcript owed twice is listed once, with the first
// time; the list is oldest first; a dropped one leaves it.
func TestOwedExtracts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, mdmem.MarkerDir), 0o700); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, o := range []OwedExtract{
		{Path: b, Session: "sb", Since: t0.Add(time.Hour)},
		{Path: a, Session: "sa", Scopes: []string{"project:app"}, Event: "SessionEnd", Since: t0},
		{Path: b, Session: "sb", Since: t0.Add(2 * time.Hour)}, // again: keeps the first time
	} {
		if err := OweExtract(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		drop string
		want []string
	}{
		{"both, oldest first", "", []string{a, b}},
		{"a dropped", a, []string{b}},
		{"none left", b, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.drop != "" {
				if err := DropOwed(ctx, dir, tc.drop); err != nil {
					t.Fatal(err)
				}
			}
			got, err := OwedExtracts(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("owed %+v, want %v", got, tc.want)
			}
			for i, o := range got {
				if o.Path != tc.want[i] {
					t.Errorf("owed[%d] = %s, want %s", i, o.Path, tc.want[i])
				}
				if o.Path == b && !o.Since.Equal(t0.Add(time.Hour)) {
					t.Errorf("b owed since %v, want the first time", o.Since)
				}
				if o.Path == a && (o.Session != "sa" || len(o.Scopes) != 1 || o.Event != "SessionEnd") {
					t.Errorf("a's record lost fields: %+v", o)
				}
			}
		})
	}
}
