package consolidate

import (
	"time"

	"github.com/memctl/memctl/mdmem"
)

// batchLimits bound one LLM call.
type batchLimits struct {
	cands  int // most candidates (consolidate.batch_size)
	tokens int // most prompt tokens (consolidate.batch_tokens); 0 = no limit
}

// promptMeter counts the prompt tokens of batches for packBatches: the
// tokens of a prompt without items, what each item adds, and the whole
// prompt of a batch as it will be sent.
type promptMeter interface {
	frame() int
	entry(e *mdmem.Entry) int
	cand(c *mdmem.Candidate) int
	prompt(b *Cluster) int
}

// llmBatch is the candidates and entries of one LLM call, and the prompt
// tokens it was measured at (0 when no token limit is set).
type llmBatch struct {
	*Cluster
	tokens int
}

// packBatches packs clusters, in order, into batches of at most
// lim.cands candidates and lim.tokens prompt tokens as m counts them,
// keeping a cluster together when it fits. A cluster of more than
// lim.cands candidates is cut into pieces of lim.cands; a cluster (or
// piece) that alone takes more than lim.tokens is sent alone, never cut
// or dropped: its candidates belong together. Batches are filled from
// the sum of their items' tokens, then measured whole; a batch the whole
// measure finds over the limit (a template that joins items unlike
// their sum) gives its last clusters back to the next batch.
func packBatches(clusters []*Cluster, lim batchLimits, m promptMeter) []*llmBatch {
	var pieces []*Cluster
	for _, c := range clusters {
		for len(c.Cands) > lim.cands {
			pieces = append(pieces, &Cluster{Cands: c.Cands[:lim.cands], Entries: c.Entries})
			c = &Cluster{Cands: c.Cands[lim.cands:], Entries: c.Entries}
		}
		pieces = append(pieces, c)
	}
	var out []*llmBatch
	for i := 0; i < len(pieces); {
		j, cands, sum := i, 0, 0
		if lim.tokens > 0 {
			sum = m.frame()
		}
		seen := map[*mdmem.Entry]bool{}
		for ; j < len(pieces); j++ {
			p := pieces[j]
			add := 0
			if lim.tokens > 0 {
				add = itemTokens(m, p, seen)
			}
			if j > i && (cands+len(p.Cands) > lim.cands || lim.tokens > 0 && sum+add > lim.tokens) {
				break
			}
			cands += len(p.Cands)
			sum += add
			for _, e := range p.Entries {
				seen[e] = true
			}
		}
		b := &llmBatch{Cluster: merge(pieces[i:j])}
		if lim.tokens > 0 {
			b.tokens = m.prompt(b.Cluster)
			for b.tokens > lim.tokens && j-i > 1 {
				j--
				b = &llmBatch{Cluster: merge(pieces[i:j])}
				b.tokens = m.prompt(b.Cluster)
			}
		}
		out = append(out, b)
		i = j
	}
	return out
}

// itemTokens is what the items of p add to a batch already holding the
// entries seen.
func itemTokens(m promptMeter, p *Cluster, seen map[*mdmem.Entry]bool) int {
	n := 0
	for _, c := range p.Cands {
		n += m.cand(c)
	}
	for _, e := range p.Entries {
		if !seen[e] {
			n += m.entry(e)
		}
	}
	return n
}

// merge is one cluster of the candidates of cls and their entries, each
// entry once, in order.
func merge(cls []*Cluster) *Cluster {
	out := &Cluster{}
	seen := map[*mdmem.Entry]bool{}
	for _, c := range cls {
		out.Cands = append(out.Cands, c.Cands...)
		for _, e := range c.Entries {
			if !seen[e] {
				seen[e] = true
				out.Entries = append(out.Entries, e)
			}
		}
	}
	return out
}

// tokenMeter counts prompts with a tokenizer (count): each item as the
// line it is in the prompt (its number aside, which BPE tokenizers count
// as one token below 1000), counted once per entry or candidate.
type tokenMeter struct {
	p          *prompts
	now        time.Time
	count      func(string) int
	emptyTotal int // tokens of a prompt without items, once counted
	entries    map[*mdmem.Entry]int
	cands      map[*mdmem.Candidate]int
}

// sampleItemNumber stands for an item's number while the batch it goes
// to is not known.
const sampleItemNumber = 10

func newTokenMeter(p *prompts, now time.Time, count func(string) int) *tokenMeter {
	return &tokenMeter{p: p, now: now, count: count, entries: map[*mdmem.Entry]int{}, cands: map[*mdmem.Candidate]int{}}
}

func (t *tokenMeter) frame() int {
	if t.emptyTotal == 0 {
		t.emptyTotal = t.prompt(&Cluster{})
	}
	return t.emptyTotal
}

func (t *tokenMeter) entry(e *mdmem.Entry) int {
	n, ok := t.entries[e]
	if !ok {
		n = t.count(entryLine(sampleItemNumber, e) + "\n")
		t.entries[e] = n
	}
	return n
}

func (t *tokenMeter) cand(c *mdmem.Candidate) int {
	n, ok := t.cands[c]
	if !ok {
		n = t.count(candLine(sampleItemNumber, c) + "\n")
		t.cands[c] = n
	}
	return n
}

// prompt is the tokens of b's request, system and user message; 0 when
// the templates are broken (the call fails with their error).
func (t *tokenMeter) prompt(b *Cluster) int {
	req, _, err := t.p.build(b, t.now)
	if err != nil {
		return 0
	}
	return t.count(req.System) + t.count(req.User)
}

// promptCounter is what counts a prompt's tokens: m's tokenizer named
// (inject.tokenizer), or bytes/4 without m or when m does not know it.
func promptCounter(m Measure, tokenizer string) func(string) int {
	estimate := func(s string) int { return (len(s) + 3) / 4 }
	if m == nil {
		return estimate
	}
	if _, err := m.TextTokens(tokenizer, ""); err != nil {
		return estimate
	}
	return func(s string) int {
		n, _ := m.TextTokens(tokenizer, s)
		return n
	}
}
