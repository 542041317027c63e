package inject

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/memctl/memctl/mdmem"
)

// JSONEntry is one entry of `memctl inject --format json`.
type JSONEntry struct {
	ID      string   `json:"id"`
	Tier    string   `json:"tier"`
	Content string   `json:"content"`
	Source  string   `json:"source"`
	Date    string   `json:"created_at"`
	Refs    []string `json:"refs"`
	Tokens  int      `json:"tokens"` // tokens of its line in the block
	Score   float64  `json:"score"`
	Topic   string   `json:"topic,omitempty"`
	AgeDays *int     `json:"age_days,omitempty"`
}

// JSONResult is `memctl inject --format json`.
type JSONResult struct {
	Budget     int         `json:"budget"`
	UsedTokens int         `json:"used_tokens"`
	Today      string      `json:"today"`
	Block      string      `json:"block"` // exactly what --format md prints
	Entries    []JSONEntry `json:"entries"`
	LeftOut    []LeftOut   `json:"left_out"`
	Omitted    []string    `json:"omitted_ids"` // the ids of left_out
}

// JSON returns the machine form of the result. used_tokens is the token
// count of block, the Markdown the same inject prints.
func (r *Result) JSON() JSONResult {
	out := JSONResult{Budget: r.Budget, UsedTokens: r.UsedTokens, Today: r.Today, Block: r.Block,
		Entries: []JSONEntry{}, LeftOut: r.LeftOut, Omitted: r.Omitted()}
	if out.LeftOut == nil {
		out.LeftOut = []LeftOut{}
	}
	for _, it := range r.Items {
		n := it.Note
		e := JSONEntry{ID: n.Ref(), Tier: it.Tier, Content: cleanText(n.Content), Source: n.Source,
			Refs: n.Refs, Tokens: it.Tokens, Score: math.Round(it.Score*1e4) / 1e4, Topic: n.Topic}
		if e.Refs == nil {
			e.Refs = []string{}
		}
		if d := n.Date(); !d.IsZero() {
			e.Date = mdmem.FormatTime(d)
		}
		if it.AgeDays >= 0 {
			a := it.AgeDays
			e.AgeDays = &a
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

// ReadTask reads the task text from r, keeping at most MaxTaskBytes and
// discarding (but counting) the rest, so a 10 MB stdin costs only a read.
func ReadTask(r io.Reader) (task string, total int64, err error) {
	buf := make([]byte, MaxTaskBytes+1)
	n, err := io.ReadFull(r, buf)
	total = int64(n)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return strings.TrimSpace(string(buf[:n])), total, nil
	}
	if err != nil {
		return "", total, err
	}
	rest, err := io.Copy(io.Discard, r)
	total += rest
	if err != nil {
		return "", total, fmt.Errorf("reading the task: %w", err)
	}
	cut := MaxTaskBytes
	for cut > 0 && buf[cut]&0xC0 == 0x80 {
		cut--
	}
	return string(buf[:cut]), total, nil
}
