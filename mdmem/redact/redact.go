// Package redact finds secrets, sensitive numbers and personal data in text
// memctl is about to store or send, replaces them, and recognises text that
// reads like an instruction to a model (memory poisoning).
//
// Every detector reads a normalised copy of the text (NFKC, hidden
// characters removed, and for tokens, lines joined where a key was
// wrapped), so full-width digits, zero-width characters and line breaks do
// not hide a secret; findings are reported as byte ranges of the original
// text. The detectors are memctl's own, compiled lazily, and need no
// network and no third-party rule set (docs/GOVERNANCE.md says why).
package redact

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"sync"
)

// Finding is one secret or sensitive value: its kind ("aws-access-key",
// "payment-card", …) and its byte range [Start, End) in the text given.
type Finding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Scanner finds secrets. The zero Scanner finds secrets and sensitive
// numbers (keys, tokens, private keys, passwords, cards, IBANs, national
// ids); PII adds e-mail addresses and phone numbers.
type Scanner struct {
	PII bool
}

// Scan returns the secrets and sensitive numbers in text (not e-mail
// addresses and phone numbers), sorted by position, without overlaps.
func Scan(text string) []Finding { return Scanner{}.Scan(text) }

// Redact returns text with each finding of Scan replaced by
// "[REDACTED:<kind>]", and the findings.
func Redact(text string) (string, []Finding) { return Scanner{}.Redact(text) }

// Kinds lists the kinds of finding the detectors report.
func Kinds() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rules {
		if !seen[r.kind] {
			seen[r.kind] = true
			out = append(out, r.kind)
		}
	}
	sort.Strings(out)
	return out
}

// lowerASCII lower-cases ASCII letters only, so byte offsets stay put.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// digitRun returns the largest number of digits in one group run of s:
// digits separated by at most one space, '-' or '.', or by a line break
// and the indentation after it ("4539 1488\n  0343 6467" is 16). A date
// and a time ("2026-01-05T10:00") are two runs.
func digitRun(s string) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			cur++
			best = max(best, cur)
			continue
		case (c == ' ' || c == '-' || c == '.') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			continue
		case c == '\n':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && s[j] >= '0' && s[j] <= '9' {
				i = j - 1
				continue
			}
		}
		cur = 0
	}
	return best
}

// runs returns the longest run of token bytes in s (isTokenByte) and the
// longest run of hex digits: the shape rules check before their
// expression runs (rule.minRun, rule.minHex).
func runs(s string) (run, hex int) {
	r, h := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isTokenByte(c) {
			r++
			run = max(run, r)
		} else {
			r = 0
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			h++
			hex = max(hex, h)
		} else {
			h = 0
		}
	}
	return run, hex
}

// splitToken reports whether text has two runs of at least minSplitRun
// token bytes with one space between them: only then can joinSpaces find
// a token the plain reading did not.
func splitToken(text string) bool {
	run, prev := 0, 0 // the current run of token bytes, and the one before a single space
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case isTokenByte(c):
			run++
			if prev >= minSplitRun && run >= minSplitRun {
				return true
			}
		case c == ' ' && i+1 < len(text) && text[i+1] != ' ':
			prev, run = run, 0
		default:
			prev, run = 0, 0
		}
	}
	return false
}

// Scan returns the findings in text, sorted by position; overlapping
// findings are merged into one (the kind of the first).
func (sc Scanner) Scan(text string) []Finding {
	if text == "" {
		return nil
	}
	var found []Finding
	plain := normalise(text, joinNone)
	found = sc.scanOne(&plain, false, found)
	if strings.Contains(strings.TrimRight(text, "\n"), "\n") {
		lines := normalise(text, joinLines)
		found = sc.scanOne(&lines, true, found)
	}
	if splitToken(text) {
		spaces := normalise(text, joinSpaces)
		found = sc.scanOne(&spaces, true, found)
	}
	return merge(found)
}

func (sc Scanner) scanOne(n *normText, joined bool, found []Finding) []Finding {
	lower := lowerASCII(n.s)
	run, hex := -1, 0
	// The rules that may run, as a set: those whose keyword the text
	// holds, and, when the text has a run of digits as long as one of the
	// others needs, those; without the PII rules unless asked, and only
	// the rules that read joined text when it is joined. A text no rule
	// concerns (most of them) costs no walk over the rules.
	set := ruleSets()
	hits := ruleKeywords().hits(lower)
	digits := digitRun(n.s)
	var todo kwSet
	for w := range todo {
		todo[w] = hits[w] & set.keyword[w]
		if digits >= set.minDigits {
			todo[w] |= set.digits[w]
		}
		if !sc.PII {
			todo[w] &^= set.pii[w]
		}
		if joined {
			todo[w] &= set.join[w]
		}
	}
	for w, ws := range todo {
		for ; ws != 0; ws &= ws - 1 { // the rules in order, as a loop over rules would take them
			r := rules[w*64+bits.TrailingZeros64(ws)]
			if r.keywords == nil && digits < r.minDigits {
				continue
			}
			found = scanRule(r, n, lower, &run, &hex, found)
		}
	}
	return found
}

// scanRule appends the findings of rule r in n (lower is its lower-case
// copy; run and hex are runs' results, -1 until worked out).
func scanRule(r *rule, n *normText, lower string, run, hex *int, found []Finding) []Finding {
	if r.minRun > 0 || r.minHex > 0 {
		if *run < 0 {
			*run, *hex = runs(n.s)
		}
		if *run < r.minRun || *hex < r.minHex {
			return found
		}
	}
	if r.hint != nil && !r.hint(n.s, lower) {
		return found
	}
	re := r.regexp()
	for _, loc := range re.FindAllStringSubmatchIndex(n.s, -1) {
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = n.s[loc[2*i]:loc[2*i+1]]
			}
		}
		s, e := loc[2*r.group], loc[2*r.group+1]
		if s < 0 || r.ok != nil && !r.ok(m, lower, s, e) {
			continue
		}
		found = append(found, Finding{Kind: r.kind, Start: n.orig(s), End: n.orig(e)})
	}
	return found
}

// ruleSet is what scanOne knows of the rules before it reads them one by
// one: which have keywords, which need a run of digits instead (and the
// shortest such run any of them needs), which are PII and which also
// read the joined text.
type ruleSet struct {
	keyword, digits, pii, join kwSet
	minDigits                  int
}

// ruleSets sorts the rules into a ruleSet.
var ruleSets = sync.OnceValue(func() *ruleSet {
	m := &ruleSet{minDigits: math.MaxInt}
	for i, r := range rules {
		if r.keywords != nil {
			m.keyword.add(i)
		} else {
			m.digits.add(i)
			m.minDigits = min(m.minDigits, r.minDigits)
		}
		if r.pii {
			m.pii.add(i)
		}
		if r.join {
			m.join.add(i)
		}
	}
	return m
})

// ruleKeywords indexes the rules' keywords.
var ruleKeywords = sync.OnceValue(func() *keywordIndex {
	lists := make([][]string, len(rules))
	for i, r := range rules {
		lists[i] = r.keywords
	}
	return newKeywordIndex(lists)
})

// merge sorts findings and folds overlapping ones together.
func merge(f []Finding) []Finding {
	if len(f) < 2 {
		return f
	}
	sort.SliceStable(f, func(i, j int) bool {
		if f[i].Start != f[j].Start {
			return f[i].Start < f[j].Start
		}
		return f[i].End > f[j].End
	})
	out := f[:1]
	for _, x := range f[1:] {
		last := &out[len(out)-1]
		if x.Start < last.End {
			last.End = max(last.End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Redact returns text with each finding replaced by "[REDACTED:<kind>]",
// and the findings (offsets into text as given).
func (sc Scanner) Redact(text string) (string, []Finding) {
	f := sc.Scan(text)
	if len(f) == 0 {
		return text, nil
	}
	var b strings.Builder
	last := 0
	for _, x := range f {
		b.WriteString(text[last:x.Start])
		b.WriteString("[REDACTED:" + x.Kind + "]")
		last = x.End
	}
	b.WriteString(text[last:])
	return b.String(), f
}

// KindList names the kinds of findings, each once, in order: for messages
// that must not quote the secret.
func KindList(f []Finding) string {
	seen := map[string]bool{}
	var k []string
	for _, x := range f {
		if !seen[x.Kind] {
			seen[x.Kind] = true
			k = append(k, x.Kind)
		}
	}
	return strings.Join(k, ", ")
}

// Action is what a Policy does with a finding.
type Action string

// The actions of a Policy.
const (
	ActionRedact Action = "redact" // replace it with [REDACTED:<kind>] (the default)
	ActionRefuse Action = "refuse" // refuse the whole text
)

// Policy applies a Scanner to text about to be stored: it redacts the
// findings or, with ActionRefuse, refuses the text. Its Redact method is
// an mdmem.Redactor.
type Policy struct {
	Action Action
	PII    bool // e-mail addresses and phone numbers count too
}

// RefusedError says that a field holds a secret and the policy refuses it.
// It names the kinds, never the secret.
type RefusedError struct {
	Field string
	Found []Finding
}

// Error describes the refusal and how to go on.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s holds a secret (%s); refused by the secrets policy (add.secrets = \"refuse\"): remove it, or set add.secrets = \"redact\" to store it as [REDACTED:<kind>]", e.Field, KindList(e.Found))
}

// Redact returns text with its findings redacted, or a *RefusedError when
// the policy refuses texts with secrets.
func (p Policy) Redact(field, text string) (string, error) {
	out, f := Scanner{PII: p.PII}.Redact(text)
	if len(f) > 0 && p.Action == ActionRefuse {
		return "", &RefusedError{Field: field, Found: f}
	}
	return out, nil
}
