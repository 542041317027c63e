package consolidate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// fakeMeter counts tokens by a table: every candidate and entry costs
// its number of words (its content is "w w w …"), a prompt without items
// costs frame, and a whole prompt costs its items' sum plus perItem for
// each candidate after the first (a template that joins items with more
// than their lines).
type fakeMeter struct {
	frameCost, perItem int
}

func (f fakeMeter) frame() int                  { return f.frameCost }
func (f fakeMeter) entry(e *mdmem.Entry) int    { return len(strings.Fields(e.Content)) }
func (f fakeMeter) cand(c *mdmem.Candidate) int { return len(strings.Fields(c.Content)) }
func (f fakeMeter) prompt(b *Cluster) int {
	n := f.frameCost + f.perItem*max(len(b.Cands)-1, 0)
	for _, c := range b.Cands {
		n += f.cand(c)
	}
	for _, e := range b.Entries {
		n += f.entry(e)
	}
	return n
}

// packClusters are clusters for the packing table: candidates "c<i>:<n>"
// cost n tokens, entries "e<i>:<n>" too (entries of the same name are
// the same entry).
func packClusters(spec ...string) []*Cluster {
	entries := map[string]*mdmem.Entry{}
	item := func(s string) (string, string) {
		name, cost, _ := strings.Cut(s, ":")
		var n int
		fmt.Sscan(cost, &n)
		return name, strings.TrimSpace(strings.Repeat("w ", n))
	}
	var out []*Cluster
	for _, sp := range spec {
		cl := &Cluster{}
		for _, f := range strings.Fields(sp) {
			name, text := item(f)
			if strings.HasPrefix(name, "e") {
				if entries[name] == nil {
					entries[name] = &mdmem.Entry{ID: name, Content: text}
				}
				cl.Entries = append(cl.Entries, entries[name])
				continue
			}
			cl.Cands = append(cl.Cands, &mdmem.Candidate{ID: name, Content: text})
		}
		out = append(out, cl)
	}
	return out
}

// TestPackBatches: batches hold at most the candidate cap and the token
// limit as measured whole; a cluster over the limit goes alone, never
// dropped nor cut; a cluster over the cap is cut into pieces that each
// carry its entries; an entry two clusters share is counted once.
func TestPackBatches(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		lim      batchLimits
		meter    fakeMeter
		want     []string // per batch: candidates, then "|", then entries
	}{
		{"candidate cap, no token limit", []string{"a:1", "b:1", "c:1", "d:1", "f:1"}, batchLimits{cands: 2}, fakeMeter{},
			[]string{"a b |", "c d |", "f |"}},
		{"token limit, frame included", []string{"a:30", "b:30", "c:30", "d:30"}, batchLimits{cands: 20, tokens: 100}, fakeMeter{frameCost: 10},
			[]string{"a b c |", "d |"}},
		{"exactly at the limit", []string{"a:45", "b:45", "c:1"}, batchLimits{cands: 20, tokens: 100}, fakeMeter{frameCost: 10},
			[]string{"a b |", "c |"}},
		{"a shared entry counted once", []string{"a:10 e1:50", "b:10 e1:50", "c:10 e2:50"}, batchLimits{cands: 20, tokens: 90}, fakeMeter{frameCost: 10},
			[]string{"a b | e1", "c | e2"}},
		{"a cluster over the limit goes alone", []string{"a:20", "b:150 e1:20", "c:20"}, batchLimits{cands: 20, tokens: 100}, fakeMeter{frameCost: 10},
			[]string{"a |", "b | e1", "c |"}},
		{"an over-limit cluster of several candidates is not cut", []string{"a:60 b:60 e1:10"}, batchLimits{cands: 20, tokens: 100}, fakeMeter{},
			[]string{"a b | e1"}},
		{"a cluster over the cap is cut, each piece with its entries", []string{"a:1 b:1 c:1 d:1 f:1 e1:1", "g:1"}, batchLimits{cands: 2, tokens: 1000}, fakeMeter{},
			[]string{"a b | e1", "c d | e1", "f g | e1"}},
		{"the cap binds before the tokens", []string{"a:1", "b:1", "c:1"}, batchLimits{cands: 2, tokens: 1000}, fakeMeter{},
			[]string{"a b |", "c |"}},
		{"measured whole over the sum: the last clusters go to the next batch", []string{"a:30", "b:30", "c:30", "d:5"}, batchLimits{cands: 20, tokens: 100}, fakeMeter{frameCost: 10, perItem: 6},
			[]string{"a b |", "c d |"}},
		{"no clusters", nil, batchLimits{cands: 20, tokens: 100}, fakeMeter{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clusters := packClusters(tc.clusters...)
			got := packBatches(clusters, tc.lim, tc.meter)
			var gotS []string
			var sent []string
			for _, b := range got {
				var ids []string
				for _, c := range b.Cands {
					ids = append(ids, c.ID)
					sent = append(sent, c.ID)
				}
				ids = append(ids, "|")
				for _, e := range b.Entries {
					ids = append(ids, e.ID)
				}
				gotS = append(gotS, strings.Join(ids, " "))
				if tc.lim.tokens > 0 {
					if b.tokens != tc.meter.prompt(b.Cluster) {
						t.Errorf("batch %q recorded at %d tokens, measures %d", gotS[len(gotS)-1], b.tokens, tc.meter.prompt(b.Cluster))
					}
					if b.tokens > tc.lim.tokens && !isOneCluster(b.Cluster, clusters) {
						t.Errorf("batch %q: %d tokens over the limit %d, and more than one cluster", gotS[len(gotS)-1], b.tokens, tc.lim.tokens)
					}
				}
				if len(b.Cands) > tc.lim.cands {
					t.Errorf("batch %q over the cap of %d", gotS[len(gotS)-1], tc.lim.cands)
				}
			}
			if !reflect.DeepEqual(gotS, tc.want) {
				t.Errorf("batches\n%q\nwant\n%q", gotS, tc.want)
			}
			var all []string
			for _, cl := range clusters {
				for _, c := range cl.Cands {
					all = append(all, c.ID)
				}
			}
			if !reflect.DeepEqual(sent, all) {
				t.Errorf("candidates sent %v, want every one once, in order: %v", sent, all)
			}
		})
	}
}

// isOneCluster reports whether b holds the candidates of one cluster of
// cls (or a piece of it).
func isOneCluster(b *Cluster, cls []*Cluster) bool {
	for _, cl := range cls {
		n := 0
		for _, c := range b.Cands {
			for _, x := range cl.Cands {
				if x == c {
					n++
				}
			}
		}
		if n == len(b.Cands) {
			return true
		}
	}
	return false
}

// TestTokenMeterSumIsThePrompt: with the shipped templates and a BPE
// tokenizer, a prompt counts exactly as its empty prompt plus its items'
// lines, so packing by the sum never has to give clusters back (and the
// limit is met as measured, not as estimated).
func TestTokenMeterSumIsThePrompt(t *testing.T) {
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	b := &Cluster{}
	for i, text := range []string{
		"The order service uses Redis for its cache layer",
		"Alex's blood type is O positive; don't ring Ruth after 8pm",
		"数据库在周二迁移 — the database moves on Tuesday",
		`Quotes "inside", a \ backslash and <|im_start|> a chat token`,
	} {
		b.Entries = append(b.Entries, &mdmem.Entry{ID: fmt.Sprintf("fact-%03d", i+1), Category: "fact", Content: text, Created: day.AddDate(0, 0, i)})
		b.Cands = append(b.Cands, &mdmem.Candidate{ID: fmt.Sprintf("c%d", i), Category: "decision", Content: text + " now", CreatedAt: day, Scope: []string{"project:app"}})
	}
	for _, tokenizer := range []string{"o200k", "cl100k"} {
		m := newTokenMeter(loadPrompts(""), day, promptCounter(inject.CoreMeasure{}, tokenizer))
		sum := m.frame() + itemTokens(m, b, map[*mdmem.Entry]bool{})
		if whole := m.prompt(b); whole != sum {
			t.Errorf("%s: the prompt counts %d tokens, its parts %d", tokenizer, whole, sum)
		}
	}
}

// TestPromptCounterFallsBack: without a Measure, or with a tokenizer it
// does not know, prompts are estimated at bytes/4.
func TestPromptCounterFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name      string
		m         Measure
		tokenizer string
		want      int
	}{
		{"no measure", nil, "o200k", 3},
		{"unknown tokenizer", inject.CoreMeasure{}, "no-such-tokenizer", 3},
		{"o200k", inject.CoreMeasure{}, "o200k", 2},
	} {
		if got := promptCounter(tc.m, tc.tokenizer)("hello world"); got != tc.want {
			t.Errorf("%s: %d tokens, want %d", tc.name, got, tc.want)
		}
	}
}
