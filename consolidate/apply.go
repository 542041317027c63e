package consolidate

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

var topicTitles = map[string]string{
	"fact": "Facts", "incident": "Incidents", "lesson": "Lessons learned", "note": "Notes", "todo": "Open questions",
}

func demotedTopic(cat string) (slug, title string) {
	c, _ := mdmem.CategoryByName(cat)
	return c.Name, c.Heading + " (moved out of the core profile)"
}

// render builds the editor from the plan and returns the changed files.
func (p *planner) render() (map[string][]byte, error) {
	if err := p.loadReceivers(); err != nil {
		return nil, err
	}
	ed := p.in.Mem.Edit()
	ed.SetMaxBytes(p.cfg.Files.MaxBytes)
	for _, a := range p.adds {
		if a.target.Place == mdmem.PlaceTopic && a.title != "" {
			ed.SetTopicTitle(a.target.Topic, a.title)
		}
	}
	for _, e := range p.order {
		if e.dest != nil && e.dest.Place == mdmem.PlaceTopic {
			if _, t := demotedTopic(e.e.Category); t != "" {
				ed.SetTopicTitle(e.dest.Topic, t)
			}
		}
	}
	for _, a := range p.adds {
		if a.target.Place == mdmem.PlaceTopic && a.title == "" {
			if t := topicTitles[a.target.Topic]; t != "" {
				ed.SetTopicTitle(a.target.Topic, t)
			}
		}
	}
	for _, e := range p.order {
		switch {
		case e.dest != nil:
			if err := ed.Move(e.old, e.e, *e.dest); err != nil {
				return nil, err
			}
		case e.changed:
			ed.Replace(e.old, e.e)
		}
	}
	for _, a := range p.adds {
		if err := ed.Insert(a.e, a.target); err != nil {
			return nil, err
		}
	}
	return ed.Changed()
}

// CoreSize measures the "# Core profile" section of MEMORY.md: its
// subsections without "## Pending confirmation", which is never injected
// and so is outside volume control (consolidate.max_pending caps it).
// Tokens are estimated as bytes/4.
func CoreSize(d *mdmem.Doc) Size {
	start, end := -1, len(d.Src)
	for _, h := range d.Headings {
		if h.Level != 1 {
			continue
		}
		if start >= 0 {
			end = h.Start
			break
		}
		if strings.EqualFold(h.Title, mdmem.TitleCore) {
			start = h.Start
		}
	}
	if start < 0 {
		return Size{}
	}
	var s Size
	measure := func(sec []byte) {
		s.Lines += bytes.Count(sec, []byte("\n"))
		if len(sec) > 0 && sec[len(sec)-1] != '\n' {
			s.Lines++
		}
		s.Bytes += len(sec)
	}
	// Measure the section piecewise, leaving out each Pending subsection
	// (from its heading to the next heading of level 1 or 2).
	at := start
	for i, h := range d.Headings {
		if h.Level != 2 || h.Start < start || h.Start >= end || !strings.EqualFold(h.Title, mdmem.TitlePending) {
			continue
		}
		stop := end
		for _, n := range d.Headings[i+1:] {
			if n.Level <= 2 {
				stop = min(n.Start, end)
				break
			}
		}
		measure(d.Src[at:h.Start])
		at = stop
	}
	measure(d.Src[at:end])
	s.Tokens = (s.Bytes + 3) / 4
	return s
}

// MeasureCore is CoreSize with the tokens counted by m the way inject
// prints the core (with inject.tokenizer at now): the measure of
// consolidate.core_max_tokens, the core limit inject also keeps. Without
// m (nil), or with a tokenizer m does not know, the bytes/4 estimate
// stays.
func MeasureCore(m Measure, cfg *mdmem.Config, d *mdmem.Doc, now time.Time) Size {
	s := CoreSize(d)
	if m != nil {
		if n, err := m.CoreTokens(cfg.Inject.Tokenizer, d.Entries, now, cfg.Inject.StaleDays); err == nil {
			s.Tokens = n
		}
	}
	return s
}

// lineTokens is the tokens of e's line as inject prints it, by m; ok is
// false without m or when it does not know the tokenizer.
func lineTokens(m Measure, cfg *mdmem.Config, e *mdmem.Entry) (n int, ok bool) {
	if m == nil {
		return 0, false
	}
	n, err := m.LineTokens(cfg.Inject.Tokenizer, e)
	return n, err == nil
}

// value ranks core entries for demotion: lowest first. It weighs
// confidence (0.7 when absent), category (constraints outrank preferences
// outrank decisions), age (older is lower, capped at three years; a use
// makes an entry young again) and use (Use.bonus: entries the agent
// reports using stay in the core).
func value(e *mdmem.Entry, u Use, now time.Time) float64 {
	conf := 0.7
	if e.HasConf {
		conf = e.Confidence
	}
	w := map[string]float64{"constraint": 0.6, "preference": 0.4, "decision": 0.2}[e.Category]
	age := 1.0
	d := e.Date()
	if u.Last.After(d) {
		d = u.Last
	}
	if !d.IsZero() {
		age = min(max(now.Sub(d).Hours()/24/365, 0), 3)
	}
	return conf + w - 0.25*age + u.bonus()
}

// demote picks core entries of the rendered MEMORY.md until the core
// fits, lowest authority first (mdmem.Authority: agents', then others',
// then the person's), then lowest value, and plans their move to topic
// files.
func (p *planner) demote(main *mdmem.Doc, size Size, lim Limits) bool {
	var cands []*mdmem.Entry
	for _, e := range main.Entries {
		if e.Place == mdmem.PlaceCore && e.ID != "" {
			cands = append(cands, e)
		}
	}
	if p.in.Usage == nil && p.in.LoadUsage != nil {
		p.in.Usage = p.in.LoadUsage()
	}
	vals := make(map[*mdmem.Entry]float64, len(cands))
	for _, e := range cands {
		vals[e] = value(e, p.in.Usage[e.ID], p.now)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		// Authority first: an agent's entry leaves before any of the
		// person's, however many agents' entries there are.
		if ai, aj := mdmem.Authority(cands[i]), mdmem.Authority(cands[j]); ai != aj {
			return ai < aj
		}
		vi, vj := vals[cands[i]], vals[cands[j]]
		if vi != vj {
			return vi < vj
		}
		if !cands[i].Date().Equal(cands[j].Date()) {
			return cands[i].Date().Before(cands[j].Date())
		}
		return cands[i].ID < cands[j].ID
	})
	cur := size
	picked := 0
	for _, e := range cands {
		if !lim.over(cur) {
			break
		}
		slug, _ := demotedTopic(e.Category)
		t := mdmem.Target{Place: mdmem.PlaceTopic, Topic: slug}
		if a := p.addByID[e.ID]; a != nil {
			a.target = t
		} else if old := p.in.Mem.Find(e.ID); old != nil && old.Place == mdmem.PlaceCore {
			ed := p.edit(old)
			if ed.dest != nil {
				continue
			}
			ed.dest, ed.changed = &t, true
		} else {
			continue
		}
		n := len(e.Raw)
		cur.Bytes -= n
		cur.Lines -= strings.Count(e.Raw, "\n")
		// Its line is the least moving it saves (its date line may go
		// too; finish measures the result again).
		if n, ok := lineTokens(p.in.Measure, p.cfg, e); ok {
			cur.Tokens -= n
		} else {
			cur.Tokens = (cur.Bytes + 3) / 4
		}
		picked++
		p.ops = append(p.ops, Op{Kind: OpDemote, Entry: e.ID, Reason: fmt.Sprintf("core profile over its limit; moved to topics/%s.md", slug), By: "rule"})
	}
	return picked > 0
}

func (p *planner) finish() (*Plan, error) {
	lim := CoreLimits(p.cfg)
	plan := &Plan{CoreBefore: MeasureCore(p.in.Measure, p.cfg, p.in.Mem.Main, p.now)}
	var files map[string][]byte
	for round := 0; ; round++ {
		var err error
		if files, err = p.render(); err != nil {
			if errors.Is(err, mdmem.ErrNoCoreHeading) {
				return nil, fmt.Errorf("%w; nothing written, the candidates stay queued", err) // the person's file to fix, not memctl's bug
			}
			return nil, fmt.Errorf("%w: %w", errPlanInvariant, err)
		}
		main := p.in.Mem.Main
		if b, ok := files[mdmem.MainFile]; ok {
			main = mdmem.ParseDoc(mdmem.MainFile, b)
		}
		plan.CoreAfter = MeasureCore(p.in.Measure, p.cfg, main, p.now)
		if !lim.over(plan.CoreAfter) {
			break
		}
		if round >= 5 || !p.demote(main, plan.CoreAfter, lim) {
			p.warn = append(p.warn, fmt.Sprintf("core profile is %s, over its limit (%d lines, %d bytes, %d tokens) with nothing left to move out: the rest is hand-written lines",
				plan.CoreAfter, lim.Lines, lim.Bytes, lim.Tokens))
			break
		}
	}
	if err := p.verify(files); err != nil {
		return nil, err
	}
	if st, ok := p.alloc.StateFile(); ok && len(files) > 0 {
		files[mdmem.StatePath] = st
	}
	plan.Files = files
	plan.Pending = PendingCount{Entries: p.pendingN, Max: p.cfg.Consolidate.MaxPending}
	for _, h := range p.holds {
		if h.Kind == HoldPendingFull {
			plan.Pending.Waiting++
		}
	}
	plan.Ops = p.ops
	plan.Held = p.holds
	plan.Quarantine = p.quar
	if plan.Held == nil {
		plan.Held = []Hold{}
	}
	plan.Consumed = sortedKeys(p.consumed)
	plan.Warnings = p.warn
	ids := map[string]bool{}
	for _, e := range p.order {
		if e.changed || e.dest != nil {
			ids[e.old.ID] = true
		}
	}
	for _, a := range p.adds {
		ids[a.e.ID] = true
	}
	plan.Entries = sortedKeys(ids)
	return plan, nil
}

// verify checks the rendered files against the memory before: no entry is
// lost, none duplicated, exactly the planned new ones appear. It is the
// last guard of "consolidation never deletes".
func (p *planner) verify(files map[string][]byte) error {
	before := map[string]int{}
	noID := 0
	for _, e := range p.in.Mem.Entries() {
		if e.ID == "" {
			noID++
		} else {
			before[e.ID]++
		}
	}
	after := map[string]int{}
	afterNoID := 0
	count := func(d *mdmem.Doc) {
		for _, e := range d.Entries {
			if e.ID == "" {
				afterNoID++
			} else {
				after[e.ID]++
			}
		}
	}
	seen := map[string]bool{}
	for path, b := range files {
		seen[path] = true
		count(mdmem.ParseDoc(path, b))
	}
	for _, d := range p.in.Mem.Docs() {
		if !seen[d.Path] {
			count(d)
		}
	}
	var problems []string
	for id, n := range before {
		if after[id] != n {
			problems = append(problems, fmt.Sprintf("entry %s appears %d times, was %d", id, after[id], n))
		}
	}
	for _, a := range p.adds {
		if after[a.e.ID] != 1 {
			problems = append(problems, fmt.Sprintf("new entry %s appears %d times", a.e.ID, after[a.e.ID]))
		}
	}
	if len(after) != len(before)+len(p.adds) {
		problems = append(problems, fmt.Sprintf("%d distinct ids after, want %d", len(after), len(before)+len(p.adds)))
	}
	if afterNoID != noID {
		problems = append(problems, fmt.Sprintf("%d entries without id after, was %d", afterNoID, noID))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 5 {
			problems = problems[:5]
		}
		return fmt.Errorf("%w: %s", errPlanInvariant, strings.Join(problems, "; "))
	}
	return nil
}

// loadReceivers parses, when the plan reads the memory in part (the
// match cache), every topic file that receives an entry, with its parts
// (the editor appends to them), and the file of every entry the plan
// changes that was read alone: its edit moves to the parsed entry.
func (p *planner) loadReceivers() error {
	b := p.idx.base
	if b == nil {
		return nil
	}
	err := p.loadWritten(b)
	if err != nil {
		b.fail(err)
	}
	return err
}

func (p *planner) loadWritten(b *planBase) error {
	for _, ed := range p.order {
		if !ed.changed && ed.dest == nil {
			continue
		}
		e, err := b.parsed(ed.old)
		if err != nil {
			return err
		}
		if e == ed.old {
			continue
		}
		it := p.itemOf[ed.old]
		delete(p.edits, ed.old)
		delete(p.itemOf, ed.old)
		p.edits[e], ed.old = ed, e
		if it != nil {
			it.entry, p.itemOf[e] = e, it
		}
	}
	for _, a := range p.adds {
		if a.target.Place == mdmem.PlaceTopic {
			if err := b.mb.loadChain(b.ctx, a.target.Topic); err != nil {
				return err
			}
		}
	}
	for _, e := range p.order {
		if e.dest != nil && e.dest.Place == mdmem.PlaceTopic {
			if err := b.mb.loadChain(b.ctx, e.dest.Topic); err != nil {
				return err
			}
		}
	}
	return nil
}
