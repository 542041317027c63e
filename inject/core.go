package inject

import (
	"fmt"
	"math"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// CoreSize is what the core profile takes in a block: its entries, the
// lines and bytes of their compact lines, and tokens (the core heading,
// the date lines and the entry lines).
type CoreSize struct {
	Entries int
	Lines   int
	Bytes   int
	Tokens  int
}

// coreSize measures the given core notes rendered under the options.
func (c *Corpus) coreSize(docs []int, o *Options, cnt *tokenCtx) CoreSize {
	p := newPacker(o, cnt)
	var s CoreSize
	for _, i := range docs {
		it := newItem(c, i, TierCore, 0, o, cnt)
		p.add(&it)
		s.Entries++
		s.Lines++
		s.Bytes += len(it.Line)
	}
	s.Tokens = p.used
	return s
}

// CoreTokens counts the tokens the core entries among entries take in a
// block rendered with cnt at now (the date lines' staleness marks need
// it; zero: none): the measure of core_max_tokens, which consolidate's
// volume control keeps the core under. Date lines are counted with their
// year, as a block without a today line prints them (inject --write): a
// block with one prints no more.
func CoreTokens(entries []*mdmem.Entry, cnt Counter, now time.Time, staleDays int) int {
	c := &Corpus{}
	var docs []int
	for _, e := range entries {
		if e.Place == mdmem.PlaceCore && e.SupersededBy == "" {
			docs = append(docs, len(c.notes))
			c.notes = append(c.notes, noteOf(e))
		}
	}
	c.init()
	o := &Options{Now: now, NoTodayLine: true, StaleDays: staleDays, Counter: cnt}
	return c.coreSize(docs, o, c.tokens(cnt, false)).Tokens
}

// CoreRoom is how many tokens the core may take in a block under the
// options: the budget less the L2 reserve and the frame (header, today
// line, fence), and at most CoreMaxTokens.
func CoreRoom(o Options) int {
	frame := o.Counter.Count(o.header()) + o.Counter.Count("```"+fenceInfo+"\n") + o.Counter.Count("```\n")
	if !o.Now.IsZero() && !o.NoTodayLine {
		frame += o.Counter.Count(todayHead + " " + o.Now.UTC().Format("2006-01-02") + "\n")
	}
	room := int(math.Floor(float64(o.Budget)*(1-o.L2Reserve))) - frame
	if o.CoreMaxTokens > 0 {
		room = min(room, o.CoreMaxTokens)
	}
	return room
}

// CoreFitWarning says when the core no longer fits a block under the
// options (its tokens over CoreRoom), and what to do; "" when it fits.
func CoreFitWarning(tokens int, o Options) string {
	room := CoreRoom(o)
	if tokens <= room {
		return ""
	}
	fix := "run `memctl consolidate`, which moves the least valuable core entries to topic files"
	if o.CoreMaxTokens <= 0 || tokens <= o.CoreMaxTokens {
		fix = fmt.Sprintf("set consolidate.core_max_tokens to %d or less and run `memctl consolidate`, or raise inject.budget", room)
	}
	return fmt.Sprintf("the core profile no longer fits: %d tokens (%s), but a %d-token block has room for %d (l2_reserve %.2f, core_max_tokens %d), so inject leaves core entries out; %s",
		tokens, o.Counter.Name(), o.Budget, room, o.L2Reserve, o.CoreMaxTokens, fix)
}

// LineTokens counts an entry's compact line ("[id] content"): what moving
// it out of the core saves at least (its date line may go too).
func LineTokens(e *mdmem.Entry, cnt Counter) int {
	n := noteOf(e)
	return cnt.Count(string(appendLine(nil, &n)))
}
