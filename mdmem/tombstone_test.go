package mdmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tombstoneStore returns a new memory with n tombstones of "fact n" texts
// (their public hashes made cheap: the cost is not what these tests are
// about).
func tombstoneStore(t testing.TB, n int) *Store {
	t.Helper()
	defer func(n int) { newPublicHashIterations = n }(newPublicHashIterations)
	newPublicHashIterations = 100
	s, _, err := Init(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.LoadTombstones()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ensureKey(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	ents := make([]*Entry, n)
	for i := range ents {
		ents[i] = &Entry{ID: FormatID("fact", i+1), Content: fmt.Sprintf("Forgotten fact number %d", i)}
	}
	if err := os.WriteFile(filepath.Join(s.Dir, TombstonesPath), ts.add(nil, ents, "2026-12-02"), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTombstones(t *testing.T) {
	s := tombstoneStore(t, 3)
	ts, err := s.LoadTombstones()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		id   string
	}{
		{"Forgotten fact number 1", "fact-002"},
		{"  forgotten FACT number\u200b 1.", "fact-002"},
		{"Forgotten fact number 11", ""},
		{"Forgotten fact number", ""},
	} {
		err := ts.Check(tc.text)
		var fe *ForgottenError
		if got := errors.As(err, &fe); got != (tc.id != "") || got && fe.Tombstone.ID != tc.id {
			t.Errorf("Check(%q) = %v, want forgotten %q", tc.text, err, tc.id)
		}
	}
	data, _ := os.ReadFile(filepath.Join(s.Dir, TombstonesPath))
	if string(data) == "" || strings.Contains(string(data), "Forgotten") || strings.Contains(string(data), "number") {
		t.Errorf("tombstones hold the text or nothing:\n%s", data)
	}
	// another key, or none (a plain clone): exact repeats are still refused,
	// by the public hash; near repeats need the key
	for _, key := range []string{"another key of 32 bytes, really!", ""} {
		if key == "" {
			if err := os.Remove(s.tombstoneKeyPath()); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(s.tombstoneKeyPath(), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		ts, err := s.LoadTombstones()
		if err != nil {
			t.Fatalf("LoadTombstones with key %q: %v", key, err)
		}
		for text, want := range map[string]string{
			"Forgotten fact number 1":        "fact-002",
			"Note: FORGOTTEN fact number 1!": "fact-002",
			"Forgotten fact number 11":       "",
		} {
			got, ok := ts.Match(text)
			if ok != (want != "") || ok && got.ID != want {
				t.Errorf("key %q: Match(%q) = %v %v, want %q", key, text, got.ID, ok, want)
			}
		}
	}
}

// TestTombstonesWithoutPublicHashNeedTheKey: tombstones written before
// the public hash cannot be checked without their key, and say so.
func TestTombstonesWithoutPublicHashNeedTheKey(t *testing.T) {
	s := tombstoneStore(t, 2)
	p := filepath.Join(s.Dir, TombstonesPath)
	data, _ := os.ReadFile(p)
	old := regexp.MustCompile(`,"phash":"[^"]*"`).ReplaceAll(data, nil)
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadTombstones(); err != nil {
		t.Fatalf("with the key: %v", err)
	}
	if err := os.Remove(s.tombstoneKeyPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadTombstones(); !errors.Is(err, ErrTombstoneKey) {
		t.Errorf("old tombstones without the key: %v, want ErrTombstoneKey", err)
	}
}

// BenchmarkAddCheck measures what the tombstone check adds to add's own
// work on a candidate (Normalize), with 1000 tombstones.
func BenchmarkAddCheck(b *testing.B) {
	s := tombstoneStore(b, 1000)
	now := time.Now()
	b.Run("normalize", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := &Candidate{Content: "Order cache is Redis plus a local cache", Category: "decision"}
			if err := c.Normalize(now, 4096, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("normalize+tombstones", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := &Candidate{Content: "Order cache is Redis plus a local cache", Category: "decision"}
			if err := c.Normalize(now, 4096, nil); err != nil {
				b.Fatal(err)
			}
			errs, err := s.CheckForgotten([]*Candidate{c})
			if err != nil || errs[0] != nil {
				b.Fatal(err, errs)
			}
		}
	})
}

// TestTombstoneMatchesWhatSaysTheSame: a forgotten text comes back neither
// under a label, with a look-alike letter, in other case or punctuation,
// nor with a word or two changed; a different fact of the same words does
// not match, nor does a tombstone's hash of the old normalisation fail.
func TestTombstoneMatchesWhatSaysTheSame(t *testing.T) {
	s, _, err := Init(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.LoadTombstones()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ensureKey(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	data := ts.add(nil, []*Entry{{ID: "fact-001", Content: "Alex lives at 12 Harbour Road, Leith"}}, "2026-12-02")
	legacy := fmt.Sprintf(`{"id":"fact-002","date":"2026-01-01","hash":%q,"key":%q}`+"\n", ts.mac(legacyNormalizeForget("The door code is 4711")), ts.keyID)
	if err := os.WriteFile(filepath.Join(s.Dir, TombstonesPath), append(data, legacy...), 0o644); err != nil {
		t.Fatal(err)
	}
	if ts, err = s.LoadTombstones(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Alex lives at 12 Harbour Road, Leith", true},
		{"Note: Alex lives at 12 Harbour Road, Leith", true},
		{"FYI - alex LIVES at 12 harbour road; leith!", true},
		{"Alex lives at 12 Harbour Rоad, Leith", true}, // Cyrillic о
		{"Alex l\u200bives at 12 Harbour Road, Leith", true},
		{"Alex now lives at 12 Harbour Road in Leith", true},
		{"the door code is 4711.", true}, // a tombstone of the old normalisation
		{"Alex works at the harbour office", false},
		{"Leith", false},
		{"Sam lives at 3 Mill Lane, Perth", false},
		{"Alex lives at 14 Harbour Road, Leith", false}, // another number: another fact
		{"Alex lives at 12 Harbour Road, Perth", false}, // another place
	} {
		if _, got := ts.Match(tc.text); got != tc.want {
			t.Errorf("Match(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestPublicHashIsSlowSaltedAndKeyless pins the public hash: the line
// records its scheme, count and salt; the salt is the key's (one per
// key), not the text; another text or salt gives another hash.
func TestPublicHashIsSlowSaltedAndKeyless(t *testing.T) {
	a := &Tombstones{key: []byte("key one of thirty-two bytes long")}
	b := &Tombstones{key: []byte("key two of thirty-two bytes long")}
	ha := publicHash("alex lives at 12 harbour road leith", a.salt(), 1000)
	params, salt, iter, sum, ok := publicParams(ha)
	if !ok || iter != 1000 || string(salt) != string(a.salt()) || len(sum) != 64 || !strings.HasPrefix(params, "pbkdf2-sha256$1000$") {
		t.Fatalf("publicParams(%q) = %q %x %d %q %v", ha, params, salt, iter, sum, ok)
	}
	if string(a.salt()) == string(b.salt()) {
		t.Error("two keys, one salt")
	}
	for _, other := range []string{
		publicHash("alex lives at 12 harbour road leith", b.salt(), 1000),
		publicHash("alex lives at 14 harbour road leith", a.salt(), 1000),
		publicHash("alex lives at 12 harbour road leith", a.salt(), 1001),
	} {
		if other == ha {
			t.Errorf("%s repeats %s", other, ha)
		}
	}
	var c Tombstones
	if !c.publicMatch("alex lives at 12 harbour road leith", ha) || c.publicMatch("alex", ha) {
		t.Error("publicMatch does not tell the text")
	}
	for _, bad := range []string{"", "sha1$1000$00$00", "pbkdf2-sha256$0$0011223344556677$" + sum, "pbkdf2-sha256$999999999$0011223344556677$" + sum, "pbkdf2-sha256$1000$00$" + sum, "pbkdf2-sha256$1000$0011223344556677$" + sum} {
		if _, _, _, _, ok := publicParams(bad); ok {
			t.Errorf("publicParams(%q) accepted", bad)
		}
	}
}

// BenchmarkKeylessCheck measures the check of one new text in a copy
// without the key (a plain clone): one public hash per distinct salt at
// the real cost, against the same check where the key is.
func BenchmarkKeylessCheck(b *testing.B) {
	s, _, err := Init(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ts, err := s.LoadTombstones()
	if err != nil {
		b.Fatal(err)
	}
	if err := s.ensureKey(context.Background(), ts); err != nil {
		b.Fatal(err)
	}
	ents := make([]*Entry, 20)
	for i := range ents {
		ents[i] = &Entry{ID: FormatID("fact", i+1), Content: fmt.Sprintf("Forgotten fact number %d", i)}
	}
	if err := os.WriteFile(filepath.Join(s.Dir, TombstonesPath), ts.add(nil, ents, "2026-12-02"), 0o644); err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B) {
		ts, err := s.LoadTombstones()
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if _, ok := ts.Match(fmt.Sprintf("A new text number %d", i)); ok {
				b.Fatal("matched")
			}
		}
	}
	b.Run("with-key", check)
	if err := os.Remove(s.tombstoneKeyPath()); err != nil {
		b.Fatal(err)
	}
	b.Run("without-key", check)
}

// TestTombstonesNeverExpire: a later forget, and retention's deletion of
// an old archived entry, only append to the tombstones: every earlier
// line stays byte for byte, and its text stays refused, key or not.
func TestTombstonesNeverExpire(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	s.Config.Consolidate.ArchiveDays = 30
	writeFiles(t, s, map[string][]byte{
		MainFile:      []byte("# Core profile\n## User preferences\n- [pref-001] Alex lives at 12 Harbour Road (user · 2020-01-01)\n- [pref-002] Prefers tea (user · 2026-01-01)\n\n# Archive\n- [pref-003] Old value (user · 2020-01-01 · superseded by pref-002 on 2020-02-01)\n"),
		"topics/x.md": []byte("# X\n- [fact-001] Another fact (user · 2026-01-01)\n"),
	})
	_, err := Forget(ctx, s, []string{"pref-001"}, "pii", ForgetOptions{Now: time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)})
	must(t, err)
	first := readOrAbsent(t, s, TombstonesPath)
	if _, err := Forget(ctx, s, []string{"fact-001"}, "", ForgetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyRetention(ctx, s, time.Now()); err != nil {
		t.Fatal(err)
	}
	all := readOrAbsent(t, s, TombstonesPath)
	if !strings.HasPrefix(all, first) || strings.Count(all, "\n") != 3 || !strings.Contains(all, `"id":"pref-003"`) {
		t.Fatalf("tombstones after a later forget and retention:\n%s\nfirst:\n%s", all, first)
	}
	must(t, os.Remove(s.tombstoneKeyPath()))
	ts, err := s.LoadTombstones()
	must(t, err)
	if got, ok := ts.Match("Alex lives at 12 Harbour Road"); !ok || got.ID != "pref-001" {
		t.Errorf("the first forgotten text, without the key: %v %v", got.ID, ok)
	}
}
