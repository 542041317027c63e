package inject

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts tokens the way the model family does.
type Counter interface {
	// Count returns the number of tokens of s.
	Count(s string) int
	// Name is the tokenizer's name as configured ("o200k", "chars:4").
	Name() string
}

// TokenizerNames are the tokenizers memctl knows; "chars:N" is also
// accepted.
var TokenizerNames = []string{"o200k", "cl100k", "chars:N"}

// NewCounter returns the counter for a tokenizer spec:
//
//	o200k   GPT-4o, GPT-4.1, GPT-5, o1/o3/o4 (also: gpt-4o, gpt-5, …)
//	cl100k  GPT-4, GPT-3.5 (also: gpt-4, gpt-3.5-turbo)
//	chars:N one token per N characters (runes), rounded up per text; for
//	        models whose tokenizer memctl does not ship. N may be a decimal.
//	        CJK characters count one token each, since BPE tokenizers spend
//	        about one token per ideograph.
//
// The BPE tables are compiled into memctl; nothing is downloaded. They are
// loaded on first use (tens of milliseconds), so a command that finds every
// count in its cache never loads them.
func NewCounter(spec string) (Counter, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	switch s {
	case "o200k", "o200k_base", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o1", "o3", "o4-mini":
		return &bpeCounter{name: "o200k", enc: tokenizer.O200kBase}, nil
	case "cl100k", "cl100k_base", "gpt-4", "gpt-3.5-turbo", "gpt-35-turbo":
		return &bpeCounter{name: "cl100k", enc: tokenizer.Cl100kBase}, nil
	}
	if rest, ok := strings.CutPrefix(s, "chars:"); ok {
		n, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(n >= 0.5 && n <= 100) {
			return nil, fmt.Errorf("tokenizer %q: want chars:N with N a number of characters per token between 0.5 and 100", spec)
		}
		return charCounter{per: n, name: "chars:" + rest}, nil
	}
	return nil, fmt.Errorf("unknown tokenizer %q (known: o200k, cl100k, chars:N — use chars:4 for an unknown English model)", spec)
}

type bpeCounter struct {
	name  string
	enc   tokenizer.Encoding
	once  sync.Once
	codec tokenizer.Codec
	err   error
}

func (b *bpeCounter) Name() string { return b.name }

func (b *bpeCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	b.once.Do(func() { b.codec, b.err = tokenizer.Get(b.enc) })
	if b.err != nil {
		panic(fmt.Sprintf("tokenizer %s: %v", b.name, b.err)) // the tables are compiled in
	}
	n, err := b.codec.Count(s)
	if err != nil {
		// Only invalid input can fail; fall back to a safe upper bound.
		return len(s)
	}
	return n
}

type charCounter struct {
	per  float64
	name string
}

func (c charCounter) Name() string { return c.name }

func (c charCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	other, cjk := 0, 0
	for _, r := range s {
		if r >= 0x2E80 && isCJK(r) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + int(math.Ceil(float64(other)/c.per))
}
