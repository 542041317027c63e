package redact

import (
	"fmt"
	"strings"
)

// kwSet is a set of keyword lists, by their index in a keywordIndex.
type kwSet [4]uint64

func (s *kwSet) add(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s *kwSet) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }

// kwRef is one keyword and the list that holds it.
type kwRef struct {
	kw   string
	list int
}

// keywordIndex finds, in one pass over a text, which of several keyword
// lists (a rule's or a pattern's) have a keyword in the text: what
// strings.Contains of each keyword of each list would say, without a
// search per keyword. Every occurrence of a keyword starts at a byte pair
// that is the keyword's first two bytes, so the pass looks each pair of
// the text up in a table of the keywords that begin with it.
type keywordIndex struct {
	always    kwSet           // lists holding the empty keyword
	hasSingle [256]bool       // whether a keyword is this one byte
	single    [256]kwSet      // lists holding a keyword of one byte, by the byte
	first     [1 << 10]uint64 // a bit for each pair a keyword begins with (small: it stays in cache)
	pairs     [1 << 16]uint16 // 1 + the index in groups of the keywords beginning with a pair; 0: none
	groups    [][]kwRef
}

// newKeywordIndex indexes lists of keywords (each list at most 256).
func newKeywordIndex(lists [][]string) *keywordIndex {
	if len(lists) > len(kwSet{})*64 {
		panic(fmt.Sprintf("redact: %d keyword lists, at most %d", len(lists), len(kwSet{})*64))
	}
	x := &keywordIndex{}
	for l, kws := range lists {
		for _, k := range kws {
			switch len(k) {
			case 0:
				x.always.add(l)
			case 1:
				x.single[k[0]].add(l)
				x.hasSingle[k[0]] = true
			default:
				p := uint16(k[0])<<8 | uint16(k[1])
				x.first[p>>6] |= 1 << (p & 63)
				if x.pairs[p] == 0 {
					x.groups = append(x.groups, nil)
					x.pairs[p] = uint16(len(x.groups))
				}
				x.groups[x.pairs[p]-1] = append(x.groups[x.pairs[p]-1], kwRef{k, l})
			}
		}
	}
	return x
}

// hits returns the lists that have a keyword in s.
func (x *keywordIndex) hits(s string) kwSet {
	h := x.always
	for i := 0; i < len(s); i++ {
		c := s[i]
		if x.hasSingle[c] {
			for w, bits := range x.single[c] {
				h[w] |= bits
			}
		}
		if i+1 == len(s) {
			break
		}
		p := uint16(c)<<8 | uint16(s[i+1])
		if x.first[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		g := x.pairs[p]
		for _, r := range x.groups[g-1] {
			if !h.has(r.list) && strings.HasPrefix(s[i:], r.kw) {
				h.add(r.list)
			}
		}
	}
	return h
}
