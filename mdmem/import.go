package mdmem

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// ImportResult says what Import did.
type ImportResult struct {
	IDs    []string       `json:"entry_ids"` // allocated entry ids, in input order
	Files  []string       `json:"files"`     // files written
	Places map[string]int `json:"places"`    // entries per destination ("core", "topics/x.md", …)
	Commit string         `json:"commit"`    // the commit hash
	// HandEdit is what committing the person's uncommitted edits first did.
	HandEdit *HandEdit `json:"hand_edit,omitempty"`
}

// Import loads normalised candidates straight into the memory, without the
// queue or an LLM: ids are allocated per category prefix (never reused);
// entries of core categories without a topic go to their core section,
// entries that read like instructions to a model, and agents' preferences
// and constraints under consolidate.hold_agent_core, to Pending
// confirmation (PendingReason), everything else to topics/<topic or
// category>.md (continued in
// topics/<topic>-2.md, … past files.max_bytes), with the topic index kept
// up to date. The whole import is one commit. It takes the lock and
// commits a person's uncommitted edits first.
func (s *Store) Import(ctx context.Context, cands []*Candidate) (*ImportResult, error) {
	i := 0
	return s.ImportStream(ctx, func() (*Candidate, error) {
		if i == len(cands) {
			return nil, nil
		}
		i++
		return cands[i-1], nil
	})
}

// ImportStream is Import for candidates that next yields one at a time
// (nil, nil at the end), so that a large import holds the rendered files
// and the ids, not the candidates. An error from next aborts the import:
// nothing is written.
func (s *Store) ImportStream(ctx context.Context, next func() (*Candidate, error)) (*ImportResult, error) {
	first, err := next()
	if err != nil {
		return nil, err
	}
	if first == nil {
		return &ImportResult{Places: map[string]int{}}, nil
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	he, err := s.CommitHandEdits(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit hand edits: %w", err)
	}
	mem, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if err := mem.CheckEditable(); err != nil {
		return nil, err
	}
	if err := mem.CheckUniqueIDs(); err != nil {
		return nil, err
	}
	st, err := s.ReadState()
	if err != nil {
		return nil, err
	}
	alloc := NewIDAllocator(st, mem)
	ed := mem.Edit()
	ed.SetMaxBytes(s.Config.Files.MaxBytes)
	res := &ImportResult{Places: map[string]int{}}
	if !he.Empty() {
		res.HandEdit = he
	}
	titled := map[string]bool{}
	for c := first; c != nil; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id, err := alloc.Next(c.Category)
		if err != nil {
			return nil, err
		}
		e := c.Entry(id)
		t := TargetFor(e, c.Topic)
		if why := PendingReason(e, s.Config.Consolidate.HoldAgentCore); why != "" {
			e.Notes = append(e.Notes, PendingNote, why)
			t = Target{Place: PlacePending}
		}
		if t.Place == PlaceTopic && c.Topic == "" && !titled[t.Topic] {
			ed.SetTopicTitle(t.Topic, strings.ToUpper(t.Topic[:1])+t.Topic[1:]+" notes")
			titled[t.Topic] = true
		}
		path, err := ed.InsertAt(e, t)
		if err != nil {
			return nil, err
		}
		res.IDs = append(res.IDs, id)
		if t.Place == PlaceTopic {
			res.Places[path]++
		} else {
			res.Places[string(t.Place)]++
		}
		if c, err = next(); err != nil {
			return nil, err
		}
	}
	files, err := ed.Changed()
	if err != nil {
		return nil, err
	}
	if state, ok := alloc.StateFile(); ok {
		files[StatePath] = state
	}
	for p := range files {
		res.Files = append(res.Files, p)
	}
	sort.Strings(res.Files)
	msg := CommitMessage{
		Subject: fmt.Sprintf("import: %d %s", len(res.IDs), plural(len(res.IDs), "entry", "entries")),
		Body:    placesSummary(res.Places),
		Op:      "import",
		Extra:   idRangeTrailers(res.IDs),
	}
	// Stage file by file, dropping each rendered file once it is on disk:
	// a large import never holds its output twice.
	tx, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Abort()
	for _, p := range res.Files {
		if err := tx.PutOnDisk(ctx, p, files[p]); err != nil {
			return nil, err
		}
		delete(files, p)
	}
	if res.Commit, err = tx.Commit(ctx, msg); err != nil {
		return nil, err
	}
	return res, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func placesSummary(places map[string]int) string {
	keys := make([]string, 0, len(places))
	for k := range places {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s: %d\n", k, places[k])
	}
	return b.String()
}

// idRangeTrailers compresses ids into Memctl-Entry trailers, runs of
// consecutive numbers written as "fact-001..fact-250", so a 10,000-entry
// import has a short message and `memctl log` still finds every id.
func idRangeTrailers(ids []string) [][2]string {
	type num struct {
		prefix string
		n      int
		id     string
	}
	var nums []num
	for _, id := range ids {
		p, n, ok := splitID(id)
		if ok {
			nums = append(nums, num{p, n, id})
		}
	}
	sort.Slice(nums, func(i, j int) bool {
		if nums[i].prefix != nums[j].prefix {
			return nums[i].prefix < nums[j].prefix
		}
		return nums[i].n < nums[j].n
	})
	var out [][2]string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1].prefix == nums[i].prefix && nums[j+1].n == nums[j].n+1 {
			j++
		}
		v := nums[i].id
		if j > i {
			v += ".." + nums[j].id
		}
		out = append(out, [2]string{TrailerEntry, v})
		i = j + 1
	}
	return out
}

// TrailerNames reports whether a Memctl-Entry trailer value names id: the
// id itself or a range "a-001..a-250" containing it.
func TrailerNames(value, id string) bool {
	if value == id {
		return true
	}
	lo, hi, ok := strings.Cut(value, "..")
	if !ok {
		return false
	}
	p, n, ok := splitID(id)
	p1, n1, ok1 := splitID(lo)
	p2, n2, ok2 := splitID(hi)
	return ok && ok1 && ok2 && p == p1 && p == p2 && n >= n1 && n <= n2
}

// CheckUniqueIDs refuses to write a memory in which one id names two
// entries (committed before memctl renumbered hand-written duplicates):
// writing would silently pick one of them. The error is lint's message.
func (m *Memory) CheckUniqueIDs() error {
	for _, p := range m.Lint() {
		if strings.HasPrefix(p.Message, "duplicate id ") {
			return fmt.Errorf("%s: %s: give one of them a new id by hand (memctl lint lists every problem), then run memctl again", p, "memctl does not write a memory with a duplicated id")
		}
	}
	return nil
}

// CheckEditable refuses to edit a memory whose files memctl cannot splice
// safely (invalid UTF-8).
func (m *Memory) CheckEditable() error {
	for _, d := range m.Docs() {
		for _, p := range d.Problems {
			if strings.Contains(p.Message, "not valid UTF-8") {
				return fmt.Errorf("%s is not valid UTF-8: fix it by hand (memctl lint shows where) before memctl edits the memory", d.Path)
			}
		}
	}
	return nil
}
