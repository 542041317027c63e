package consolidate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// OpKind names an operation of a consolidation plan.
type OpKind string

// The operations. The first seven are also what the LLM may propose;
// pending, demote and hold are memctl's own.
const (
	OpAdd       OpKind = "add"       // a candidate becomes a new entry
	OpMerge     OpKind = "merge"     // candidates fold into an existing entry (provenance unioned, text maybe rewritten)
	OpSupersede OpKind = "supersede" // a candidate replaces an entry, which moves to the archive
	OpArchive   OpKind = "archive"   // an entry moves to the archive
	OpCompress  OpKind = "compress"  // several observations become one entry citing all
	OpConflict  OpKind = "conflict"  // a candidate contradicts an entry: both named in Pending confirmation
	OpNoop      OpKind = "noop"      // a candidate adds nothing to an entry that already says it
	OpPending   OpKind = "pending"   // a candidate is held for confirmation (reads like an instruction)
	OpDemote    OpKind = "demote"    // a core entry moves to a topic file (volume control)
	OpHold      OpKind = "hold"      // a candidate stays queued (invalid, secret, rejected operation)
	// OpQuarantine: a candidate that cannot be an entry (a secret,
	// invalid) failed max_attempts runs; it moves to .memctl/queue/held/,
	// never into the memory.
	OpQuarantine OpKind = "quarantine"
)

// Why a candidate is held (Hold.Kind). Every kind but HoldLimit and
// HoldPendingFull counts as a failed attempt.
const (
	HoldLLM     = "llm"     // no usable LLM decision (model error, no operation, operation rejected)
	HoldInvalid = "invalid" // the candidate fails validation
	HoldSecret  = "secret"  // the candidate contains a secret
	HoldLimit   = "limit"   // this run reached its archive limit; retried next run, not counted
	// HoldPendingFull: the candidate would go to Pending confirmation,
	// which holds consolidate.max_pending entries already; retried next
	// run, not counted.
	HoldPendingFull = "pending_full"
)

// Op is one operation of a plan as reported and written to the commit.
type Op struct {
	Kind       OpKind   `json:"op"`
	Entry      string   `json:"entry_id,omitempty"` // the entry written or changed
	Targets    []string `json:"target_ids"`         // entries archived, merged into or named
	Candidates []string `json:"candidate_ids"`
	Text       string   `json:"text,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	By         string   `json:"by,omitempty"` // "rule" or "llm"
}

// Decision is an operation the LLM proposed, translated from its integer
// ids to entry and candidate ids. Snap holds the raw text of every entry
// the model saw, so a hand edit since then invalidates the decision.
type Decision struct {
	Op         OpKind
	Target     string   // existing entry id (merge, supersede, archive, conflict, noop)
	Candidates []string // candidate ids consumed
	Entries    []string // source entry ids (compress)
	Text       string
	Category   string
	Reason     string
	Snap       map[string]string
	// keepText: the candidate is an agent's for the core
	// (consolidate.hold_agent_core); a merge keeps the entry's words.
	keepText bool
}

// Input is everything a plan is computed from. Plan is a pure function of
// it: no I/O, no clock.
type Input struct {
	Mem     *mdmem.Memory
	Cands   []*mdmem.Candidate
	Config  *mdmem.Config
	State   *mdmem.State // id high-water marks; nil = empty
	Now     time.Time
	Secrets SecretDetector

	// LLMCands are the candidates that wait for an LLM decision (from
	// Triage); Decisions are those decisions. Both nil in deterministic
	// mode, where ambiguous candidates are simply added.
	LLMCands  map[string]bool
	Decisions []*Decision
	LLMNotes  map[string]string // candidate id → why it has no decision

	// Vectors are embeddings of entry and candidate texts (by text; see
	// Embeddings); nil = words only.
	Vectors map[string][]float32

	// Measure counts the core's tokens as inject prints it (MeasureCore;
	// cmd gives inject.CoreMeasure); nil = estimated at bytes/4.
	Measure Measure
	// Retrieval ranks the memory's entries for a candidate's neighbours
	// (cmd gives inject.Retrieval); nil = the rule's finds and the
	// embedding ranking only.
	Retrieval Retrieval

	// Usage is how much the agent used each entry (ReadUsage); it keeps
	// used entries in the core when volume control demotes. nil = none.
	// LoadUsage, when set and Usage is nil, supplies it the first time
	// volume control needs it (reading a long inject log is the costly
	// part, and most runs demote nothing).
	Usage     map[string]Use
	LoadUsage func() map[string]Use
	// Attempts is, per candidate id, how many earlier runs failed on it
	// (held for a reason other than the archive limit). A candidate whose
	// failures reach consolidate.max_attempts with this run leaves the
	// queue: to Pending confirmation, or, when it cannot be an entry
	// (secret, invalid), to Plan.Quarantine.
	Attempts map[string]int

	// base, when set, is the match cache: Mem holds MEMORY.md and some
	// topic files only, the rest is looked up in the cache and parsed
	// when a lookup returns one of its entries (consolidate's Run; nil:
	// Mem is the whole memory).
	base *matchBase
}

// entries is how many entries the memory holds: those of Mem, with those
// of the match cache's files not parsed.
func (in *Input) entries() int {
	n := len(in.Mem.Entries())
	if in.base != nil {
		n += in.base.entries - in.base.loadedEntries()
	}
	return n
}

// Hold is a candidate left in the queue (or quarantined), with the reason.
type Hold struct {
	Candidate string `json:"candidate_id"`
	Reason    string `json:"reason"`
	Kind      string `json:"kind"`               // HoldLLM, HoldInvalid, HoldSecret, HoldLimit, HoldPendingFull
	Attempts  int    `json:"attempts,omitempty"` // failed runs, this one included (not for HoldLimit, HoldPendingFull)
}

// Size is the size of the core profile.
type Size struct {
	Lines  int `json:"lines"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"` // as inject prints the core, with inject.tokenizer (MeasureCore with a Measure); CoreSize alone estimates bytes/4
}

// String formats the size as lines, bytes and estimated tokens.
func (s Size) String() string {
	return fmt.Sprintf("%d lines, %d bytes, ~%d tokens", s.Lines, s.Bytes, s.Tokens)
}

// PendingCount is how many entries wait in Pending confirmation, against
// the cap consolidate.max_pending, and how many candidates stay queued
// because it is full.
type PendingCount struct {
	Entries int `json:"entries"`
	Max     int `json:"max"`
	Waiting int `json:"waiting"` // candidates held this run because it is full
}

// String formats the count for the terminal.
func (c PendingCount) String() string {
	s := fmt.Sprintf("%d of at most %d (consolidate.max_pending)", c.Entries, c.Max)
	if c.Waiting > 0 {
		s += fmt.Sprintf("; full: %d %s in the queue, confirm or reject some (memctl pending)", c.Waiting, plural(c.Waiting, "candidate waits", "candidates wait"))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PendingFullReason is why a candidate stays queued while Pending
// confirmation holds max entries.
func PendingFullReason(max int) string {
	return fmt.Sprintf("pending confirmation is full (%d): confirm or reject some", max)
}

// Limits of the core profile.
type Limits struct{ Lines, Bytes, Tokens int }

func (l Limits) over(s Size) bool {
	return l.Lines > 0 && s.Lines > l.Lines || l.Bytes > 0 && s.Bytes > l.Bytes || l.Tokens > 0 && s.Tokens > l.Tokens
}

// Plan is the outcome of consolidation before anything is written.
type Plan struct {
	Ops        []Op              `json:"operations"`
	Consumed   []string          `json:"consumed_candidate_ids"`
	Held       []Hold            `json:"held"`
	Quarantine []Hold            `json:"quarantine"` // to move to .memctl/queue/held/ (not consumed)
	Entries    []string          `json:"entry_ids"`  // entry ids written or changed
	Files      map[string][]byte `json:"-"`          // memory-relative path → new content
	CoreBefore Size              `json:"core_before"`
	CoreAfter  Size              `json:"core_after"` // without Pending confirmation (never injected)
	// Pending is how full Pending confirmation is after the plan.
	Pending  PendingCount `json:"pending_confirmation"`
	Warnings []string     `json:"warnings"`
}

// Count returns how many operations of kind k the plan holds.
func (p *Plan) Count(k OpKind) int {
	n := 0
	for _, o := range p.Ops {
		if o.Kind == k {
			n++
		}
	}
	return n
}

// edit is the new state of an existing entry.
type edit struct {
	old     *mdmem.Entry
	e       *mdmem.Entry  // working copy
	dest    *mdmem.Target // nil: stays where it is
	changed bool
}

// addition is a new entry.
type addition struct {
	e      *mdmem.Entry
	target mdmem.Target
	title  string // title if it creates a topic file
}

type planner struct {
	// err is the first id allocation failure (an id prefix at its
	// largest number): the plan is refused, nothing written.
	err      error
	in       *Input
	cfg      *mdmem.Config
	now      time.Time
	today    time.Time
	alloc    *mdmem.IDAllocator
	idx      *index
	edits    map[*mdmem.Entry]*edit
	order    []*edit
	adds     []*addition
	addByID  map[string]*addition
	consumed map[string]bool
	held     map[string]bool
	cands    map[string]*mdmem.Candidate
	archived int // existing entries archived
	archCap  int
	pendingN int // entries in Pending confirmation, planned ones included
	ops      []Op
	holds    []Hold
	quar     []Hold
	warn     []string
	rejected map[*Decision]string
	byCand   map[string]*Decision
	triage   bool               // collect ambiguous candidates instead of deciding
	llmMode  bool               // triage for an LLM run: number changes are ambiguous
	amb      map[string][]*item // candidate id → related items (triage)
	itemOf   map[*mdmem.Entry]*item
	search   func(query string, n int) []string // Input.Retrieval over the memory (triage), built on first use
	// liveCount: live entries per category and scope (liveOf).
	liveCount map[string]int
	// total is how many entries the memory holds (Memory.Entries, with
	// those of the match cache).
	total int

	// batchArchived counts candidates of this run that go to the archive
	// by rule (a planned addition superseded by a later candidate, a
	// candidate older than the entry it restates); batchCap bounds it.
	batchArchived int
	batchCap      int
}

// ArchiveCap is the most entries one run may archive: the configured share
// of all entries, at least one when the entry is replaced (supersede,
// compress), so that a small memory can still be updated.
func ArchiveCap(cfg *mdmem.Config, entries int) int {
	n := int(cfg.Consolidate.MaxArchiveShare * float64(entries))
	if n < 1 && cfg.Consolidate.MaxArchiveShare > 0 {
		n = 1
	}
	return n
}

// PlainArchiveCap is the most entries one run may archive without a
// replacement (the LLM's archive operation): the configured share, rounded
// down, with no minimum.
func PlainArchiveCap(cfg *mdmem.Config, entries int) int {
	return int(cfg.Consolidate.MaxArchiveShare * float64(entries))
}

// CoreLimits are the limits of the core profile from the configuration.
func CoreLimits(cfg *mdmem.Config) Limits {
	l := Limits{Lines: cfg.Inject.CoreMaxLines, Bytes: cfg.Inject.CoreMaxBytes, Tokens: cfg.Consolidate.CoreMaxTokens}
	return l
}

func newPlanner(in *Input) *planner {
	st := in.State
	if st == nil {
		st = &mdmem.State{LastID: map[string]int{}}
	} else {
		st = st.Clone()
	}
	if in.Secrets == nil {
		in.Secrets = Secrets{}
	}
	all := in.Mem.Entries()
	total := in.entries()
	if in.base != nil {
		in.base.idMarks(st)
	}
	p := &planner{in: in, cfg: in.Config, now: in.Now.UTC(), alloc: mdmem.NewIDAllocator(st, in.Mem), total: total,
		idx: newIndex(len(all) + len(in.Cands)), edits: map[*mdmem.Entry]*edit{}, addByID: map[string]*addition{},
		consumed: map[string]bool{}, held: map[string]bool{}, cands: map[string]*mdmem.Candidate{},
		rejected: map[*Decision]string{}, byCand: map[string]*Decision{}, itemOf: map[*mdmem.Entry]*item{}}
	p.today = time.Date(p.now.Year(), p.now.Month(), p.now.Day(), 0, 0, 0, 0, time.UTC)
	p.archCap = ArchiveCap(in.Config, total)
	p.batchCap = ArchiveCap(in.Config, len(in.Cands))
	for _, e := range in.Mem.Main.Entries {
		if e.Place == mdmem.PlacePending {
			p.pendingN++
		}
	}
	if in.base != nil {
		p.idx.base = newPlanBase(context.Background(), in.base, func(it *item) { p.itemOf[it.entry] = it })
	}
	for _, d := range in.Mem.Docs() {
		rank := 0 // MEMORY.md
		if d.Topic != "" && in.base != nil {
			if in.base.cached(d.Topic) {
				continue // its entries are the base's
			}
			rank = in.base.rank(d.Topic)
		}
		n := 0
		for _, e := range d.Entries {
			if e.ID == "" || e.Place == mdmem.PlaceOther {
				continue
			}
			it := newItem(e.Content, e.Category, e.Scope)
			it.entry = e
			if in.base == nil {
				p.idx.addEntry(it, int64(len(p.idx.items)))
			} else {
				p.idx.addEntry(it, ordOf(rank, n))
			}
			n++
			p.itemOf[e] = it
		}
	}
	for _, c := range in.Cands {
		p.cands[c.ID] = c
	}
	return p
}

// Compute runs the pipeline over in and returns the plan with the new file
// contents. It never writes; it fails only on an internal inconsistency
// (then nothing must be written).
func Compute(in *Input) (*Plan, error) {
	plan, err := computePlan(in)
	if err == nil && in.base != nil {
		err = in.base.checkCreated(plan.Files)
	}
	return plan, err
}

func computePlan(in *Input) (*Plan, error) {
	p := newPlanner(in)
	p.checkDecisions()
	for _, c := range in.Cands {
		if p.consumed[c.ID] || p.held[c.ID] {
			continue
		}
		p.candidate(c)
	}
	p.archiveDecisions()
	p.expire()
	plan, err := p.finish()
	if b := p.idx.base; b != nil {
		if b.err == nil {
			b.err = b.mb.readErr()
		}
		if b.err != nil {
			return nil, b.err
		}
	}
	if p.err != nil {
		return nil, fmt.Errorf("%w (fix .memctl/state.json or the hand-written id that holds it)", p.err)
	}
	return plan, err
}

// place returns where an item's entry will be after the plan.
func (p *planner) place(it *item) mdmem.Place {
	if it.add != nil {
		return it.add.target.Place
	}
	if ed := p.edits[it.entry]; ed != nil && ed.dest != nil {
		return ed.dest.Place
	}
	return it.entry.Place
}

func live(pl mdmem.Place) bool {
	return pl == mdmem.PlaceCore || pl == mdmem.PlacePending || pl == mdmem.PlaceTopic
}

func isRejected(e *mdmem.Entry) bool {
	for _, n := range e.Notes {
		if strings.HasPrefix(strings.ToLower(n), "rejected") {
			return true
		}
	}
	return false
}

func (p *planner) hold(c *mdmem.Candidate, kind, reason string) {
	if p.held[c.ID] || p.consumed[c.ID] {
		return
	}
	p.held[c.ID] = true
	if len(p.in.Secrets.Find(reason)) > 0 {
		// A reason quoting the model's answer is stored (attempts cache)
		// and may reach a commit body: never with a secret in it.
		reason = kind + ": the reason quoted a secret and is left out"
	}
	p.holds = append(p.holds, Hold{Candidate: c.ID, Reason: reason, Kind: kind})
	p.ops = append(p.ops, Op{Kind: OpHold, Candidates: []string{c.ID}, Reason: reason, By: "rule"})
}

// candError is why a candidate cannot become an entry.
type candError struct {
	kind string // HoldInvalid or HoldSecret
	msg  string
}

// Error returns why the candidate was held.
func (e *candError) Error() string { return e.msg }

func holdKind(err error) string {
	var ce *candError
	if errors.As(err, &ce) {
		return ce.kind
	}
	return HoldInvalid
}

// noDecisionNote starts the Pending note of a candidate that left the
// queue after max_attempts runs without a usable LLM decision.
const noDecisionNote = "no usable LLM decision in"

// expire counts this run's failure of every held candidate and moves
// those that reached consolidate.max_attempts out of the queue: to
// Pending confirmation when the candidate can be an entry, else to the
// quarantine (never into the memory: a secret stays out of git).
func (p *planner) expire() {
	maxN := p.cfg.Consolidate.MaxAttempts
	gone := map[string]bool{}
	keep := p.holds[:0]
	for _, h := range p.holds {
		if h.Kind == HoldLimit || h.Kind == HoldPendingFull {
			keep = append(keep, h)
			continue
		}
		h.Attempts = p.in.Attempts[h.Candidate] + 1
		c := p.cands[h.Candidate]
		if maxN <= 0 || h.Attempts < maxN || c == nil {
			keep = append(keep, h)
			continue
		}
		if h.Kind == HoldLLM && p.pendingFull() {
			// It would go to Pending confirmation, which is full: it stays
			// queued, and its count stays, so it goes there once there is
			// room.
			h.Kind = HoldPendingFull
			h.Reason = fmt.Sprintf("%s %d runs; %s", noDecisionNote, h.Attempts, PendingFullReason(p.cfg.Consolidate.MaxPending))
			h.Attempts = 0
			keep = append(keep, h)
			continue
		}
		switch h.Kind {
		case HoldLLM:
			ce, err := p.candEntry(c)
			if err != nil { // cannot happen: it reached the LLM stage
				h.Kind, h.Reason = holdKind(err), err.Error()
				p.quar = append(p.quar, h)
				break
			}
			delete(p.held, c.ID)
			// The note is memctl's own words: the last reason may quote
			// the model or the server, and Pending is read by the agent.
			p.pending(c, ce, OpPending, fmt.Sprintf("%s %d runs: %s", noDecisionNote, h.Attempts, llmFailure(h.Reason)), nil, "rule")
			p.ops[len(p.ops)-1].Reason += "; last: " + mdmem.OneLine(h.Reason)
		default:
			p.quar = append(p.quar, h)
			p.ops = append(p.ops, Op{Kind: OpQuarantine, Candidates: []string{c.ID},
				Reason: fmt.Sprintf("failed %d runs (%s); moved to %s/, never into the memory: edit it and move it back to %s/, or delete it", h.Attempts, mdmem.OneLine(h.Reason), HeldDir, mdmem.QueueDir), By: "rule"})
		}
		gone[c.ID] = true
	}
	p.holds = keep
	if len(gone) == 0 {
		p.annotateHolds(maxN)
		return
	}
	ops := p.ops[:0]
	for _, o := range p.ops {
		if o.Kind == OpHold && len(o.Candidates) == 1 && gone[o.Candidates[0]] {
			continue
		}
		ops = append(ops, o)
	}
	p.ops = ops
	p.annotateHolds(maxN)
}

// llmFailure names the kind of an LLM hold reason without quoting it.
func llmFailure(reason string) string {
	switch {
	case strings.HasPrefix(reason, "waits for an LLM decision: the model gave no operation"):
		return "the model gave no operation for it"
	case strings.HasPrefix(reason, "LLM "):
		op, _, _ := strings.Cut(strings.TrimPrefix(reason, "LLM "), " ")
		if _, ok := map[string]bool{"add": true, "merge": true, "supersede": true, "archive": true, "compress": true, "conflict": true, "noop": true}[op]; ok {
			return "its " + op + " operation was rejected"
		}
		return "its operation was rejected"
	}
	return "the model call or its answer failed"
}

// annotateHolds adds the attempt count to the hold operations.
func (p *planner) annotateHolds(maxN int) {
	n := map[string]Hold{}
	for _, h := range p.holds {
		n[h.Candidate] = h
	}
	for i, o := range p.ops {
		if o.Kind != OpHold || len(o.Candidates) != 1 {
			continue
		}
		h, ok := n[o.Candidates[0]]
		if ok && h.Kind == HoldPendingFull {
			p.ops[i].Reason = h.Reason
			continue
		}
		if !ok || h.Kind == HoldLimit || maxN <= 0 {
			continue
		}
		next := "Pending confirmation"
		if h.Kind != HoldLLM {
			next = HeldDir + "/"
		}
		p.ops[i].Reason += fmt.Sprintf(" (failed run %d of %d, then to %s)", h.Attempts, maxN, next)
	}
}

func (p *planner) consume(ids ...string) {
	for _, id := range ids {
		p.consumed[id] = true
	}
}

// edit returns the working copy of an existing entry.
func (p *planner) edit(e *mdmem.Entry) *edit {
	if ed := p.edits[e]; ed != nil {
		return ed
	}
	ed := &edit{old: e, e: cloneEntry(e)}
	p.edits[e] = ed
	p.order = append(p.order, ed)
	return ed
}

func cloneEntry(e *mdmem.Entry) *mdmem.Entry {
	c := *e
	c.Scope = append([]string(nil), e.Scope...)
	c.Refs = append([]string(nil), e.Refs...)
	c.Tags = append([]string(nil), e.Tags...)
	c.See = append([]string(nil), e.See...)
	c.Notes = append([]string(nil), e.Notes...)
	return &c
}

// candEntry validates a candidate and turns it into an entry (without id).
func (p *planner) candEntry(c *mdmem.Candidate) (*mdmem.Entry, error) {
	cc := *c
	if err := cc.Normalize(p.now, p.cfg.Add.MaxContentBytes, nil); err != nil {
		return nil, &candError{HoldInvalid, fmt.Sprintf("invalid candidate: %v", err)}
	}
	if s := p.in.Secrets.Find(cc.Content + " " + cc.Source + " " + strings.Join(cc.Refs, " ") + " " + strings.Join(cc.Tags, " ") + " " + strings.Join(cc.Scope, " ") + " " + cc.Topic); len(s) > 0 {
		return nil, &candError{HoldSecret, fmt.Sprintf("contains a secret (%s); edit or remove the queue file", strings.Join(s, ", "))}
	}
	return cc.Entry(""), nil
}

func (p *planner) newID(cat string) string {
	id, err := p.alloc.Next(cat)
	if err != nil && p.err == nil {
		p.err = err
	}
	if err != nil {
		return cat + "-unallocated" // never written: Compute returns p.err
	}
	return id
}

func maxRefs(refs []string) []string {
	const limit = 32
	refs = union(nil, refs)
	if len(refs) <= limit {
		return refs
	}
	return append(refs[:limit/2:limit/2], refs[len(refs)-limit/2:]...)
}

func union(a []string, b ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range append([][]string{a}, b...) {
		for _, s := range l {
			if s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// foldProvenance adds a candidate's provenance to e: refs and tags
// unioned, the candidate cited, and, when refresh, the date moved
// forward. refresh says the candidate confirms e's value: by rule only
// when the texts are equal (a reworded near duplicate must not make a
// stale value look newly confirmed); the LLM's merge and noop judge it.
func foldProvenance(e *mdmem.Entry, c *mdmem.Candidate, ce *mdmem.Entry, refresh bool) {
	e.Refs = maxRefs(union(e.Refs, ce.Refs, []string{c.ID}))
	e.Tags = union(e.Tags, ce.Tags)
	if d := ce.Date(); refresh && d.After(e.Date()) && d.After(e.Created) {
		e.Updated = d
	}
}

// mergeInto folds candidate c into the entry of item it; refresh as for
// foldProvenance.
func (p *planner) mergeInto(it *item, c *mdmem.Candidate, ce *mdmem.Entry, kind OpKind, reason string, refresh bool, by string) {
	var e *mdmem.Entry
	if it.add != nil {
		e = it.add.e
	} else {
		ed := p.edit(it.entry)
		ed.changed = true
		e = ed.e
	}
	foldProvenance(e, c, ce, refresh)
	p.consume(c.ID)
	p.ops = append(p.ops, Op{Kind: kind, Entry: e.ID, Targets: []string{e.ID}, Candidates: []string{c.ID}, Reason: reason, By: by})
}

func (p *planner) insert(e *mdmem.Entry, t mdmem.Target, cand string) *addition {
	a := &addition{e: e, target: t}
	p.adds = append(p.adds, a)
	p.addByID[e.ID] = a
	it := newItem(e.Content, e.Category, e.Scope)
	it.add = a
	it.cand = cand
	p.idx.addItem(it)
	return a
}

func targetFor(e *mdmem.Entry, topic string) mdmem.Target {
	return mdmem.TargetFor(e, topic)
}

// add makes a candidate a new entry at its default place.
func (p *planner) add(c *mdmem.Candidate, ce *mdmem.Entry, text, reason, by string) {
	if text != "" {
		ce.Content = mdmem.OneLine(text)
	}
	ce.ID = p.newID(ce.Category)
	p.insert(ce, targetFor(ce, c.Topic), c.ID)
	p.consume(c.ID)
	p.ops = append(p.ops, Op{Kind: OpAdd, Entry: ce.ID, Candidates: []string{c.ID}, Text: ce.Content, Reason: reason, By: by})
}

// pendingFull reports whether Pending confirmation holds
// consolidate.max_pending entries.
func (p *planner) pendingFull() bool { return p.pendingN >= p.cfg.Consolidate.MaxPending }

// pending puts a candidate into Pending confirmation with why; when that
// is full, the candidate stays queued (HoldPendingFull) and pending
// reports false.
func (p *planner) pending(c *mdmem.Candidate, ce *mdmem.Entry, kind OpKind, why string, see []string, by string) bool {
	if p.pendingFull() {
		p.hold(c, HoldPendingFull, PendingFullReason(p.cfg.Consolidate.MaxPending))
		return false
	}
	p.pendingN++
	ce.ID = p.newID(ce.Category)
	ce.See = union(ce.See, see)
	ce.Notes = append(ce.Notes, "pending user confirmation", why)
	p.insert(ce, mdmem.Target{Place: mdmem.PlacePending}, c.ID)
	p.consume(c.ID)
	p.ops = append(p.ops, Op{Kind: kind, Entry: ce.ID, Targets: see, Candidates: []string{c.ID}, Text: ce.Content, Reason: why, By: by})
	return true
}

// archiveEntry moves an existing entry (or planned addition) to the
// archive, superseded by newID when set. It reports false when the
// run's archive cap is reached.
func (p *planner) archiveEntry(it *item, newID, reason string, count bool) bool {
	if it.add != nil {
		if count && !p.countBatchArchive() {
			return false
		}
		it.add.target = mdmem.Target{Place: mdmem.PlaceArchive}
		if newID != "" {
			it.add.e.SupersededBy, it.add.e.SupersededOn = newID, p.today
		}
		return true
	}
	if count {
		if p.archived+1 > p.archCap {
			return false
		}
		p.archived++
	}
	ed := p.edit(it.entry)
	ed.changed = true
	ed.dest = &mdmem.Target{Place: mdmem.PlaceArchive}
	if newID != "" {
		ed.e.SupersededBy, ed.e.SupersededOn = newID, p.today
	} else if reason != "" {
		ed.e.Notes = append(ed.e.Notes, "archived "+mdmem.FormatTime(p.today)+": "+reason)
	}
	return true
}

// countBatchArchive counts one candidate of this run going to the
// archive; it reports false when the run reached its limit for those.
func (p *planner) countBatchArchive() bool {
	if p.batchArchived+1 > p.batchCap {
		return false
	}
	p.batchArchived++
	return true
}

// canArchive reports whether the archive cap lets the entry of it go to
// the archive.
func (p *planner) canArchive(it *item) bool {
	if it.add != nil {
		return p.batchArchived+1 <= p.batchCap
	}
	return p.archived+1 <= p.archCap
}

// supersede makes candidate c replace the entry of it: the old entry goes
// to the archive marked "superseded by" the new one, in the same commit.
func (p *planner) supersede(it *item, c *mdmem.Candidate, ce *mdmem.Entry, text, reason, by string) bool {
	old := it.current()
	if !p.canArchive(it) {
		return false
	}
	if text != "" {
		ce.Content = mdmem.OneLine(text)
	}
	ce.ID = p.newID(ce.Category)
	t := targetFor(ce, c.Topic)
	if old.Place == mdmem.PlaceTopic && c.Topic == "" && it.add == nil {
		t = mdmem.Target{Place: mdmem.PlaceTopic, Topic: old.Topic}
	} else if it.add != nil && it.add.target.Place != mdmem.PlaceArchive {
		t = it.add.target
	}
	p.archiveEntry(it, ce.ID, "", true)
	p.insert(ce, t, c.ID)
	p.consume(c.ID)
	p.ops = append(p.ops, Op{Kind: OpSupersede, Entry: ce.ID, Targets: []string{old.ID}, Candidates: []string{c.ID}, Text: ce.Content, Reason: reason, By: by})
	return true
}

func (p *planner) liveOK(it *item) bool { return live(p.place(it)) }

// liveByID returns the live item with the id (nil if none or id is "").
func (p *planner) liveByID(id string) *item {
	if id == "" {
		return nil
	}
	for _, it := range p.idx.items {
		if it.current().ID == id && p.liveOK(it) {
			return it
		}
	}
	if b := p.idx.base; b != nil {
		if s, i := b.mb.findID(id); s != nil && i >= 0 {
			if it := b.materialize(s.base + i); it != nil && it.current().ID == id && p.liveOK(it) {
				return it
			}
		}
	}
	return nil
}

// find returns the entry with the id; one the match cache holds is its
// item's entry (read alone, or from its parsed file), so that an entry
// has one *mdmem.Entry in a plan (nil if none).
func (p *planner) find(id string) *mdmem.Entry {
	b := p.idx.base
	if b == nil {
		return p.in.Mem.Find(id)
	}
	s, i := b.mb.findID(id)
	switch {
	case s == nil:
		return p.in.Mem.Find(id)
	case i >= 0:
		if it := b.materialize(s.base + i); it != nil {
			return it.entry
		}
		return nil
	}
	if err := b.mb.load(context.Background(), s.slug); err != nil {
		b.fail(err)
		return nil
	}
	return p.in.Mem.Find(id)
}

// itemOfEntry returns the item of an entry the exact-text index holds
// (nil for one without words, or not indexed).
func (p *planner) itemOfEntry(e *mdmem.Entry) *item {
	if it := p.indexed(e); it != nil && it.norm != "" {
		return it
	}
	return nil
}

// indexed returns the item of an entry (nil if the matcher does not
// index it), materializing it from the match cache.
func (p *planner) indexed(e *mdmem.Entry) *item {
	it := p.itemOf[e]
	if b := p.idx.base; it == nil && b != nil && e.ID != "" {
		if s, i := b.mb.findID(e.ID); s != nil && i >= 0 {
			if it = b.materialize(s.base + i); it != nil && it.entry != e {
				it = nil
			}
		}
	}
	return it
}

// candidate runs the rule stages on one candidate, then the LLM decision
// if it waits for one. Each stage returns true when it settled the
// candidate.
func (p *planner) candidate(c *mdmem.Candidate) {
	ce, err := p.candEntry(c)
	if err != nil {
		p.hold(c, holdKind(err), err.Error())
		return
	}
	t := &candTurn{c: c, ce: ce, q: newItem(ce.Content, ce.Category, ce.Scope)}
	// The person's words, as memctl saw them typed, are held for what no
	// one types by accident only; everyone else's for their wording too.
	t.why = mdmem.InstructionNoteSeen(ce.Content, mdmem.PersonSeen(c))
	t.instr = t.why != ""
	if p.exactDuplicate(t) || p.nearDuplicate(t) || p.waitsForPerson(t) || p.directUpdateRule(t) || p.llmTurn(t) {
		return
	}
	p.mayUpdate(t)
}

// candTurn is one candidate going through the rule stages: its entry,
// its index item, whether it is instruction-like (and why), and the live
// entry it may update (upd, with its similarity), found on the way.
type candTurn struct {
	c     *mdmem.Candidate
	ce    *mdmem.Entry
	q     *item
	instr bool
	why   string
	upd   *item
	cmp   comparison // compare(upd, q)
}

// exactDuplicate is stage 1: the same tokens (case, spacing and
// punctuation aside, but for the case of a unit; symbols such as ">=",
// "C++", "$" count) and the same other symbols ("&&" / ";", "✓" / "✗")
// as an entry: sameMarks ("100 MB" / "100 Mb" differ). It merges into a live entry of the same category, is dropped
// when it repeats a text a person rejected (in any category), and waits
// for a person when it restates an archived entry.
func (p *planner) exactDuplicate(t *candTurn) bool {
	c, ce, q := t.c, t.ce, t.q
	same := func(it *item) bool { return p.compare(it, q).v == factDuplicate }
	if it := p.idx.findExact(q, func(it *item) bool {
		pl := p.place(it)
		return it.cat == q.cat && live(pl) && (!t.instr || pl == mdmem.PlacePending) && same(it)
	}); it != nil {
		p.mergeKeepingNewerWording(it, c, ce, "exact duplicate of "+it.current().ID, true)
		return true
	}
	// A text a person rejected is not re-added, in any category.
	if it := p.idx.findExact(q, func(it *item) bool {
		return p.place(it) == mdmem.PlaceArchive && isRejected(it.current()) && same(it)
	}); it != nil {
		cur := it.current()
		p.consume(c.ID)
		p.ops = append(p.ops, Op{Kind: OpNoop, Targets: []string{cur.ID}, Candidates: []string{c.ID}, Reason: "repeats " + cur.ID + ", which was rejected; not re-added", By: "rule"})
		return true
	}
	if it := p.idx.findExact(q, func(it *item) bool {
		return it.cat == q.cat && p.place(it) == mdmem.PlaceArchive && same(it)
	}); it != nil && !t.instr {
		cur := it.current()
		if ed := p.edits[it.entry]; it.add == nil && ed != nil {
			cur = ed.e // archived by this run: its planned edit names the entry that superseded it
		}
		see := union([]string{cur.ID}, []string{cur.SupersededBy})
		why := "restates archived " + cur.ID + supersededNote(cur)
		if by := p.liveByID(cur.SupersededBy); by != nil {
			// Back to the value an entry replaced: the newest statement
			// may update the entry in force (confirm supersedes it).
			why = fmt.Sprintf("may update %s: %s; confirm to supersede %s, or reject", by.current().ID, why, by.current().ID)
		}
		p.pending(c, ce, OpConflict, why, see, "rule")
		return true
	}
	return false
}

// nearDuplicate is stage 2: the live entries of the candidate's category
// that share most of its words (nearLookup) are compared with it
// (compare). The first that states the same fact takes it in (a near
// duplicate); otherwise the closest one that states the same with a new
// value (factUpdate), or with a change rules cannot class (factChanged),
// is what the candidate may update (t.upd): the next stages supersede it
// by rule, show it to the model first, or name it in Pending.
func (p *planner) nearDuplicate(t *candTurn) bool {
	c, ce, q := t.c, t.ce, t.q
	accepts := func(cat string, pl mdmem.Place) bool {
		return live(pl) && cat == q.cat && (!t.instr || pl == mdmem.PlacePending)
	}
	its, js := p.idx.best(q, nearLookup, 8, func(it *item) bool { return accepts(it.cat, p.place(it)) },
		func(cat, _ string, pl mdmem.Place) bool { return accepts(cat, pl) })
	for i, it := range its {
		cmp := p.compare(it, q)
		switch {
		case cmp.v == factDuplicate:
			p.mergeKeepingNewerWording(it, c, ce, fmt.Sprintf("near duplicate of %s (similarity %.2f, same content words)", it.current().ID, js[i]), false)
			return true
		case t.instr:
		case cmp.v == factUpdate && (t.upd == nil || t.cmp.v != factUpdate), cmp.v == factChanged && t.upd == nil:
			t.upd, t.cmp = it, cmp
		}
	}
	return false
}

// nearLookup is the shingle Jaccard at or above which an entry is
// compared with a candidate as a possible near duplicate or new value:
// a cut for the index lookup only (compare decides, on the 8 closest),
// low enough for a statement with several new values ("… on Mondays and
// Thursdays" / "… on Tuesdays and Wednesdays now": 0.24).
const nearLookup = 0.15

// mergeKeepingNewerWording merges a candidate into an entry that states
// the same: the newer wording survives (and, being the candidate's text,
// its date), so a text that differs in case or a symbol the comparison
// leaves out ("100 MB" / "100 Mb", "✓" / "✗") is never dropped when it is
// the newer. refresh dates the entry by the candidate even when the text
// stays (an exact restatement confirms it).
func (p *planner) mergeKeepingNewerWording(it *item, c *mdmem.Candidate, ce *mdmem.Entry, reason string, refresh bool) {
	text := newerWording(it.current(), []*mdmem.Entry{ce}, p.now)
	p.mergeInto(it, c, ce, OpMerge, reason, refresh || text != "", "rule")
	if text != "" {
		cur := it.current()
		if ed := p.edits[it.entry]; it.add == nil && ed != nil {
			cur = ed.e
		}
		cur.Content = text
		p.ops[len(p.ops)-1].Text = text
	}
}

// waitsForPerson is stage 3: instruction-like text is never promoted: it
// waits for a person. A near repeat of one already waiting (similarity at
// least mdmem.ImportFoldMin, as import folds; the same scope and category;
// the same polarity) folds into it: variants of one payload are one
// question, not one each. An agent's preference or constraint
// waits for a person too (consolidate.hold_agent_core).
func (p *planner) waitsForPerson(t *candTurn) bool {
	c, ce, q := t.c, t.ce, t.q
	if t.instr {
		negated := mdmem.Negated(mdmem.FoldWords(c.Content))
		if its, js := p.idx.best(q, mdmem.ImportFoldMin, 1, func(it *item) bool {
			ok, _ := instructionLike(it.current().Content)
			return p.place(it) == mdmem.PlacePending && it.scope == q.scope && it.cat == q.cat && ok &&
				mdmem.Negated(mdmem.FoldWords(it.current().Content)) == negated
		}, func(cat, _ string, pl mdmem.Place) bool { return pl == mdmem.PlacePending && cat == q.cat }); len(its) > 0 {
			p.mergeInto(its[0], c, ce, OpMerge, fmt.Sprintf("near repeat of instruction-like %s (similarity %.2f)", its[0].current().ID, js[0]), false, "rule")
			return true
		}
		p.pending(c, ce, OpPending, t.why, nil, "rule")
		return true
	}
	if mdmem.HoldsAgentCore(ce.Category, ce.Source, p.cfg.Consolidate.HoldAgentCore) {
		if p.judgedAgentCore(t) {
			return true
		}
		// It names the entry it may update, as for any other source:
		// confirming the new value then archives the old one, rather
		// than leave two contradicting live values.
		upd, why := p.mayUpdateOf(t, true)
		var see []string
		if upd != nil {
			see = []string{upd.current().ID}
		}
		note := mdmem.AgentCoreNote
		if mdmem.ClaimsPerson(c) {
			note = mdmem.UnseenPersonNote
		}
		if p.pending(c, ce, OpPending, note, see, "rule") && why != "" {
			ce.Notes = append(ce.Notes, why)
		}
		return true
	}
	return false
}

// judgedAgentCore lets the model judge an agent's candidate for the core
// as any other (it is shown with its neighbours), within what the person
// keeps: a duplicate the model confirms folds into the entry, which keeps
// its words; a new value the model finds waits in Pending naming the
// entry it updates (confirm supersedes it). It reports false when there
// is no usable judgement (the rules' Pending note then).
func (p *planner) judgedAgentCore(t *candTurn) bool {
	c := t.c
	if p.triage {
		p.recordNeighbours(t)
		return false
	}
	d := p.byCand[c.ID]
	if !p.in.LLMCands[c.ID] || d == nil || p.rejected[d] != "" || len(d.Candidates) != 1 || d.Target == "" {
		return false
	}
	switch d.Op {
	case OpMerge, OpNoop:
		kept := *d
		kept.keepText, kept.Text = true, ""
		if err := p.tryDecide(&kept); err == nil {
			return true
		}
	case OpSupersede, OpConflict:
		if it := p.liveByID(d.Target); it != nil && it.entry != nil {
			why := fmt.Sprintf("may update %s: the model judged it a new value (%s); confirm to supersede %s, or reject", d.Target, p.safeReason(d.Reason), d.Target)
			if p.pending(c, t.ce, OpPending, mdmem.AgentCoreNote, []string{d.Target}, "llm") {
				t.ce.Notes = append(t.ce.Notes, why)
			}
			return true
		}
	}
	return false
}

// recordNeighbours records, when triaging, the entries retrieval finds
// for a candidate and the earlier candidates of this run it resembles:
// what the model is shown with it.
func (p *planner) recordNeighbours(t *candTurn) {
	its := p.neighbors(t.c, t.q, t.upd)
	cs, _ := p.idx.best(t.q, p.cfg.Consolidate.Related, 4, func(it *item) bool { return it.cand != "" && p.liveOK(it) }, nil)
	if len(its)+len(cs) > 0 {
		p.amb[t.c.ID] = append(its, cs...)
	}
}

// directUpdateRule is stage 4, a direct update: the candidate names a
// live entry of its category in its refs, or states the same as one with
// one other number. Newer wins; with an LLM, the number case is the
// model's call.
func (p *planner) directUpdateRule(t *candTurn) bool {
	c, ce := t.c, t.ce
	it := p.directUpdate(t)
	if it == nil {
		return false
	}
	old := it.current()
	if !ce.Date().Before(mdmem.TrustedDate(old.Date(), p.now)) {
		if p.supersede(it, c, ce, "", "same statement as "+old.ID+" with new values; newer wins", "rule") {
			return true
		}
		p.hold(c, HoldLimit, "would supersede "+old.ID+" but this run reached its archive limit; retried next run")
		return true
	}
	if !p.archiveOlder(c, ce, old, "rule") {
		p.hold(c, HoldLimit, "older than "+old.ID+", to be archived, but this run reached its archive limit; retried next run")
	}
	return true
}

// archiveOlder files a candidate older than the live entry old, which
// states the newer value, straight into the archive as superseded by it:
// the newer value stays live, and the older one is on record. It reports
// false (nothing done) when the run reached its archive limit.
func (p *planner) archiveOlder(c *mdmem.Candidate, ce *mdmem.Entry, old *mdmem.Entry, by string) bool {
	if !p.countBatchArchive() {
		return false
	}
	ce.ID = p.newID(ce.Category)
	ce.SupersededBy, ce.SupersededOn = old.ID, p.today
	p.insert(ce, mdmem.Target{Place: mdmem.PlaceArchive}, c.ID)
	p.consume(c.ID)
	p.ops = append(p.ops, Op{Kind: OpArchive, Entry: ce.ID, Targets: []string{old.ID}, Candidates: []string{c.ID}, Text: ce.Content, Reason: "older than " + old.ID + ", which states newer values", By: by})
	return true
}

// llmTurn is stage 5: the LLM decides, with the entries retrieval finds
// for it and the earlier candidates of this run it resembles. When
// triaging, it records them; when the model was asked about the
// candidate, it applies the model's decision or holds the candidate.
func (p *planner) llmTurn(t *candTurn) bool {
	c := t.c
	if p.triage {
		p.recordNeighbours(t)
	}
	if !p.in.LLMCands[c.ID] {
		return false
	}
	d := p.byCand[c.ID]
	if d == nil {
		why := p.in.LLMNotes[c.ID]
		if why == "" {
			why = "the model gave no operation for it"
		}
		p.hold(c, HoldLLM, "waits for an LLM decision: "+why)
		return true
	}
	p.decide(d, c)
	return true
}

// mayUpdate is stage 6, without a model: a candidate that changes a word
// of a near duplicate, or that retrieval finds closely related to an
// entry of its category, may be a new value of it. The rules cannot tell
// an update from a compatible fact, so a person decides; two
// contradicting live values are never kept silently. Any other candidate
// is added.
func (p *planner) mayUpdate(t *candTurn) {
	// (With an LLM, a candidate reaches this point only when retrieval
	// found nothing for it, or the model was not asked.)
	if upd, why := p.mayUpdateOf(t, !p.triage && p.in.LLMCands == nil); upd != nil {
		p.pending(t.c, t.ce, OpConflict, why, []string{upd.current().ID}, "rule")
		return
	}
	p.add(t.c, t.ce, "", "new", "rule")
}

// mayUpdateOf returns the live entry a candidate may be a new value of
// (t.upd, the same statement with a change compare cannot class, or with
// related the entry retrieval finds on the same subject: relatedEntry)
// and the "may update" note that names it, which makes a person's
// confirm supersede it. upd is nil when there is none.
func (p *planner) mayUpdateOf(t *candTurn, related bool) (upd *item, why string) {
	c, ce, q := t.c, t.ce, t.q
	upd = t.upd
	if upd != nil {
		change := t.cmp.why
		if change == "" {
			change = "word order"
		}
		why = "nearly the same text, but " + change
	} else if related {
		if it, cmp := p.relatedEntry(c, q); it != nil {
			upd, why = it, fmt.Sprintf("on the same subject (it shares %.0f%% of the candidate's telling words)", 100*cmp.overlap)
		}
	}
	if upd == nil {
		return nil, ""
	}
	old := upd.current()
	age := "newer"
	if ce.Date().Before(old.Date()) {
		age = "older"
	}
	return upd, fmt.Sprintf("may update %s: %s, the candidate is %s; confirm to supersede %s, or reject", old.ID, why, age, old.ID)
}

// relatedEntry returns the entry retrieval ranks first for a candidate
// the rules could not settle, with compare's answer, when it is of the
// candidate's category and on the same subject (compare: related or
// more). Entries that state the same of another thing ("room 110 has a
// projector" for "room 111 has a projector") are passed over, not taken
// for the verdict: "room 111 has a projector" still conflicts with "room
// 111 has no projector" beside it; past one, only the same statement of
// the candidate's own thing counts. A candidate that says it adds to the
// entry ("… mango either") updates nothing.
func (p *planner) relatedEntry(c *mdmem.Candidate, q *item) (*item, comparison) {
	passed := false
	for _, it := range p.neighbors(c, q, nil) {
		if it.cat != q.cat {
			continue
		}
		cmp := p.compare(it, q)
		switch {
		case cmp.v == factAnother:
			passed = true
			continue
		case cmp.v == factChanged, cmp.v == factUpdate:
			return it, cmp
		case cmp.v == factRelated && !passed:
			return it, cmp
		case passed:
			// Past another thing's statement, only the same statement
			// of the candidate's own thing counts ("room 111 has no
			// projector"), not a looser relative.
			continue
		}
		return nil, comparison{} // the best neighbour of the category is not on the same subject
	}
	return nil, comparison{}
}

// directUpdate returns the live entry the candidate states a new value
// of: the entry its refs name, or without a model the same statement
// with new values of the same slot (compare: factUpdate), found by
// nearDuplicate. With a model, the latter is the model's call.
func (p *planner) directUpdate(t *candTurn) *item {
	c, q := t.c, t.q
	for _, r := range c.Refs {
		if e := p.find(strings.TrimSpace(r)); e != nil && e.Category == q.cat {
			if it := p.itemOfEntry(e); it != nil && p.liveOK(it) && it.scope == q.scope {
				return it
			}
		}
	}
	if p.in.LLMCands != nil || p.triage && p.llmMode {
		return nil
	}
	if t.upd != nil && t.cmp.v == factUpdate {
		return t.upd
	}
	return nil
}

// identifier reports whether the number toks[i] names a thing rather
// than stating a value: it follows an identifier noun ("room 110", "port
// 8080", "#5", "note number 007"), is zero-padded ("007") or starts with
// a letter ("v2", "web-03"). Such a change states another thing, not a
// new value of the same one.
func identifier(toks []string, i int) bool {
	t := toks[i]
	if r, _ := utf8.DecodeRuneInString(t); unicode.IsLetter(r) {
		return true
	}
	if len(t) > 1 && t[0] == '0' && strings.Trim(t, "0123456789") == "" {
		return true
	}
	if i > 1 && (toks[i-1] == "and" || toks[i-1] == "or") && identifier(toks, i-2) {
		return true // "hosts 3 and 4"
	}
	return i > 0 && identifierNouns[toks[i-1]]
}

// versionOfName reports whether the number toks[i] (tokens with their
// case) is the version in a product's name that says what a statement is
// about ("the Node 18 image has 2 GB", "Python 3.11 is the default"),
// rather than its value ("example code uses Python 3.11"): it follows a
// capitalised word, which follows a determiner, or starts the text and is
// followed by a verb such as "is". A new number there may be a new value
// (the default moved to Python 3.12) or another thing (the Node 20 image),
// which rules cannot tell apart.
func versionOfName(toks []string, i int) bool {
	if i == 0 {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(toks[i-1]); !unicode.IsUpper(r) {
		return false
	}
	if i == 1 {
		return i+1 < len(toks) && subjectVerbs[strings.ToLower(toks[i+1])]
	}
	return determiners[strings.ToLower(toks[i-2])]
}

// determiners open a noun phrase ("the Node 18 image"); subjectVerbs
// follow a statement's subject ("Python 3.11 is …").
var determiners, subjectVerbs = func() (map[string]bool, map[string]bool) {
	d, v := map[string]bool{}, map[string]bool{}
	for _, w := range strings.Fields(`the a an our their this that these those each every my your its his her`) {
		d[w] = true
	}
	for _, w := range strings.Fields(`is are was were has have had will must should can cannot does did runs uses needs takes stays remains`) {
		v[w] = true
	}
	return d, v
}()

// dateLike reports whether the number toks[i] is a date ("2026-01-05",
// "12/24", "december 24"), a year (1900-2099 after "the", "in", "since",
// … and not before a unit) or an IP address: it may be
// the statement's value (a deadline moved) or name what the statement is
// about (an incident on that day, a freeze day, a host), which rules
// cannot tell apart.
func dateLike(toks []string, i int) bool {
	t := toks[i]
	if strings.Count(t, ".") >= 3 || strings.Count(t, "-") == 2 || strings.Count(t, "/") >= 1 {
		return strings.Trim(t, "0123456789.-/") == ""
	}
	if len(t) == 4 && (strings.HasPrefix(t, "19") || strings.HasPrefix(t, "20")) && strings.Trim(t, "0123456789") == "" &&
		(i == 0 || yearBefore[toks[i-1]]) && (i+1 == len(toks) || !unitWords[toks[i+1]]) {
		return true // "the 2026 budget", "in 2025"; not "is 2010 seconds"
	}
	return i > 0 && monthNames[toks[i-1]]
}

// yearBefore are the words a year follows; unitWords those a quantity
// is followed by.
var yearBefore, unitWords = func() (map[string]bool, map[string]bool) {
	y, u := map[string]bool{}, map[string]bool{}
	for _, w := range strings.Fields(`the in since of by from until till before after during for fy q1 q2 q3 q4 year`) {
		y[w] = true
	}
	for _, w := range strings.Fields(`s sec secs second seconds ms min mins minute minutes h hr hrs hour hours day days week weeks
month months year years kb mb gb tb b bytes users requests workers rows items times entries people percent`) {
		u[w] = true
	}
	return y, u
}()

var monthNames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec`) {
		m[w] = true
	}
	return m
}()

// identifierNouns are nouns a number after which is a name or label of a
// thing ("room 110"), not the value of an attribute.
var identifierNouns = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`# id ids no nr num number numbers room rooms host hosts server servers node nodes
step steps stage phase version versions floor floors ticket tickets issue issues port ports order orders
item items page pages chapter section line task tasks bug bugs pr build builds release releases
rack table seat desk locker case invoice account job run gate bus route lane platform terminal building
block unit apartment flat suite zone region team group level channel slot bay door exit pier track
store shop branch office site cluster shard replica-set vlan subnet`) {
		m[w] = true
	}
	return m
}()

func supersededNote(e *mdmem.Entry) string {
	if e.SupersededBy != "" {
		return ", superseded by " + e.SupersededBy
	}
	return ""
}

var errPlanInvariant = errors.New("internal invariant violated in the consolidation plan; nothing written")

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
