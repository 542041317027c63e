package mdmem

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCarryChecksMovesOnlyMarkersThatNameTheBase: after a commit made on
// base, the hand-edit follow-up's marker moves to it when it named base,
// and retention's when it named base on the same day and no written
// entry is due; a marker naming another commit, another day, or a
// written entry past its expiry stays, so the next run checks in full.
func TestCarryChecksMovesOnlyMarkersThatNameTheBase(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	day := "2026-12-05"
	cases := []struct {
		name                        string
		handEdit, retention         func(base string) string // marker contents before
		topic                       string                   // written content of topics/t.md
		wantHandEdit, wantRetention bool                     // moved to the new commit
	}{
		{"both name the base", func(b string) string { return b }, func(b string) string { return b + " " + day + " 30" },
			"# T\n- [fact-001] Redis 7 runs the cache (agent · 2026-12-05)\n", true, true},
		{"a written entry is due", func(b string) string { return b }, func(b string) string { return b + " " + day + " 30" },
			"# T\n- [fact-001] Staging is frozen (agent · 2026-12-01 · expires 2026-12-04)\n", true, false},
		{"retention checked another day", func(b string) string { return b }, func(b string) string { return b + " 2026-12-04 30" },
			"# T\n- [fact-001] Redis 7 runs the cache (agent · 2026-12-05)\n", true, false},
		{"markers name another commit", func(string) string { return "0123456789abcdef0123456789abcdef01234567" },
			func(string) string { return "0123456789abcdef0123456789abcdef01234567 " + day + " 30" },
			"# T\n- [fact-001] Redis 7 runs the cache (agent · 2026-12-05)\n", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			s.Config.Consolidate.ArchiveDays = 30
			base, err := s.Repo.HeadHash(ctx)
			must(t, err)
			must(t, EnsureDir(s.Dir, CacheDir))
			he, ret := c.handEdit(base), c.retention(base)
			must(t, os.WriteFile(s.abs(handEditCheckedPath), []byte(he+"\n"), 0o600))
			must(t, os.WriteFile(s.abs(retentionCheckedPath), []byte(ret+"\n"), 0o600))
			files := map[string][]byte{"topics/t.md": []byte(c.topic)}
			commit, err := s.Write(ctx, files, CommitMessage{Subject: "consolidate"})
			must(t, err)
			s.CarryChecks(ctx, base, commit, files, now)
			read := func(p string) string { b, _ := os.ReadFile(s.abs(p)); return strings.TrimSpace(string(b)) }
			want := func(moved bool, old, new string) string {
				if moved {
					return new
				}
				return old
			}
			if got, w := read(handEditCheckedPath), want(c.wantHandEdit, he, commit); got != w {
				t.Errorf("hand-edit marker %q, want %q", got, w)
			}
			if got, w := read(retentionCheckedPath), want(c.wantRetention, ret, fmt.Sprintf("%s %s 30", commit, day)); got != w {
				t.Errorf("retention marker %q, want %q", got, w)
			}
		})
	}
}
