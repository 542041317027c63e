package mdmem

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSplitIDForms pins which strings are ids: the numbered form, and the
// random form of 6 or 7 letters from RandomIDLetters only, which has no
// number (-1) so it never raises a high-water mark.
func TestSplitIDForms(t *testing.T) {
	tests := []struct {
		id     string
		prefix string
		n      int
		ok     bool
	}{
		{"dec-014", "dec", 14, true},
		{"pref-1", "pref", 1, true},
		{"fact-999999999", "fact", 999999999, true},
		{"fact-1000000000", "", 0, false},
		{"dec-kqxzbt", "dec", -1, true},
		{"dec-kqxzbtm", "dec", -1, true},
		{"dec-kqxzb", "", 0, false},     // too short
		{"dec-kqxzbtmn", "", 0, false},  // longer than any allocation
		{"dec-kqxzba", "", 0, false},    // a vowel
		{"dec-kqxzby", "", 0, false},    // y is not a letter of ids
		{"dec-KQXZBT", "", 0, false},    // upper case
		{"dec-kq1zbt", "", 0, false},    // a digit among letters
		{"see-strengths", "", 0, false}, // a word: vowels
		{"my_note2-bcdfgh", "my_note2", -1, true},
	}
	for _, tt := range tests {
		p, n, ok := splitID(tt.id)
		if p != tt.prefix || n != tt.n || ok != tt.ok {
			t.Errorf("splitID(%q) = %q, %d, %v; want %q, %d, %v", tt.id, p, n, ok, tt.prefix, tt.n, tt.ok)
		}
		if IsValidID(tt.id) != tt.ok {
			t.Errorf("IsValidID(%q) = %v", tt.id, !tt.ok)
		}
		if IsRandomID(tt.id) != (tt.ok && tt.n < 0) {
			t.Errorf("IsRandomID(%q) = %v", tt.id, !(tt.ok && tt.n < 0))
		}
	}
}

// TestParseEntryWithRandomID: an entry written with a random id is read
// with that id and the category its prefix names.
func TestParseEntryWithRandomID(t *testing.T) {
	d := ParseDoc("topics/x.md", []byte("# X\n\n- [fact-kqxzbt] Production MySQL is 5.7 (ops · 2025-11-02)\n- [dec-014] Old form (ops)\n"))
	if len(d.Entries) != 2 || d.Entries[0].ID != "fact-kqxzbt" || d.Entries[0].Category != "fact" || d.Entries[0].Content != "Production MySQL is 5.7" {
		t.Fatalf("entries %+v", d.Entries)
	}
	if d.Entries[1].ID != "dec-014" {
		t.Errorf("old form id %q", d.Entries[1].ID)
	}
}

// TestDerivedIDIsDeterministicAndRandomForm: the merge's ids are the same
// on every machine for the same seed, differ for another seed, and are of
// the random form.
func TestDerivedIDIsDeterministicAndRandomForm(t *testing.T) {
	a, b := DerivedID("dec", []byte("dec-015\x00text one")), DerivedID("dec", []byte("dec-015\x00text one"))
	c := DerivedID("dec", []byte("dec-015\x00text two"))
	if a != b {
		t.Errorf("same seed, ids %s and %s", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same id %s", a)
	}
	for _, id := range []string{a, c} {
		if !IsRandomID(id) || !strings.HasPrefix(id, "dec-") || len(id) != len("dec-")+MinRandomIDLetters {
			t.Errorf("%s is not a 6-letter random id", id)
		}
	}
	// Pinned: a change of the derivation would make two versions of
	// memctl disagree on the id a merge gives.
	if got := DerivedID("fact", []byte("seed")); got != pinnedDerived {
		t.Errorf("DerivedID(fact, seed) = %s, want %s", got, pinnedDerived)
	}
}

const pinnedDerived = "fact-jkrpwf"

// TestNewRandomIDDrawsAgainAndExtends: a taken id is drawn again; when
// every 6-letter draw is taken the id gets a seventh letter; when every
// draw is taken the allocation fails instead of reusing an id.
func TestNewRandomIDDrawsAgainAndExtends(t *testing.T) {
	seq := func(bs ...byte) letterSource {
		i := 0
		return letterSource{next: func() (byte, error) { b := bs[i%len(bs)]; i++; return b, nil }}
	}
	// Bytes 0 → "b", 1 → "c"; 250 is above the uniform limit and skipped.
	id, err := newRandomID("dec", func(string) bool { return false }, seq(250, 0, 1, 0, 1, 0, 1))
	if err != nil || id != "dec-bcbcbc" {
		t.Errorf("first draw = %q, %v; want dec-bcbcbc", id, err)
	}
	draws := 0
	id, err = newRandomID("dec", func(id string) bool { draws++; return len(id) == len("dec-")+6 }, seq(0))
	if err != nil || id != "dec-bbbbbbb" || draws != randomDraws+1 {
		t.Errorf("after %d taken draws: %q, %v; want dec-bbbbbbb after %d", draws, id, err, randomDraws+1)
	}
	if _, err := newRandomID("dec", func(string) bool { return true }, seq(3)); err == nil {
		t.Error("every id taken: no error")
	}
	// crypto/rand: the real source gives valid, distinct ids.
	seen := map[string]bool{}
	for range 200 {
		id, err := NewRandomID("pref", func(id string) bool { return seen[id] })
		if err != nil || !IsRandomID(id) || seen[id] {
			t.Fatalf("NewRandomID = %q, %v", id, err)
		}
		seen[id] = true
	}
}

// TestIDRangeTrailersKeepRandomIDsApart: a random id never joins a range
// of numbered ids, and TrailerNames never finds it inside one.
func TestIDRangeTrailersKeepRandomIDsApart(t *testing.T) {
	got := idRangeTrailers(slices.Values([]string{"dec-000", "dec-kqxzbt", "dec-001", "dec-002"}))
	var vals []string
	for _, kv := range got {
		vals = append(vals, kv[1])
	}
	if strings.Join(vals, " ") != "dec-kqxzbt dec-000..dec-002" {
		t.Errorf("trailers %v", vals)
	}
	if TrailerNames("dec-000..dec-002", "dec-kqxzbt") {
		t.Error("a random id inside a numbered range")
	}
}

// TestRandomIDAllocationAvoidsEveryKnownID: with [git] ids = "random",
// the allocator hands out random ids that are not in the memory, not in
// the tombstones and not in the local marks, and leaves state.json alone;
// without it, ids are numbered as before.
func TestRandomIDAllocationAvoidsEveryKnownID(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	writeFile(t, s.Dir, MainFile, "# Core profile\n## Key decisions\n- [dec-003] Old (x)\n- [dec-kqxzbt] New (x)\n")
	writeFile(t, s.Dir, TombstonesPath, `{"id":"dec-bbbbbb","date":"2026-01-01","hash":"00","key":"k"}`+"\n")
	writeFile(t, s.Dir, IDMarksPath, `{"last_id":{"dec":9},"random":["dec-cccccc"]}`+"\n")
	mem, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := NewIDAllocator(st.Clone(), mem).Next("decision"); id != "dec-010" {
		t.Errorf("counter ids: got %s, want dec-010", id)
	}
	s.Config.Git.IDs = IDsRandom
	st, err = s.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	a := NewIDAllocator(st, mem)
	for _, id := range []string{"dec-kqxzbt", "dec-bbbbbb", "dec-cccccc"} {
		if !a.taken[id] {
			t.Errorf("%s is not avoided", id)
		}
	}
	id, err := a.Next("decision")
	if err != nil || !IsRandomID(id) || !strings.HasPrefix(id, "dec-") {
		t.Fatalf("random allocation = %q, %v", id, err)
	}
	if _, dirty := a.StateFile(); dirty {
		t.Error("a random id changed state.json")
	}
	if st.LastID["dec"] != 9 {
		t.Errorf("high-water mark %d, want 9", st.LastID["dec"])
	}
}

func writeFile(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := dir + "/" + rel
	if err := os.MkdirAll(p[:strings.LastIndexByte(p, '/')], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDuplicateRenumberedToARandomID: with [git] ids = "random", the
// hand-edit follow-up gives a copied line a random id, not a number, and
// leaves state.json alone.
func TestDuplicateRenumberedToARandomID(t *testing.T) {
	s := handEditStore(t)
	s.Config.Git.IDs = IDsRandom
	before := readOrAbsent(t, s, StatePath)
	writeRel(t, s, "topics/db.md", baseDB+"- [pref-002] Prefers short answers, copied\n")
	he := commitHandEdits(t, s)
	if len(he.Renumbered) != 1 || he.Renumbered[0].From != "pref-002" || !IsRandomID(he.Renumbered[0].To) || !strings.HasPrefix(he.Renumbered[0].To, "pref-") {
		t.Fatalf("Renumbered = %+v", he.Renumbered)
	}
	if got := readOrAbsent(t, s, StatePath); got != before {
		t.Errorf("state.json changed:\n%s\nwas\n%s", got, before)
	}
}

// TestSeedLocalMarksReadsRandomIDsAndRanges: the local marks a fresh
// clone seeds from the history hold the random ids the trailers name and
// the top of each numbered range.
func TestSeedLocalMarksReadsRandomIDsAndRanges(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	_, err := s.Write(ctx, map[string][]byte{"topics/x.md": []byte("# X\n")}, CommitMessage{Subject: "test", Op: "test", Entries: []string{"fact-kqxzbt"},
		Extra: [][2]string{{TrailerEntry, "fact-001..fact-250"}}})
	must(t, err)
	must(t, os.Remove(s.abs(IDMarksPath)))
	unlock, err := s.Lock(ctx)
	must(t, err)
	must(t, unlock())
	m := s.localMarks()
	if m.LastID["fact"] != 250 || len(m.Random) != 1 || m.Random[0] != "fact-kqxzbt" {
		t.Errorf("seeded marks %+v", m)
	}
}

// TestIDListGivesBackEveryID: the packed id list of an import gives back
// each id as added, numbered (any width of number), random or other,
// and the trailers of a sequence are those of the ids as strings.
func TestIDListGivesBackEveryID(t *testing.T) {
	ids := []string{"fact-001", "fact-002", "note-1000", "dec-kqxzbt", "fact-0003", "x", "pref-999999999", "fact-004", "note-007", "fact-000"}
	var l idList
	for _, id := range ids {
		l.add(id)
	}
	if got := l.strings(); !slices.Equal(got, ids) {
		t.Fatalf("ids back: %q, want %q", got, ids)
	}
	got := idRangeTrailers(l.all())
	var vals []string
	for _, kv := range got {
		vals = append(vals, kv[1])
	}
	want := []string{"dec-kqxzbt", "fact-000..fact-004", "note-007", "note-1000", "pref-999999999"}
	if !slices.Equal(vals, want) {
		t.Errorf("trailers %q, want %q", vals, want)
	}
}
