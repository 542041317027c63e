package mdmem

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// FormatID builds ids without fmt; it must give fmt's "%s-%03d" for every
// number, at each width and at the bounds.
func TestFormatIDGivesWhatSprintfGives(t *testing.T) {
	ns := []int{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, MaxIDNumber - 1, MaxIDNumber, MaxIDNumber + 1, -1, -12, -1000}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ns = append(ns, r.IntN(MaxIDNumber+1))
	}
	for _, p := range []string{"fact", "dec", "a", ""} {
		for _, n := range ns {
			if got, want := FormatID(p, n), fmt.Sprintf("%s-%03d", p, n); got != want {
				t.Fatalf("FormatID(%q, %d) = %q, want %q", p, n, got, want)
			}
		}
	}
}

// presentKey hashes the normalised text from a buffer of its own; the key
// must be the hash of what the plain definition gives, for ASCII and
// other text, any case, white space and trailing punctuation.
func TestPresentKeyIsTheHashOfTheNormalisedText(t *testing.T) {
	plain := func(category, content string) textKey {
		h := sha256.Sum256([]byte(category + "\x00" + strings.TrimRight(strings.ToLower(OneLine(content)), ".!;:,")))
		return textKey(h[:16])
	}
	texts := []string{"", ".", "...!", "Hello World.", "  Two  spaces\tand a tab ;", "ÄÖÜ straße İstanbul ΣΑΣ.",
		"Ünïcode, then punctuation,,", strings.Repeat("Long text ", 60) + "!", "ends in a letter", "K\u212aelvin sign"}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aZ .!;:,\t\nÄé\u0130\u212a1")
	for range 3000 {
		rs := make([]rune, r.IntN(40))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, string(rs))
	}
	for _, cat := range []string{"note", "preference", ""} {
		for _, s := range texts {
			if got, want := presentKey(cat, s), plain(cat, s); got != want {
				t.Fatalf("presentKey(%q, %q) differs from the hash of the normalised text", cat, s)
			}
		}
	}
}

// FormatTime keeps the text of the last instant it formatted; whatever
// the order of the calls, each text must be that of its own instant.
func TestFormatTimeGivesEachInstantItsText(t *testing.T) {
	plain := func(t time.Time) string {
		t = t.UTC()
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			return t.Format("2006-01-02")
		}
		return t.Format(time.RFC3339)
	}
	now := time.Now()
	paris := time.FixedZone("CET", 3600)
	times := []time.Time{{}, now, now.Round(0), now.Add(time.Second), now.In(paris),
		time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, paris),
		time.Date(2026, 1, 2, 0, 0, 0, 1, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		tm := times[r.IntN(len(times))]
		if got, want := FormatTime(tm), plain(tm); got != want {
			t.Fatalf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}
