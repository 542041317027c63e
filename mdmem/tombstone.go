package mdmem

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/memctl/memctl/mdmem/redact"
)

// Tombstones: `memctl forget` leaves one line per forgotten entry in
// TombstonesPath (committed): the id, the day, and an HMAC-SHA256 of the
// entry's normalised content under a key kept in the git directory
// (TombstoneKeyName: never committed, never pushed). The content itself is
// never stored. Whoever holds only the git history cannot test guesses
// ("was the card number 4111…?") against a tombstone; memctl, holding the
// key, refuses to bring the text back through add, import or consolidation
// unless told to (--allow-forgotten).
const (
	// TombstoneKeyName is the key's file name inside the git directory.
	TombstoneKeyName = "memctl-tombstone.key"
)

// Tombstone records one forgotten entry.
type Tombstone struct {
	ID   string `json:"id"`
	Date string `json:"date"`
	Hash string `json:"hash"` // hex HMAC-SHA256(key, NormalizeForget(content))
	Key  string `json:"key"`  // the key's id (KeyID), so a wrong key is noticed
	// Near are keyed fingerprints of the text's words, for near repeats
	// (Tombstones.near); absent in tombstones written before them.
	Near []string `json:"near,omitempty"`
	// PHash is the public hash of the normalised text, checkable without
	// the key: "pbkdf2-sha256$<iterations>$<salt hex>$<hash hex>"
	// (publicHash); absent in tombstones written before it.
	PHash string `json:"phash,omitempty"`
}

// PublicHashIterations is the PBKDF2-HMAC-SHA256 cost of a new
// tombstone's public hash: about 15 ms a hash on the machine it was
// chosen on, the price of one guess for whoever holds only the
// repository, and of one check per distinct salt for a copy without the
// key. Each tombstone records its own count, so it can rise later.
const PublicHashIterations = 25_000

// newPublicHashIterations is the count new tombstones get: tests that
// make many tombstones lower it.
var newPublicHashIterations = PublicHashIterations

// maxPublicHashIterations bounds the count a tombstone may ask for, so a
// hand-made line cannot stall every add.
const maxPublicHashIterations = 2_000_000

// publicHashScheme names the public hash in a tombstone's phash field.
const publicHashScheme = "pbkdf2-sha256"

// publicHash returns the phash field of a normalised text.
func publicHash(norm string, salt []byte, iter int) string {
	k, err := pbkdf2.Key(sha256.New, norm, salt, iter, sha256.Size)
	if err != nil {
		panic(err) // cannot happen: a salt of 16 bytes or more (publicParams, salt) and a 32-byte result meet every limit, FIPS 140-only mode's too
	}
	return publicHashScheme + "$" + strconv.Itoa(iter) + "$" + hex.EncodeToString(salt) + "$" + hex.EncodeToString(k)
}

// publicParams splits a phash field into its salt and iteration count
// (the part it is computed with) and the hash; ok is false for a field
// memctl did not write.
func publicParams(phash string) (params string, salt []byte, iter int, sum string, ok bool) {
	parts := strings.Split(phash, "$")
	if len(parts) != 4 || parts[0] != publicHashScheme {
		return "", nil, 0, "", false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > maxPublicHashIterations {
		return "", nil, 0, "", false
	}
	salt, err = hex.DecodeString(parts[2])
	if err != nil || len(salt) < 16 || len(parts[3]) != 2*sha256.Size {
		return "", nil, 0, "", false
	}
	return parts[0] + "$" + parts[1] + "$" + parts[2], salt, iter, parts[3], true
}

// ErrTombstoneKey is returned (wrapped) when the memory has tombstones made
// with a key this copy does not hold: they cannot be checked.
var ErrTombstoneKey = errors.New("tombstone key missing")

// ForgottenError says a text repeats a forgotten entry.
type ForgottenError struct{ Tombstone Tombstone }

// Error names the forgotten entry, never the text.
func (e *ForgottenError) Error() string {
	return fmt.Sprintf("this text was forgotten (%s, %s); memctl does not bring it back unless told to", e.Tombstone.ID, e.Tombstone.Date)
}

// Tombstones is the tombstone list with its keys. It is checked on every
// add, so it is kept as read: Match looks for the text's hash in the raw
// bytes, and the lines are decoded only when one may match (or when some
// were made with a key this copy lacks, to check their public hashes).
type Tombstones struct {
	data  []byte
	key   []byte // the key this copy writes tombstones with
	keyID string
	// others are further keys imported (ImportTombstoneKey) while this
	// copy had one: their tombstones are checked as this key's are.
	others []heldKey
	lines  int
	// foreign is set when some tombstone was made with another key (or
	// this copy has none): those are checked by their public hash.
	foreign bool
	all     []Tombstone       // decoded on first need
	public  map[string]string // computed public hashes, by params and text
}

// NormalizeForget folds the variations that do not change what a text
// says, before it is hashed for a tombstone or compared with a forgotten
// text: it reads the text as the detectors do (redact.Fold: NFKC, hidden
// characters gone, look-alike letters of other scripts as Latin, letters
// spelled out joined), lower-cases it, drops a leading label ("Note:",
// "Reminder -", "FYI:"; up to three words, twice), makes every run of
// punctuation and white space one space, and trims.
func NormalizeForget(s string) string {
	f := strings.ToLower(redact.Fold(s))
	for range 2 {
		loc := forgetLabel.FindStringIndex(f)
		if loc == nil || loc[1] >= len(f) {
			break
		}
		f = f[loc[1]:]
	}
	var b strings.Builder
	space := false
	for _, r := range f {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSymbol(r) && r != '%' && r != '#' && r != '@' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// forgetLabel is a leading label: one to three words and a colon or a
// dash ("note:", "fyi -", "important reminder:").
var forgetLabel = regexp.MustCompile(`^\s*[\pL]+(?:[ \t]+[\pL]+){0,2}\s*(?::|\s-|\s–|\s—)\s+`)

// legacyNormalizeForget is NormalizeForget as tombstones written before
// issue 28 hashed the text (case, width, white space, hidden characters,
// trailing punctuation): their hashes are still matched.
func legacyNormalizeForget(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x3000:
			r = ' '
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), ".!;:, ")
}

func keyID(key []byte) string {
	h := sha256.Sum256(append([]byte("memctl-tombstone-key-id:"), key...))
	return hex.EncodeToString(h[:6])
}

// heldKey is a tombstone key and its id.
type heldKey struct {
	id  string
	key []byte
}

// held returns every key this copy holds, its own first.
func (t *Tombstones) held() []heldKey {
	if t.key == nil {
		return t.others
	}
	return append([]heldKey{{t.keyID, t.key}}, t.others...)
}

// salt is the salt of the public hashes this copy writes: derived from the
// key, so one per key (and per memory that made one), public in every
// line, and telling nothing of the key.
func (t *Tombstones) salt() []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte("memctl-tombstone-public-salt"))
	return m.Sum(nil)[:16]
}

// publicMatch reports whether the normalised text has the public hash
// phash; each (salt, count, text) is hashed once per Tombstones.
func (t *Tombstones) publicMatch(norm, phash string) bool {
	params, salt, iter, sum, ok := publicParams(phash)
	if !ok {
		return false
	}
	k := params + "\x00" + norm
	got, done := t.public[k]
	if !done {
		got = publicHash(norm, salt, iter)
		if t.public == nil {
			t.public = map[string]string{}
		}
		t.public[k] = got
	}
	return hmac.Equal([]byte(got[len(got)-len(sum):]), []byte(sum))
}

// mac is the hex HMAC-SHA256 of s under the key.
func (t *Tombstones) mac(s string) string { return macWith(t.key, s) }

// macWith is the hex HMAC-SHA256 of s under key.
func macWith(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// minNearWords is the fewest distinct words (numbers aside) a forgotten
// text needs for a near-repeat match: shorter texts match only exactly.
const minNearWords = 4

// nearDuplicate is the share of a forgotten text's words (numbers aside)
// that a text must hold to repeat it.
const nearDuplicate = 0.9

// near returns the keyed fingerprints of a text's words: the first 8 hex
// digits of the HMAC of each distinct word of its normalised form,
// sorted; a word holding a digit is marked "n" (its fingerprint's first
// digit replaced), so numbers are compared apart. They tell a near repeat
// of a forgotten text without holding its words (a fingerprint is keyed
// and short).
func (t *Tombstones) near(text string) []string { return nearWith(t.key, text) }

// nearWith is near under key.
func nearWith(key []byte, text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(NormalizeForget(text)) {
		h := macWith(key, "word:"+w)[:8]
		if strings.ContainsAny(w, "0123456789") {
			h = "n" + h[1:]
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// nearRepeat reports whether a text's word fingerprints (cand, from near)
// make it a near repeat of a forgotten text's (gone): it holds every
// number of the forgotten text and nearDuplicate of its other words (at
// least minNearWords of them), whatever it adds ("Alex now lives at 12
// Harbour Road in Leith" after "Alex lives at 12 Harbour Road, Leith").
// Another number or another name is another fact ("release 8673" after
// "release 6465"; "the saola queue" after "the basalt queue").
func nearRepeat(cand, gone []string) bool {
	have := map[string]bool{}
	for _, f := range cand {
		have[f] = true
	}
	words, held := 0, 0
	for _, f := range gone {
		if strings.HasPrefix(f, "n") {
			if !have[f] {
				return false
			}
			continue
		}
		words++
		if have[f] {
			held++
		}
	}
	return words >= minNearWords && float64(held) >= nearDuplicate*float64(words)
}

func (s *Store) tombstoneKeyPath() string {
	return filepath.Join(s.Repo.GitDir(), TombstoneKeyName)
}

// LoadTombstones reads the memory's tombstones. A memory without any needs
// no key. Tombstones made with another key (a clone, another machine)
// are checked by their public hash (PHash); one made with a key this
// copy lacks and without a public hash (written before them) is an
// error wrapping ErrTombstoneKey (the check cannot be made, and is never
// skipped silently), and a line that is not a tombstone an error naming it.
func (s *Store) LoadTombstones() (*Tombstones, error) {
	data, err := os.ReadFile(s.abs(TombstonesPath))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return s.tombstonesFrom(data)
}

// tombstonesFrom is LoadTombstones of the given lines (a version of the
// tombstone file), with the keys this copy holds.
func (s *Store) tombstonesFrom(data []byte) (*Tombstones, error) {
	t := &Tombstones{data: data}
	for rest := data; len(rest) > 0; {
		l, r, _ := bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSpace(l)) > 0 {
			t.lines++
		}
		rest = r
	}
	key, err := os.ReadFile(s.tombstoneKeyPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if len(key) > 0 {
		t.key, t.keyID = key, keyID(key)
	}
	if t.others, err = s.otherKeys(t.keyID); err != nil {
		return nil, err
	}
	if t.lines == 0 || t.keyID != "" && bytes.Count(data, []byte(`"`+t.keyID+`"`)) == t.lines {
		return t, nil // the usual case: every line names this key
	}
	all, err := t.All()
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, k := range t.held() {
		have[k.id] = true
	}
	for _, ts := range all {
		if !have[ts.Key] && ts.PHash != "" {
			t.foreign = true
		} else if !have[ts.Key] {
			return nil, fmt.Errorf("%w: %s holds tombstones made with key %s, and %s holds %s; copy the key file from the memory directory where they were made",
				ErrTombstoneKey, TombstonesPath, ts.Key, s.tombstoneKeyPath(), orNone(t.keyID))
		}
	}
	return t, nil
}

// All decodes every tombstone.
func (t *Tombstones) All() ([]Tombstone, error) {
	if t.all != nil {
		return t.all, nil
	}
	var out []Tombstone
	sc := bufio.NewScanner(bytes.NewReader(t.data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ts Tombstone
		if err := json.Unmarshal(line, &ts); err != nil || ts.ID == "" || ts.Hash == "" {
			return nil, fmt.Errorf("%s line %d: not a tombstone (want {\"id\",\"date\",\"hash\",\"key\"})", TombstonesPath, n)
		}
		if _, _, _, _, ok := publicParams(ts.PHash); ts.PHash != "" && !ok {
			return nil, fmt.Errorf("%s line %d: phash is not %s$<iterations up to %d>$<salt hex>$<hash hex>", TombstonesPath, n, publicHashScheme, maxPublicHashIterations)
		}
		out = append(out, ts)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", TombstonesPath, err)
	}
	t.all = out
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return "key " + s
}

// Match returns the tombstone a text repeats, if any: the same text once
// normalised (NormalizeForget; or as tombstones written before it hashed
// it), or a near repeat (nearRepeat: it holds the forgotten text's
// numbers and nearly all its words). Tombstones of this copy's key are
// checked by keyed hash and fingerprints; those of another key by their
// public hash (exact repeats only), one slow hash per distinct salt.
func (t *Tombstones) Match(text string) (Tombstone, bool) { return t.match(text, true) }

// MatchKeyed is Match without the public hashes: only tombstones of this
// copy's key count. For checking every entry of a memory (lint), where
// one slow hash per entry would take minutes.
func (t *Tombstones) MatchKeyed(text string) (Tombstone, bool) { return t.match(text, false) }

// match is Match; public says whether tombstones of keys this copy
// lacks are checked by their public hash.
func (t *Tombstones) match(text string, public bool) (Tombstone, bool) {
	foreign := t.foreign && public
	held := t.held()
	if t.lines == 0 || len(held) == 0 && !foreign {
		return Tombstone{}, false
	}
	// Per key held: the text's hashes (now and as older tombstones
	// normalised) and, when no hash is in the file, its fingerprints.
	type keyed struct {
		h, old string
		words  []string
	}
	per := make(map[string]*keyed, len(held))
	exact := false
	for _, k := range held {
		kd := &keyed{h: macWith(k.key, NormalizeForget(text)), old: macWith(k.key, legacyNormalizeForget(text))}
		exact = exact || bytes.Contains(t.data, []byte(kd.h)) || bytes.Contains(t.data, []byte(kd.old))
		per[k.id] = kd
	}
	near := false
	if !exact && bytes.Contains(t.data, []byte(`"near"`)) {
		for _, k := range held {
			w := nearWith(k.key, text)
			per[k.id].words = w
			near = near || len(w) >= minNearWords
		}
	}
	if !exact && !near && !foreign {
		return Tombstone{}, false
	}
	all, _ := t.All()
	norm, normed := "", false
	for _, ts := range all {
		if kd := per[ts.Key]; kd != nil {
			if ts.Hash == kd.h || ts.Hash == kd.old || len(kd.words) >= minNearWords && nearRepeat(kd.words, ts.Near) {
				return ts, true
			}
			continue
		}
		if foreign && ts.PHash != "" {
			if !normed {
				norm, normed = NormalizeForget(text), true
			}
			if t.publicMatch(norm, ts.PHash) {
				return ts, true
			}
		}
	}
	return Tombstone{}, false
}

// Check returns a *ForgottenError when the text repeats a forgotten entry.
func (t *Tombstones) Check(text string) error {
	if ts, ok := t.Match(text); ok {
		return &ForgottenError{Tombstone: ts}
	}
	return nil
}

// CheckForgotten loads the tombstones and checks candidates against them,
// skipping those marked AllowForgotten. It returns one error per
// candidate (nil when it may go on) or an error when the tombstones
// cannot be read.
func (s *Store) CheckForgotten(cands []*Candidate) ([]error, error) {
	t, err := s.LoadTombstones()
	if err != nil {
		return nil, err
	}
	out := make([]error, len(cands))
	for i, c := range cands {
		if !c.AllowForgotten {
			out[i] = t.Check(c.Content)
		}
	}
	return out, nil
}

// ensureKey returns the tombstone key, creating it (32 random bytes, mode
// 0600) on the first forget.
func (s *Store) ensureKey(ctx context.Context, t *Tombstones) error {
	if t.key != nil {
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := WriteFileAtomic(ctx, s.tombstoneKeyPath(), key, 0o600); err != nil {
		return fmt.Errorf("write the tombstone key: %w", err)
	}
	t.key, t.keyID = key, keyID(key)
	return nil
}

// add returns the tombstone list with lines for the given entries
// appended to base.
func (t *Tombstones) add(base []byte, ents []*Entry, date string) []byte {
	out := bytes.Clone(base)
	salt := t.salt()
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	for _, e := range ents {
		norm := NormalizeForget(e.Content)
		line, _ := json.Marshal(Tombstone{ID: e.ID, Date: date, Hash: t.mac(norm), Key: t.keyID, Near: t.near(e.Content),
			PHash: publicHash(norm, salt, newPublicHashIterations)})
		out = append(append(out, line...), '\n')
	}
	return out
}
