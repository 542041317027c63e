package mdmem

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
)

// RandomIDLetters are the letters of a random id's suffix: consonants
// only (no vowels, no "y", no "l"), so a suffix never spells a word, and
// it is never mistaken for a number.
const RandomIDLetters = "bcdfghjkmnpqrstvwxz"

// The lengths of a random id's suffix: new ids have MinRandomIDLetters
// (19^6, about 25.5 bits); an allocation that keeps hitting taken ids
// goes longer, up to MaxRandomIDLetters.
const (
	MinRandomIDLetters = 6
	MaxRandomIDLetters = 7
)

// The values of [git] ids: IDsCounter numbers new ids per prefix,
// IDsRandom draws them (NewRandomID).
const (
	IDsCounter = "counter"
	IDsRandom  = "random"
)

// randomDraws is how many draws of one length an allocation tries before
// it adds a letter.
const randomDraws = 8

// isRandomSuffix reports whether s is a random id's suffix.
func isRandomSuffix(s string) bool {
	if len(s) < MinRandomIDLetters || len(s) > MaxRandomIDLetters {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(RandomIDLetters, s[i]) < 0 {
			return false
		}
	}
	return true
}

// letterSource yields letters of RandomIDLetters, uniformly, from a
// stream of bytes: a byte at or above the largest multiple of the
// alphabet's size is skipped, so no letter is favoured.
type letterSource struct {
	next func() (byte, error)
}

// suffix draws n letters.
func (l letterSource) suffix(n int) (string, error) {
	const k = len(RandomIDLetters)
	const limit = 256 / k * k
	b := make([]byte, 0, n)
	for len(b) < n {
		c, err := l.next()
		if err != nil {
			return "", err
		}
		if int(c) < limit {
			b = append(b, RandomIDLetters[int(c)%k])
		}
	}
	return string(b), nil
}

// cryptoLetters draws from crypto/rand.
func cryptoLetters() letterSource {
	var buf [32]byte
	pos := len(buf)
	return letterSource{next: func() (byte, error) {
		if pos == len(buf) {
			if _, err := rand.Read(buf[:]); err != nil {
				return 0, fmt.Errorf("random id: %w", err)
			}
			pos = 0
		}
		pos++
		return buf[pos-1], nil
	}}
}

// NewRandomID returns a random id for prefix that taken reports free:
// MinRandomIDLetters letters drawn with crypto/rand, drawn again on a
// hit, one letter longer after repeated hits.
func NewRandomID(prefix string, taken func(id string) bool) (string, error) {
	return newRandomID(prefix, taken, cryptoLetters())
}

// newRandomID is NewRandomID with the letters from src.
func newRandomID(prefix string, taken func(id string) bool, src letterSource) (string, error) {
	for n := MinRandomIDLetters; n <= MaxRandomIDLetters; n++ {
		for range randomDraws {
			s, err := src.suffix(n)
			if err != nil {
				return "", err
			}
			if id := prefix + "-" + s; !taken(id) {
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("no free random %s id after %d draws: every one was taken", prefix, randomDraws*(MaxRandomIDLetters-MinRandomIDLetters+1))
}

// DerivedID returns a random-form id for prefix computed from seed alone
// (MinRandomIDLetters letters from SHA-256 of seed, rehashed when the
// hash runs out of usable bytes): every machine computes the same id for
// the same seed. The sync merge uses it to give a new id to one of two
// entries that arrived with the same id.
func DerivedID(prefix string, seed []byte) string {
	sum := sha256.Sum256(seed)
	pos := 0
	src := letterSource{next: func() (byte, error) {
		if pos == len(sum) {
			sum = sha256.Sum256(sum[:])
			pos = 0
		}
		pos++
		return sum[pos-1], nil
	}}
	s, _ := src.suffix(MinRandomIDLetters) // the source never fails
	return prefix + "-" + s
}
