package consolidate

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// archives is how many existing entries a decision would archive.
func (d *Decision) archives() int {
	switch d.Op {
	case OpArchive, OpSupersede:
		return 1
	case OpCompress:
		return len(d.Entries)
	}
	return 0
}

// checkDecisions applies the run-wide rules to the LLM's decisions before
// any is used: the archive cap over all of them (a model that archives too
// much loses every archiving operation, not just the excess), each
// candidate in at most one decision, and only candidates sent to the LLM.
func (p *planner) checkDecisions() {
	total, plain := 0, 0
	for _, d := range p.in.Decisions {
		total += d.archives()
		if d.Op == OpArchive {
			plain++
		}
	}
	plainCap := PlainArchiveCap(p.cfg, p.total)
	for _, d := range p.in.Decisions {
		if (total > p.archCap || plain > plainCap) && d.archives() > 0 {
			p.reject(d, fmt.Sprintf("the model asked to archive %d entries in one run, over the limit of %d (%.0f%% of %d)",
				total, p.archCap, 100*p.cfg.Consolidate.MaxArchiveShare, p.total))
			continue
		}
		for _, id := range d.Candidates {
			if !p.in.LLMCands[id] {
				p.reject(d, "names candidate "+id+", which was not sent to the model")
				break
			}
			if other := p.byCand[id]; other != nil && other != d {
				p.reject(d, "names candidate "+id+", already used by another operation")
				break
			}
		}
		if p.rejected[d] != "" {
			continue
		}
		for _, id := range d.Candidates {
			p.byCand[id] = d
		}
	}
}

func (p *planner) reject(d *Decision, why string) {
	if p.rejected[d] != "" {
		return
	}
	p.rejected[d] = why
	for _, id := range d.Candidates {
		if p.byCand[id] == d {
			delete(p.byCand, id)
		}
	}
	p.warn = append(p.warn, fmt.Sprintf("dropped LLM %s operation: %s", d.Op, why))
	for _, id := range d.Candidates {
		if c := p.cands[id]; c != nil && p.in.LLMCands[id] {
			p.hold(c, HoldLLM, "LLM "+string(d.Op)+" rejected: "+why)
		}
	}
}

// entryFor returns the item of an existing entry the decision names, after
// checking it is still what the model saw, live, and untouched this run.
func (p *planner) entryFor(d *Decision, id string) (*item, error) {
	e := p.find(id)
	if e == nil {
		return nil, fmt.Errorf("entry %s no longer exists", id)
	}
	if snap, ok := d.Snap[id]; !ok || snap != e.Raw {
		return nil, fmt.Errorf("entry %s changed since the model saw it (a hand edit wins)", id)
	}
	if p.edits[e] != nil {
		return nil, fmt.Errorf("entry %s is already changed by another operation of this run", id)
	}
	if !live(e.Place) {
		return nil, fmt.Errorf("entry %s is archived or outside memctl's sections", id)
	}
	if it := p.itemOfEntry(e); it != nil {
		return it, nil
	}
	return nil, fmt.Errorf("entry %s is not indexed", id)
}

// checkText applies the output rules to text the model wrote: valid,
// within the content cap, no secret, not instruction-like, and no name,
// number or date absent from its sources.
func (p *planner) checkText(text string, sources []string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("empty text")
	}
	if err := mdmem.ValidText("text", text, p.cfg.Add.MaxContentBytes); err != nil {
		return err
	}
	if s := p.in.Secrets.Find(text); len(s) > 0 {
		return fmt.Errorf("text contains a secret (%s)", strings.Join(s, ", "))
	}
	if ok, why := instructionLike(text); ok {
		return fmt.Errorf("text %s", why)
	}
	if miss := inventedFacts(text, sources); len(miss) > 0 {
		return fmt.Errorf("text states %q, found in none of its sources (invented fact)", strings.Join(miss, ", "))
	}
	return nil
}

// decide validates and applies an LLM decision at the turn of its first
// candidate c.
func (p *planner) decide(d *Decision, c *mdmem.Candidate) {
	if why := p.rejected[d]; why != "" {
		p.hold(c, HoldLLM, "LLM "+string(d.Op)+" rejected: "+why)
		return
	}
	if err := p.tryDecide(d); err != nil {
		p.reject(d, err.Error())
	}
}

// tryDecide checks decision d against its sources and applies it; an
// error says why it is rejected (nothing is applied then).
func (p *planner) tryDecide(d *Decision) error {
	ds, err := p.decisionSources(d)
	if err != nil {
		return err
	}
	d.Reason = p.safeReason(d.Reason)
	if err := p.checkDecisionText(d, ds); err != nil {
		return err
	}
	needTarget := d.Op == OpMerge || d.Op == OpSupersede || d.Op == OpConflict || d.Op == OpNoop || d.Op == OpArchive
	if needTarget && ds.target == nil {
		return fmt.Errorf("needs a target entry")
	}
	mw, err := p.checkMerge(d, ds)
	if err != nil {
		return err
	}
	if d.Op != OpArchive && len(ds.cands) == 0 {
		return fmt.Errorf("consumes no candidate")
	}
	return p.applyDecision(d, ds, mw)
}

// maxReasonBytes caps the model's reason as memctl writes it.
const maxReasonBytes = 300

// safeReason is the model's reason as memctl writes it (a Pending or
// archive note, the commit body): one line, at most maxReasonBytes, and
// left out when it holds a secret or reads as an instruction. The output
// rules of the text (checkText) apply to it too, since it reaches the
// file and git.
func (p *planner) safeReason(r string) string {
	r = mdmem.OneLine(r)
	if mdmem.ValidText("reason", r, 0) != nil {
		return "the model's reason is not valid text and is left out"
	}
	if len(p.in.Secrets.Find(r)) > 0 {
		return "the model's reason held a secret and is left out"
	}
	if ok, _ := instructionLike(r); ok {
		return "the model's reason reads as an instruction and is left out"
	}
	if len(r) > maxReasonBytes {
		cut := maxReasonBytes
		for cut > 0 && !utf8.RuneStart(r[cut]) {
			cut--
		}
		r = r[:cut] + "…"
	}
	return r
}

// decSrc is a candidate a decision consumes, with its entry.
type decSrc struct {
	c  *mdmem.Candidate
	ce *mdmem.Entry
}

// decSources are what a decision names: its candidates, its target entry,
// the entries it compresses, and all their texts (in that order).
type decSources struct {
	cands   []decSrc
	target  *item
	entries []*item
	texts   []string
}

// decisionSources resolves the candidates and entries decision d names,
// checking that every candidate is available and not instruction-like,
// that they are all of one scope, and, for an operation that folds them
// into one entry (merge, noop, supersede, compress), of one category: a
// preference merged into a fact, or a constraint superseded by a
// preference, loses what the category says (the rules never cross
// categories either).
func (p *planner) decisionSources(d *Decision) (*decSources, error) {
	ds := &decSources{}
	scope, cat := "", ""
	first := true
	oneCategory := d.Op == OpMerge || d.Op == OpNoop || d.Op == OpSupersede || d.Op == OpCompress
	sameScope := func(s []string, c string) error {
		k := scopeKey(s)
		if first {
			scope, cat, first = k, c, false
			return nil
		}
		if k != scope {
			return fmt.Errorf("mixes entries of different scopes")
		}
		if oneCategory && c != cat {
			return fmt.Errorf("mixes categories (%s and %s): a %s never crosses categories", cat, c, d.Op)
		}
		return nil
	}
	for _, id := range d.Candidates {
		c := p.cands[id]
		if c == nil || p.consumed[id] || p.held[id] {
			return nil, fmt.Errorf("candidate %s is not available (already used or held)", id)
		}
		ce, err := p.candEntry(c)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", id, err)
		}
		if ok, why := instructionLike(ce.Content); ok {
			return nil, fmt.Errorf("candidate %s %s", id, why)
		}
		if err := sameScope(ce.Scope, ce.Category); err != nil {
			return nil, err
		}
		ds.cands = append(ds.cands, decSrc{c, ce})
		ds.texts = append(ds.texts, ce.Content)
	}
	if d.Target != "" {
		it, err := p.entryFor(d, d.Target)
		if err != nil {
			return nil, err
		}
		if err := sameScope(it.entry.Scope, it.entry.Category); err != nil {
			return nil, err
		}
		ds.target = it
		ds.texts = append(ds.texts, it.entry.Content)
	}
	for _, id := range d.Entries {
		it, err := p.entryFor(d, id)
		if err != nil {
			return nil, err
		}
		if err := sameScope(it.entry.Scope, it.entry.Category); err != nil {
			return nil, err
		}
		ds.entries = append(ds.entries, it)
		ds.texts = append(ds.texts, it.entry.Content)
	}
	if d.Op == OpCompress && d.Category != "" && !first && d.Category != cat {
		return nil, fmt.Errorf("files a summary of %s entries as %s: a compress never crosses categories", cat, d.Category)
	}
	return ds, nil
}

// checkDecisionText applies the output rules to the text the model wrote,
// if any, and checks that a rewrite never drops a candidate's value: the
// newer text's names and numbers must survive into the merged or summary
// text.
func (p *planner) checkDecisionText(d *Decision, ds *decSources) error {
	text := d.Text
	if text == "" {
		// A supersede or conflict without text keeps the first
		// candidate's; the others fold into it, so theirs must be in it.
		if (d.Op != OpSupersede && d.Op != OpConflict) || len(ds.cands) < 2 {
			return nil
		}
		text = ds.cands[0].ce.Content
	} else if err := p.checkText(d.Text, ds.texts); err != nil {
		return err
	}
	if d.Op == OpMerge || d.Op == OpCompress || d.Op == OpSupersede || d.Op == OpAdd || d.Op == OpConflict {
		for _, s := range ds.cands {
			if lost := inventedFacts(s.ce.Content, []string{text}); len(lost) > 0 {
				return fmt.Errorf("its text drops %s of candidate %s", strings.Join(lost, ", "), s.c.ID)
			}
		}
	}
	if d.Op == OpCompress {
		// The entries a summary replaces go to the archive: each must
		// live on in it.
		for _, it := range ds.entries {
			if lost := inventedFacts(it.entry.Content, []string{text}); len(lost) > 0 {
				return fmt.Errorf("its summary drops %s of entry %s, which it would archive", strings.Join(lost, ", "), it.entry.ID)
			}
		}
	}
	return nil
}

// mergeWording is what a merge or noop without text writes: the newer
// wording that the entry takes, if any, and the other wording, which
// goes to the archive as superseded by the entry when the two texts
// spell the fact differently (each has a name or number the other lacks:
// "O+" / "O positive"), so that a duplicate the model confirms is merged
// and neither wording is lost.
type mergeWording struct {
	wording string
	archive string
}

// checkMerge checks a merge or noop. A merge says the texts are one fact:
// the entry keeps its value, and no candidate's value is folded away (an
// update is a supersede, which archives the old value): compare must not
// find a new value, a negation, another unit or another thing
// (notOneFact). d.keepText (an agent's candidate for the core) keeps the
// entry's words.
func (p *planner) checkMerge(d *Decision, ds *decSources) (mw mergeWording, err error) {
	if (d.Op != OpMerge && d.Op != OpNoop) || ds.target == nil {
		return mw, nil
	}
	target := ds.target
	merged := target.entry.Content
	for _, s := range ds.cands {
		// A candidate that negates the entry, gives it in another unit,
		// or says it of another thing is not a duplicate, whatever text
		// the merge keeps.
		if why := p.notOneFact(target.entry.Content, s.ce.Content); why != "" {
			return mw, fmt.Errorf("candidate %s %s of entry %s (an update is a supersede)", s.c.ID, why, target.entry.ID)
		}
	}
	if d.Text == "" && !d.keepText {
		var ces []*mdmem.Entry
		for _, s := range ds.cands {
			ces = append(ces, s.ce)
		}
		if mw.wording = newerWording(target.entry, ces, p.now); mw.wording != "" {
			merged = mw.wording
		}
	}
	if d.Text != "" {
		merged = d.Text
		if lost := inventedFacts(target.entry.Content, []string{d.Text}); len(lost) > 0 {
			return mw, fmt.Errorf("its text drops %s of entry %s (an update is a supersede)", strings.Join(lost, ", "), target.entry.ID)
		}
	}
	for _, s := range ds.cands {
		lost := inventedFacts(s.ce.Content, []string{merged})
		if len(lost) == 0 {
			continue
		}
		if d.Text != "" || d.keepText || len(ds.cands) > 1 || p.batchArchived+1 > p.batchCap {
			return mw, fmt.Errorf("merging would drop %s of candidate %s (not a duplicate of %s)", strings.Join(lost, ", "), s.c.ID, target.entry.ID)
		}
		// One fact in two spellings: the newer wording stays, the other
		// goes to the archive beside it.
		mw = mergeWording{archive: s.ce.Content}
		if !s.ce.Date().Before(mdmem.TrustedDate(target.entry.Date(), p.now)) {
			mw = mergeWording{wording: s.ce.Content, archive: target.entry.Content}
		}
	}
	return mw, nil
}

// notOneFact says why a merge may not fold newer into old whatever the
// model says ("" when it may): compare finds a negation added or
// removed, another unit, the same statement about another thing
// ("Backups of the jackal database …" / "… egret database …"), or the
// same statement with another value ("… at the main gate …" / "… at the
// side gate …"): whichever wording survived, the other value would be
// gone without an archive record.
func (p *planner) notOneFact(old, newer string) string {
	cmp := sameFactTexts(old, newer, p.cfg.Consolidate.NearDuplicate, p.cfg.Consolidate.Related)
	switch {
	case cmp.negation:
		return "adds or removes a negation"
	case cmp.unit:
		return "changes a unit (" + cmp.why + ")"
	case cmp.v == factAnother:
		return fmt.Sprintf("says of another thing what the entry says (%s; merging would drop one of them)", cmp.why)
	case cmp.v == factUpdate, cmp.v == factChanged && cmp.swap:
		return fmt.Sprintf("is the entry's statement with %s (merging would drop one value)", cmp.why)
	}
	return ""
}

// isContentWord reports whether a token carries meaning: not a filler,
// not a lone symbol.
func isContentWord(t string) bool { return !fillerWords[t] && strings.IndexFunc(t, isWordRune) >= 0 }

// applyDecision applies a checked decision to the plan, or says why its
// operation cannot be applied.
func (p *planner) applyDecision(d *Decision, ds *decSources, mw mergeWording) error {
	cands := ds.cands
	switch d.Op {
	case OpAdd:
		if len(cands) != 1 {
			return fmt.Errorf("add takes exactly one candidate (use compress to combine)")
		}
		p.add(cands[0].c, cands[0].ce, d.Text, d.Reason, "llm")
	case OpMerge, OpNoop:
		if d.Op == OpNoop && d.Text != "" {
			return fmt.Errorf("noop cannot rewrite text")
		}
		p.applyMerge(d, ds, mw)
	case OpSupersede:
		if old := ds.target.current(); cands[0].ce.Date().Before(mdmem.TrustedDate(old.Date(), p.now)) {
			// The model would replace a newer value with an older one (a
			// backfilled statement): as the rules do, the candidate goes
			// to the archive, superseded by the entry.
			if len(cands) > 1 {
				return fmt.Errorf("candidate %s is older than entry %s, which it would supersede", cands[0].c.ID, old.ID)
			}
			if !p.archiveOlder(cands[0].c, cands[0].ce, old, "llm") {
				return fmt.Errorf("this run reached its archive limit")
			}
			return nil
		}
		if p.archived+1 > p.archCap {
			return fmt.Errorf("this run reached its archive limit")
		}
		if !p.supersede(ds.target, cands[0].c, cands[0].ce, d.Text, d.Reason, "llm") {
			return fmt.Errorf("this run reached its archive limit")
		}
		p.foldRest(cands)
	case OpConflict:
		if p.pendingFull() {
			for _, s := range cands {
				p.hold(s.c, HoldPendingFull, PendingFullReason(p.cfg.Consolidate.MaxPending))
			}
			return nil
		}
		p.pending(cands[0].c, cands[0].ce, OpConflict, "conflicts with "+ds.target.entry.ID+": "+mdmem.OneLine(d.Reason), []string{ds.target.entry.ID}, "llm")
		p.foldRest(cands)
	case OpCompress:
		if len(cands)+len(ds.entries) < 2 {
			return fmt.Errorf("compress needs at least two sources")
		}
		if d.Text == "" {
			return fmt.Errorf("compress needs the summary text")
		}
		if p.archived+len(ds.entries) > p.archCap {
			return fmt.Errorf("this run reached its archive limit")
		}
		p.compress(d, cands[0].c, func(yield func(*mdmem.Candidate, *mdmem.Entry)) {
			for _, s := range cands {
				yield(s.c, s.ce)
			}
		}, ds.entries)
	case OpArchive:
		return fmt.Errorf("archive consumes no candidate")
	default:
		return fmt.Errorf("unknown operation %q", d.Op)
	}
	return nil
}

// applyMerge folds the candidates of a merge or noop into the target
// entry, rewriting its text to the model's text or the newer wording; the
// other wording of a fact spelled two ways goes to the archive,
// superseded by the entry.
func (p *planner) applyMerge(d *Decision, ds *decSources, mw mergeWording) {
	ed := p.edit(ds.target.entry)
	ed.changed = true
	if d.Text != "" {
		ed.e.Content = mdmem.OneLine(d.Text)
	} else if mw.wording != "" {
		ed.e.Content = mw.wording
	}
	var ids []string
	for _, s := range ds.cands {
		foldProvenance(ed.e, s.c, s.ce, true)
		ids = append(ids, s.c.ID)
	}
	if mw.archive != "" && p.countBatchArchive() {
		old := ds.cands[0].ce
		if mw.archive == ds.target.entry.Content {
			old = cloneEntry(ds.target.entry)
			old.Updated, old.Notes, old.See = time.Time{}, nil, nil
		}
		old.ID = p.newID(old.Category)
		old.SupersededBy, old.SupersededOn = ed.e.ID, p.today
		p.insert(old, mdmem.Target{Place: mdmem.PlaceArchive}, ids[0])
	}
	p.consume(ids...)
	p.ops = append(p.ops, Op{Kind: d.Op, Entry: ed.e.ID, Targets: []string{ed.e.ID}, Candidates: ids, Text: d.Text, Reason: d.Reason, By: "llm"})
}

// foldRest folds the candidates after the first into the first one's
// entry, consumes them and credits them to the last operation.
func (p *planner) foldRest(cands []decSrc) {
	for _, s := range cands[1:] {
		foldProvenance(cands[0].ce, s.c, s.ce, true)
		p.consume(s.c.ID)
		p.ops[len(p.ops)-1].Candidates = append(p.ops[len(p.ops)-1].Candidates, s.c.ID)
	}
}

// compress writes one entry that summarises candidates and entries, citing
// all of them; the entries move to the archive superseded by it.
func (p *planner) compress(d *Decision, firstCand *mdmem.Candidate, cands func(func(*mdmem.Candidate, *mdmem.Entry)), entries []*item) {
	var srcs []*mdmem.Entry
	var ids []string
	cat := d.Category
	ne := &mdmem.Entry{Content: mdmem.OneLine(d.Text), Source: "consolidation"}
	minConf, hasConf := 1.0, false
	var latest time.Time
	note := func(e *mdmem.Entry) {
		srcs = append(srcs, e)
		if cat == "" {
			cat = e.Category
		}
		ne.Scope = e.Scope
		ne.Tags = union(ne.Tags, e.Tags)
		if e.HasConf {
			hasConf = true
			minConf = min(minConf, e.Confidence)
		}
		if e.Date().After(latest) {
			latest = e.Date()
		}
	}
	cands(func(c *mdmem.Candidate, ce *mdmem.Entry) {
		note(ce)
		ne.Refs = union(ne.Refs, ce.Refs, []string{c.ID})
		ids = append(ids, c.ID)
	})
	var targets []string
	inCore := false
	for _, it := range entries {
		note(it.entry)
		ne.Refs = union(ne.Refs, it.entry.Refs)
		ne.See = append(ne.See, it.entry.ID)
		targets = append(targets, it.entry.ID)
		inCore = inCore || it.entry.Place == mdmem.PlaceCore
	}
	if _, ok := mdmem.CategoryByName(cat); !ok {
		cat = srcs[0].Category
	}
	ne.Category = cat
	ne.Refs = maxRefs(ne.Refs)
	ne.Created = latest
	if hasConf {
		ne.Confidence, ne.HasConf = minConf, true
	}
	ne.ID = p.newID(cat)
	topic := firstCand.Topic
	if topic == "" && !inCore && len(entries) > 0 && entries[0].entry.Place == mdmem.PlaceTopic {
		topic = entries[0].entry.Topic
	}
	for _, it := range entries {
		p.archiveEntry(it, ne.ID, "", true)
	}
	p.insert(ne, targetFor(ne, topic), firstCand.ID)
	p.consume(ids...)
	p.ops = append(p.ops, Op{Kind: OpCompress, Entry: ne.ID, Targets: targets, Candidates: ids, Text: ne.Content, Reason: d.Reason, By: "llm"})
}

// archiveDecisions applies the LLM's plain archive operations, which
// consume no candidate.
func (p *planner) archiveDecisions() {
	for _, d := range p.in.Decisions {
		if d.Op != OpArchive || p.rejected[d] != "" {
			continue
		}
		if strings.TrimSpace(d.Reason) == "" {
			p.reject(d, "archive needs a reason")
			continue
		}
		it, err := p.entryFor(d, d.Target)
		if err != nil {
			p.reject(d, err.Error())
			continue
		}
		if !p.archiveEntry(it, "", d.Reason, true) {
			p.reject(d, "this run reached its archive limit")
			continue
		}
		p.ops = append(p.ops, Op{Kind: OpArchive, Entry: d.Target, Targets: []string{d.Target}, Reason: d.Reason, By: "llm"})
	}
}

// symbolsOf returns, in order, the symbols of a text that tokens leaves
// out but that may carry meaning ("&&" / ";", "*/5", "✓" / "✗", "@"):
// every rune but letters, digits, spaces and sentence punctuation, with
// operators spelled as tokens spells them ("≥" as ">=").
func symbolsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || strings.ContainsRune(".,;:!?'\"()[]", r) {
			continue
		}
		if isOperator(r) {
			b.WriteString(operatorText(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// newerWording is the text a merge of candidates into entry e keeps when
// the model gave none: the newest candidate's wording when it is not
// older than e and not the same text after normalisation, so a merge
// never keeps an older wording over a newer one ("…at the main gate" is
// not what survives "…at the side gate"). It returns "" (keep e's text)
// when e's text is as new, or when the newer wording would drop a name
// or number of e or of another candidate (then the merge is not a plain
// restatement and e's text, which holds them all, stays).
func newerWording(e *mdmem.Entry, cands []*mdmem.Entry, now time.Time) string {
	var newest *mdmem.Entry
	for _, c := range cands {
		if newest == nil || !c.Date().Before(newest.Date()) {
			newest = c
		}
	}
	if newest == nil || newest.Date().Before(mdmem.TrustedDate(e.Date(), now)) {
		return ""
	}
	if strings.Join(tokens(newest.Content), " ") == strings.Join(tokens(e.Content), " ") && sameFactTexts(e.Content, newest.Content, 1, 1).v == factDuplicate {
		return "" // the same words, symbols and case: nothing to reword
	}
	srcs := []string{e.Content}
	for _, c := range cands {
		srcs = append(srcs, c.Content)
	}
	for _, s := range srcs {
		if len(inventedFacts(s, []string{newest.Content})) > 0 {
			return ""
		}
	}
	return newest.Content
}
