// Package inject builds the token-budgeted memory block agents put in
// their prompt (memctl inject), and reads the memory for search, stats and
// eval.
//
// The block has two tiers. L1 is the core profile (MEMORY.md's core
// subsections): printed whole when it fits the budget less the share kept
// for L2 (and core_max_tokens), else the entries most relevant to the task
// and of most value. L2 is topic entries plus the core entries L1 could
// not hold, ranked against the task text and tags (BM25F with stemming,
// pseudo-relevance feedback and session neighbours), top-K, packed into
// what L1 left, near-duplicates of shown entries skipped. Archive and
// pending entries are never injected.
//
// The output is deterministic: the same memory, options and "now" give the
// same bytes. Every entry is one line; the block is cut only between
// entries, and its whole token count (header, fence and footer included)
// never exceeds the budget.
package inject

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// Tiers of an injected entry.
const (
	TierCore      = "core"
	TierRetrieved = "retrieved"
)

// ScopeAll makes every scope eligible.
const ScopeAll = "all"

// MaxTaskBytes caps the task text used for retrieval. Longer text is cut
// (at a rune boundary) and a warning says so: a query of more than 64 KiB
// says nothing the first 64 KiB did not.
const MaxTaskBytes = 64 << 10

// Options are the inputs of one inject.
type Options struct {
	Task          string    // the task text to rank L2 against
	Tags          []string  // only L2 entries with one of these tags; also query terms
	Scopes        []string  // none: global entries only; "all": everything; else global + these scopes
	Budget        int       // whole block, in tokens
	MaxChars      int       // whole block, in characters (runes); 0: no limit
	L2Reserve     float64   // share of Budget the core leaves to L2
	CoreMaxTokens int       // the core's own limit in tokens (0: none)
	CoreMaxLines  int       // physical limit of L1, lines (0: none)
	CoreMaxBytes  int       // physical limit of L1, bytes (0: none)
	TopK          int       // L2 entries considered; 0: as many as fit
	Counter       Counter   // token counter
	Ranker        string    // a name in Rankers; "" is DefaultRanker
	StaleDays     int       // mark entries older than this as old (0: never)
	Now           time.Time // the today line, staleness and expiry; zero: none of them
	// NoTodayLine leaves the today line out (staleness and expiry still
	// use Now): a block kept in a file then changes only with the memory.
	NoTodayLine  bool
	Meta         []string // per-line metadata fields (MetaFields); nil: compact date lines
	Header       string   // text before the fence (lines ending in "\n"); "": DefaultHeader
	RulesHeading string   // if set, core constraints go in a section of their own under it
	Dense        *Dense   // with a task: fuse the L2 ranking with embeddings (nil: words only)
	// Given are the refs (ids) of entries the agent holds already, e.g.
	// from the session's first block: neither shown again nor named as
	// left out.
	Given map[string]bool

	// contentOnly counts only the entries' text against the budget (no
	// frame, ids or metadata): the accounting of eval's reference figures.
	contentOnly bool
}

func (o *Options) header() string {
	if o.Header == "" {
		return DefaultHeader
	}
	return o.Header
}

// Item is one injected entry.
type Item struct {
	Note    *Note
	Tier    string
	Score   float64
	Tokens  int    // tokens of its line (not of the date line it shares)
	Line    string // its rendered line, with newline
	AgeDays int    // age in days when older than StaleDays, else -1
	doc     int
	day     string // its date, 2026-01-05 ("" in --meta mode or without a date): the order of date lines
	dayText string // its date line's date: day, without the year when the today line says it (01-05)
	group   string // the rest of its date line (source, staleness mark) under a heading that says none
	mk      marks  // its marks, dated or not (none in --meta mode): what a heading may say for all
}

// Result is one inject.
type Result struct {
	Budget      int
	UsedTokens  int       // tokens of the whole Markdown block
	FrameTokens int       // of them, the frame's: header, today line, fence, headings, footer
	Items       []Item    // in priority order: core, then retrieved best first
	LeftOut     []LeftOut // eligible entries not shown, by reason, in priority order
	Warnings    []string  // for stderr
	Block       string    // the Markdown block ("" when nothing fits)
	Today       string    // the today line's date ("" without "now")
	Ranker      string
	Tokenizer   string
}

// Omitted returns the refs of the left-out entries.
func (r *Result) Omitted() []string {
	out := make([]string, 0, len(r.LeftOut))
	for _, l := range r.LeftOut {
		out = append(out, l.Ref)
	}
	return out
}

// ErrBudget is returned when the budget cannot hold even the frame.
var ErrBudget = errors.New("budget too small")

// Eligible reports whether a note may be injected under the options: core
// or topic, not superseded, not expired, and in scope.
func (o *Options) Eligible(n *Note) bool {
	return o.eligibleButScope(n) && InScope(n.Scope, o.Scopes)
}

func (o *Options) eligibleButScope(n *Note) bool {
	if n.Place != mdmem.PlaceCore && n.Place != mdmem.PlaceTopic {
		return false
	}
	if n.SupersededBy != "" {
		return false
	}
	return o.Now.IsZero() || n.Expires.IsZero() || n.Expires.After(o.Now)
}

// InScope applies the isolation rule: without scopes only global entries;
// with scopes X and Y, global entries and those scoped X or Y; "all"
// everything.
func InScope(noteScopes []string, scopes []string) bool {
	if len(noteScopes) == 0 {
		return true
	}
	for _, s := range scopes {
		if s == ScopeAll || hasFold(noteScopes, s) {
			return true
		}
	}
	return false
}

// packer tracks what the selection costs: tokens (the group lines and
// headings each item brings), characters and the core's physical size.
type packer struct {
	o        *Options
	cnt      *tokenCtx
	used     int
	chars    int
	sections map[string]*secCost // by heading
	texts    map[string]bool     // normalised text of shown items: exact duplicates
	notes    []*Note             // shown items
	shown    [][]string          // word sets of notes[:len(shown)], for near-duplicates
}

// secCost is what one section of the selection costs. Its heading says
// the marks all its entries share (hoist), so its date lines do not:
// adding an entry without them puts them back on every date line. The
// date lines' tokens and characters are kept for each of the four
// headings (bit 0: the source mark hoisted, bit 1: the staleness mark),
// so the cost of an entry is found without recounting.
type secCost struct {
	n      int             // entries
	shared marks           // the marks every entry has
	groups map[string]bool // date lines (day and group)
	tok    [4]int
	chars  [4]int
}

// variant is the index of the date line sums under heading marks h.
func variant(h marks) int {
	v := 0
	if h.src != "" {
		v |= 1
	}
	if h.stale {
		v |= 2
	}
	return v
}

// variantMarks is the heading marks of a variant for the date line marks
// m: what the heading of variant v takes off the date line.
func variantMarks(m marks, v int) marks {
	var h marks
	if v&1 != 0 {
		h.src = m.src
	}
	h.stale = v&2 != 0
	return h
}

// with returns the shared marks once an entry with marks m joins a
// section of n entries sharing s.
func (s marks) with(m marks, n int) marks {
	if n == 0 {
		return m
	}
	if s.src != m.src {
		s.src = ""
	}
	s.stale = s.stale && m.stale
	return s
}

// total is what the section costs with heading head: the heading with
// its shared marks and the date lines without them.
func (sc *secCost) total(p *packer, head string, shared marks, n int) (tok, chars int) {
	if n == 0 {
		return 0, 0
	}
	shared = hoisted(head, shared)
	h := shared.heading(head)
	v := variant(shared)
	return p.cnt.frame(h) + sc.tok[v], utf8.RuneCountInString(h) + sc.chars[v]
}

// section names the heading an item goes under.
func (p *packer) section(it *Item) string {
	if it.Tier != TierCore {
		return headRetrieved
	}
	if p.o.RulesHeading != "" && it.Note.Category == "constraint" {
		return p.o.RulesHeading
	}
	return headCore
}

// dateLine counts the date line of it under each heading variant.
func (p *packer) dateLine(it *Item) (tok, chars [4]int) {
	for v := range 4 {
		suf := it.mk.less(variantMarks(it.mk, v)).suffix()
		tok[v] = p.cnt.group(it.dayText, suf)
		chars[v] = utf8.RuneCountInString(it.dayText + suf)
	}
	return tok, chars
}

// cost returns the tokens and characters adding it would take.
func (p *packer) cost(it *Item) (tok, chars int) {
	tok, chars = it.Tokens, utf8.RuneCountInString(it.Line)
	sec := p.section(it)
	sc := p.sections[sec]
	if sc == nil {
		sc = &secCost{}
	}
	t0, c0 := sc.total(p, sec, sc.shared, sc.n)
	after := *sc
	if it.day != "" && !sc.groups[it.day+it.group] {
		dt, dc := p.dateLine(it)
		for v := range 4 {
			after.tok[v] += dt[v]
			after.chars[v] += dc[v]
		}
	}
	t1, c1 := after.total(p, sec, sc.shared.with(it.mk, sc.n), sc.n+1)
	return tok + t1 - t0, chars + c1 - c0
}

func (p *packer) add(it *Item) {
	tok, chars := p.cost(it)
	p.used += tok
	p.chars += chars
	sec := p.section(it)
	sc := p.sections[sec]
	if sc == nil {
		sc = &secCost{groups: map[string]bool{}}
		p.sections[sec] = sc
	}
	if it.day != "" && !sc.groups[it.day+it.group] {
		sc.groups[it.day+it.group] = true
		dt, dc := p.dateLine(it)
		for v := range 4 {
			sc.tok[v] += dt[v]
			sc.chars[v] += dc[v]
		}
	}
	sc.shared = sc.shared.with(it.mk, sc.n)
	sc.n++
}

// nearDup is the word-set Jaccard similarity at or above which an entry
// restates one already shown (consolidate's near-duplicate default).
const nearDup = 0.8

// duplicate reports whether the note restates an entry already shown:
// the same text, or (near) nearly the same words (Jaccard of the analyzed
// word sets). Core entries are checked for exact duplicates only:
// consolidate keeps near-duplicates out of the memory, and the core can
// be hundreds of entries; retrieved ones, few per block, are checked for
// both. The word sets of shown entries are computed on first need.
func (p *packer) duplicate(n *Note, near bool) bool {
	if p.texts[normalize(n.Content)] {
		return true
	}
	if !near {
		return false
	}
	for len(p.shown) < len(p.notes) {
		p.shown = append(p.shown, dupTerms(p.notes[len(p.shown)].Content))
	}
	terms := dupTerms(n.Content)
	for _, s := range p.shown {
		// Jaccard ≤ min/max of the sizes: most pairs need no merge.
		if lo, hi := min(len(terms), len(s)), max(len(terms), len(s)); float64(lo) < nearDup*float64(hi) {
			continue
		}
		if jaccard(terms, s) >= nearDup {
			return true
		}
	}
	return false
}

func dupTerms(text string) []string {
	t := Rankers[DefaultRanker].An.Terms(nil, text)
	if len(t) == 0 {
		t = []string{normalize(text)}
	}
	sort.Strings(t)
	out := t[:0]
	for i, w := range t {
		if i == 0 || w != t[i-1] {
			out = append(out, w)
		}
	}
	return out
}

// jaccard of two sorted sets.
func jaccard(a, b []string) float64 {
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Inject selects and renders the block: the core (L1), then topic entries
// and core overflow ranked against the task (L2), then what was left out
// and why, rendered to fit the budget exactly.
func Inject(c *Corpus, o Options) (*Result, error) {
	run, err := newInjectRun(c, &o)
	if err != nil {
		return nil, err
	}
	if !run.measureFrame() {
		return run.r, nil
	}
	run.packCore()
	run.rankTopics()
	run.packTopics()
	run.accountLeftOut()
	return run.finish(), nil
}

// injectRun is one Inject: the corpus, the options, the result it fills
// and what packing the block has cost so far, shared by its steps.
type injectRun struct {
	c        *Corpus
	o        *Options
	r        *Result
	rp       RankParams
	task     string // the task text used for retrieval (cut to MaxTaskBytes)
	cnt      *tokenCtx
	p        *packer
	frame    int // tokens of the frame: header, today line, fence
	avail    int // tokens the entries may take
	maxChars int // characters the entries may take

	dup       map[int]bool // later duplicates, never shown
	core      []int        // eligible core entries in scope
	overflow  []int        // core entries L1 could not hold
	inOver    map[int]bool // overflow as a set
	matched   map[int]bool // core overflow the task matched
	budgetOut map[int]bool // L2 hits left out for budget
	hits      []Hit        // L2 ranked, sorted as far as packing read them
	more      func() bool  // sorts further hits into hits; false when there are none
	left      []LeftOut    // left out so far, in priority order
}

// newInjectRun checks the options and starts the result: ranker,
// tokenizer, today and the task text cut to MaxTaskBytes.
func newInjectRun(c *Corpus, o *Options) (*injectRun, error) {
	if o.Counter == nil {
		return nil, errors.New("inject: no token counter")
	}
	if o.Budget <= 0 {
		return nil, fmt.Errorf("%w: budget must be a positive number of tokens, got %d", ErrBudget, o.Budget)
	}
	if o.L2Reserve < 0 || o.L2Reserve > 1 {
		return nil, fmt.Errorf("inject: L2 reserve %v is not a share in [0,1]", o.L2Reserve)
	}
	name := o.Ranker
	if name == "" {
		name = DefaultRanker
	}
	rp, ok := Rankers[name]
	if !ok {
		return nil, fmt.Errorf("unknown ranker %q (known: %s)", name, strings.Join(RankerNames(), ", "))
	}
	r := &Result{Budget: o.Budget, Ranker: name, Tokenizer: o.Counter.Name()}
	if !o.Now.IsZero() && !o.NoTodayLine {
		r.Today = o.Now.UTC().Format("2006-01-02")
	}
	task := o.Task
	if len(task) > MaxTaskBytes {
		cut := MaxTaskBytes
		for cut > 0 && task[cut]&0xC0 == 0x80 {
			cut--
		}
		task = task[:cut]
		r.Warnings = append(r.Warnings, fmt.Sprintf("task text is %d bytes; only the first %d are used for retrieval", len(o.Task), cut))
	}
	return &injectRun{c: c, o: o, r: r, rp: rp, task: task, cnt: c.tokens(o.Counter, o.contentOnly)}, nil
}

// measureFrame sets what the frame leaves the entries; false (with a
// warning) when it leaves nothing.
func (run *injectRun) measureFrame() bool {
	o, cnt, r := run.o, run.cnt, run.r
	frame := cnt.frame(o.header()) + cnt.frame("```"+fenceInfo+"\n") + cnt.frame("```\n")
	frameChars := utf8.RuneCountInString(o.header()) + len("```"+fenceInfo+"\n```\n")
	if r.Today != "" {
		frame += cnt.today(r.Today)
		frameChars += len(todayHead + " " + r.Today + "\n")
	}
	run.frame, run.avail = frame, o.Budget-frame
	if run.avail <= 0 || o.MaxChars > 0 && frameChars >= o.MaxChars {
		r.Warnings = append(r.Warnings, fmt.Sprintf("budget %d tokens cannot hold the block's frame (%d tokens); nothing injected", o.Budget, frame))
		return false
	}
	run.maxChars = math.MaxInt
	if o.MaxChars > 0 {
		run.maxChars = o.MaxChars - frameChars
	}
	run.p = newPacker(o, cnt)
	run.p.texts = map[string]bool{}
	return true
}

// newPacker is a packer with nothing selected yet.
func newPacker(o *Options, cnt *tokenCtx) *packer {
	return &packer{o: o, cnt: cnt, sections: map[string]*secCost{}}
}

// take adds an item to the block.
func (run *injectRun) take(it Item) {
	p := run.p
	p.add(&it)
	p.texts[normalize(it.Note.Content)] = true
	p.notes = append(p.notes, it.Note)
	run.r.Items = append(run.r.Items, it)
}

// retrieves reports whether there is an L2: a task or tags to rank by.
func (run *injectRun) retrieves() bool {
	return strings.TrimSpace(run.task) != "" || len(run.o.Tags) > 0
}

// collectCore finds the eligible core entries; those out of scope are
// left out for scope.
func (run *injectRun) collectCore() {
	c, o := run.c, run.o
	dup, warns := c.laterDuplicates(o)
	run.dup = dup
	run.r.Warnings = append(run.r.Warnings, warns...)
	for i := 0; i < c.Len(); i++ {
		if c.place(i) != mdmem.PlaceCore || dup[i] {
			continue
		}
		n := c.Note(i)
		if !o.eligibleButScope(n) || o.Given[n.Ref()] {
			continue
		}
		if !InScope(n.Scope, o.Scopes) {
			run.left = append(run.left, LeftOut{Ref: n.Ref(), Tier: TierCore, Reason: ReasonScope, doc: i})
			continue
		}
		run.core = append(run.core, i)
	}
}

// coreCap is the tokens L1 may take: the budget less the frame and, when
// there is an L2, its reserve; at most core_max_tokens.
func (run *injectRun) coreCap() int {
	o := run.o
	coreCap := run.avail
	if run.retrieves() { // the reserve is for L2: with neither task nor tags there is none
		coreCap = int(math.Floor(float64(o.Budget)*(1-o.L2Reserve))) - run.frame
	}
	if o.CoreMaxTokens > 0 && !o.contentOnly {
		coreCap = min(coreCap, o.CoreMaxTokens)
	}
	return min(coreCap, run.avail)
}

// fitsCore reports whether the items fit L1 whole: tokens, characters,
// lines and bytes.
func (run *injectRun) fitsCore(items []Item, coreCap int) bool {
	o := run.o
	q := newPacker(o, run.cnt)
	bytes := 0
	for k := range items {
		q.add(&items[k])
		bytes += len(items[k].Line)
	}
	return q.used <= coreCap && q.chars <= run.maxChars &&
		(o.CoreMaxLines <= 0 || len(items) <= o.CoreMaxLines) && (o.CoreMaxBytes <= 0 || bytes <= o.CoreMaxBytes)
}

// packCore packs L1: the whole core when it fits its share, else the most
// relevant and valuable entries that do; the rest is overflow for L2.
func (run *injectRun) packCore() {
	c, o, p := run.c, run.o, run.p
	run.collectCore()
	coreCap := run.coreCap()
	coreItems := make([]Item, len(run.core))
	for k, i := range run.core {
		coreItems[k] = newItem(c, i, TierCore, 0, o, run.cnt)
	}
	if run.fitsCore(coreItems, coreCap) {
		for _, it := range coreItems {
			if !p.duplicate(it.Note, false) {
				run.take(it)
			}
		}
		return
	}
	lines, bytes := 0, 0
	for _, k := range c.corePriority(run.rp, run.task, o, run.core) {
		it := coreItems[k]
		if p.duplicate(it.Note, false) {
			continue
		}
		tok, chars := p.cost(&it)
		if p.used+tok > coreCap || p.chars+chars > run.maxChars ||
			(o.CoreMaxLines > 0 && lines+1 > o.CoreMaxLines) || (o.CoreMaxBytes > 0 && bytes+len(it.Line) > o.CoreMaxBytes) {
			run.overflow = append(run.overflow, run.core[k])
			continue
		}
		lines++
		bytes += len(it.Line)
		run.take(it)
	}
}

// tagOK reports whether a note has one of the options' tags (any note
// without tags in the options).
func (run *injectRun) tagOK(n *Note) bool {
	if len(run.o.Tags) == 0 {
		return true
	}
	for _, t := range run.o.Tags {
		if hasFold(n.Tags, t) {
			return true
		}
	}
	return false
}

// eligibleL2 reports whether note i may be ranked for L2: core overflow
// or an eligible topic entry, with one of the tags.
func (run *injectRun) eligibleL2(i int) bool {
	c, o := run.c, run.o
	switch c.place(i) {
	case mdmem.PlaceCore:
		return run.inOver[i] && run.tagOK(c.Note(i))
	case mdmem.PlaceTopic:
		if run.dup[i] || len(o.Given) > 0 && o.Given[c.Note(i).Ref()] {
			return false
		}
		// Most notes have none of the fields that filter: they need not
		// be decoded.
		if f := c.flags(i); f&(nfSuperseded|nfExpires|nfScope) == 0 && (len(o.Tags) == 0 || f&nfTags == 0) {
			return len(o.Tags) == 0
		}
		n := c.Note(i)
		return o.Eligible(n) && run.tagOK(n)
	}
	return false
}

// noMore is the more of a ranking already whole.
func noMore() bool { return false }

// rankTopics ranks L2 (topic entries and core overflow) against the task
// and tags into hits, sorted only as far as packing reads them (more).
func (run *injectRun) rankTopics() {
	c, o := run.c, run.o
	run.inOver, run.matched = map[int]bool{}, map[int]bool{}
	for _, i := range run.overflow {
		run.inOver[i] = true
	}
	run.more = noMore
	if !run.retrieves() {
		return
	}
	rk := c.rank(run.rp, run.task, o.Tags, run.eligibleL2)
	for _, i := range run.overflow {
		if rk.matches(i) {
			run.matched[i] = true
		}
	}
	want := o.TopK
	if want <= 0 {
		want = 256
	}
	run.hits = rk.top(want)
	if o.TopK <= 0 {
		run.more = func() bool {
			if len(run.hits) == rk.count {
				return false
			}
			run.hits = rk.top(4 * len(run.hits))
			return true
		}
	}
	if o.Dense != nil && strings.TrimSpace(run.task) != "" {
		// With embeddings: the lexical ranking fused with the entries
		// nearest the task by meaning (dense.go).
		var warn string
		run.hits, warn = c.denseHits(o.Dense, rk, run.eligibleL2, o.TopK)
		run.more = noMore
		if warn != "" {
			run.r.Warnings = append(run.r.Warnings, warn)
		}
		run.markMatched(run.hits)
	}
	if rk.count == 0 && strings.TrimSpace(run.task) == "" {
		// Tags alone: every tagged entry, newest first.
		run.hits, run.more = taggedByDate(c, run.eligibleL2), noMore
		if o.TopK > 0 && len(run.hits) > o.TopK {
			run.hits = run.hits[:o.TopK]
		}
	}
}

// markMatched records the core overflow among hits.
func (run *injectRun) markMatched(hits []Hit) {
	for _, h := range hits {
		if run.inOver[h.Doc] {
			run.matched[h.Doc] = true
		}
	}
}

// packTopics packs L2: the ranked hits best first, skipping restatements
// of entries shown, into what L1 left; hits that do not fit are left out
// for budget, and packing stops after maxMisfits of them in a row.
func (run *injectRun) packTopics() {
	c, o, p := run.c, run.o, run.p
	run.budgetOut = map[int]bool{}
	misfits := 0
	for k := 0; k < len(run.hits) || (k == len(run.hits) && run.more()); k++ {
		h := run.hits[k]
		n := c.Note(h.Doc)
		if p.duplicate(n, true) {
			continue // restates an entry already in the block
		}
		it := newItem(c, h.Doc, TierRetrieved, h.Score, o, run.cnt)
		tok, chars := p.cost(&it)
		if p.used+tok > run.avail || p.chars+chars > run.maxChars {
			run.budgetOut[h.Doc] = true
			run.left = append(run.left, LeftOut{Ref: n.Ref(), Tier: tierOf(n), Reason: ReasonBudget, doc: h.Doc})
			misfits++
			if run.avail-p.used < 4 || misfits >= maxMisfits {
				break
			}
			continue
		}
		misfits = 0
		run.take(it)
	}
}

// accountLeftOut leaves out the core entries L1 could not hold and L2 did
// not show, ahead of the rest: for top-k when the task matched them but L2
// stopped at top-k with room left; else for budget.
func (run *injectRun) accountLeftOut() {
	c, o, p := run.c, run.o, run.p
	shown := map[int]bool{}
	for _, it := range run.r.Items {
		shown[it.doc] = true
	}
	var coreLeft []LeftOut
	for _, i := range run.overflow {
		if shown[i] || run.budgetOut[i] {
			continue
		}
		reason := ReasonBudget
		it := newItem(c, i, TierRetrieved, 0, o, run.cnt)
		if tok, _ := p.cost(&it); run.matched[i] && o.TopK > 0 && p.used+tok <= run.avail {
			reason = ReasonTopK
		}
		coreLeft = append(coreLeft, LeftOut{Ref: c.Note(i).Ref(), Tier: TierCore, Reason: reason, doc: i})
	}
	run.left = append(coreLeft, run.left...)
}

// finish renders the block and counts it exactly, dropping the
// lowest-priority entry until it fits (the footer and a longer fence can
// push it over).
func (run *injectRun) finish() *Result {
	o, r := run.o, run.r
	left := run.left
	for {
		r.LeftOut = sortLeft(left)
		block, total, frame := render(r.Items, o, r.LeftOut, run.cnt)
		if o.contentOnly {
			total = 0
			for _, it := range r.Items {
				total += it.Tokens
			}
		}
		fits := total <= o.Budget && (o.MaxChars <= 0 || utf8.RuneCountInString(block) <= o.MaxChars)
		if fits || len(r.Items) == 0 {
			if !fits {
				r.Warnings = append(r.Warnings, fmt.Sprintf("budget %d tokens cannot hold the block's frame; nothing injected", o.Budget))
				r.Items, r.Block, r.UsedTokens = nil, "", 0
				return r
			}
			r.Block, r.UsedTokens, r.FrameTokens = block, total, frame
			return r
		}
		last := r.Items[len(r.Items)-1]
		r.Items = r.Items[:len(r.Items)-1]
		left = append([]LeftOut{{Ref: last.Note.Ref(), Tier: tierOf(last.Note), Reason: ReasonBudget, doc: last.doc}}, left...)
	}
}

// tierOf is the tier a note belongs to: core entries, even when L2
// ranked them, are core.
func tierOf(n *Note) string {
	if n.Place == mdmem.PlaceCore {
		return TierCore
	}
	return TierRetrieved
}

// sortLeft orders left-out entries by reason (budget, top-k, scope),
// keeping priority order within a reason.
func sortLeft(left []LeftOut) []LeftOut {
	out := make([]LeftOut, 0, len(left))
	for _, reason := range reasonOrder {
		for _, l := range left {
			if l.Reason == reason {
				out = append(out, l)
			}
		}
	}
	return out
}

// corePriority orders core entries (indexes into core) for an L1 that
// cannot hold them all: by relevance to the task and tags when there are
// any, then by value (constraints, preferences, decisions, then the rest;
// newer first), then file order.
func (c *Corpus) corePriority(rp RankParams, task string, o *Options, core []int) []int {
	score := map[int]float64{}
	if strings.TrimSpace(task) != "" || len(o.Tags) > 0 {
		in := make([]bool, c.Len()) // ranking asks about every note
		for _, i := range core {
			in[i] = true
		}
		// BM25F alone: feedback, proximity and session neighbours cost more
		// than ordering a few hundred curated entries gains from them.
		plain := rp
		plain.FbDocs, plain.Proximity, plain.Neighbor = 0, 0, 0
		for _, h := range c.rank(plain, task, o.Tags, func(i int) bool { return in[i] }).top(0) {
			score[h.Doc] = h.Score
		}
	}
	order := make([]int, len(core))
	for k := range order {
		order[k] = k
	}
	value := func(n *Note) float64 {
		w := map[string]float64{"constraint": 3, "preference": 2, "decision": 1}[n.Category]
		if d := n.Date(); !d.IsZero() {
			w += float64(d.Unix()) / 1e12 // newer first among equals
		}
		return w
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := core[order[a]], core[order[b]]
		if score[x] != score[y] {
			return score[x] > score[y]
		}
		return value(c.Note(x)) > value(c.Note(y))
	})
	return order
}

func taggedByDate(c *Corpus, eligible func(int) bool) []Hit {
	var hits []Hit
	for i := 0; i < c.Len(); i++ {
		if eligible(i) {
			hits = append(hits, Hit{Doc: i, Score: 0})
		}
	}
	// newest first, then file order
	sort.SliceStable(hits, func(i, j int) bool {
		da, db := c.date(hits[i].Doc), c.date(hits[j].Doc)
		if !da.Equal(db) {
			return da.After(db)
		}
		return hits[i].Doc < hits[j].Doc
	})
	return hits
}

// newItem renders one entry line and counts it.
func newItem(c *Corpus, doc int, tier string, score float64, o *Options, cnt *tokenCtx) Item {
	n := c.Note(doc)
	it := Item{Note: n, Tier: tier, Score: score, doc: doc, AgeDays: ageDays(n, o)}
	switch {
	case o.contentOnly:
		it.Line = string(appendLine(nil, n))
		it.Tokens = cnt.cnt.Count(cleanText(n.Content))
	case o.Meta != nil:
		it.Line = metaLine(n, o.Meta, it.AgeDays)
		it.Tokens = cnt.cnt.Count(it.Line)
	default:
		it.Line = string(appendLine(nil, n))
		it.Tokens = cnt.line(doc, it.Line)
		it.mk.src = srcMark(n.Source)
		if it.day = dayOf(n); it.day != "" {
			it.dayText = o.dayText(it.day)
			it.mk.stale = it.AgeDays >= 0
			it.group = it.mk.suffix()
		}
	}
	return it
}
