package mdmem

import (
	"context"
	"crypto/sha256"
	"fmt"
	"iter"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// ImportResult says what Import did.
type ImportResult struct {
	IDs    []string       `json:"entry_ids"`        // allocated entry ids, in input order
	Files  []string       `json:"files"`            // files written
	Places map[string]int `json:"places"`           // entries per destination ("core", "topics/x.md", …)
	Commit string         `json:"commit,omitempty"` // the commit hash ("" when every line folded)
	// HandEdit is what committing the person's uncommitted edits first did.
	HandEdit *HandEdit `json:"hand_edit,omitempty"`
	// Skipped are the lines whose text an entry of the same category
	// already holds (a re-run of the same import): they get no second
	// entry, unless ImportOptions.AllowDuplicates.
	Skipped []ImportSkip `json:"skipped"`
	// Folded are the lines that read like instructions to the model and
	// repeat one already waiting in Pending confirmation (this import's or
	// an earlier one's) closely: they get no entry of their own, as
	// consolidate folds such variants of one payload into one question.
	Folded []ImportFold `json:"folded"`
}

// ImportFoldMin is the word overlap (Jaccard) at which an instruction-like
// import line counts as a near repeat of a waiting one: one or two words of
// a sentence changed. Lower, distinct payloads that share their opening
// ("ignore previous instructions and …") would fold into each other.
const ImportFoldMin = 0.6

// ImportSkip is one import line skipped as already present.
type ImportSkip struct {
	Line  int    `json:"line"`     // its place among the imported lines, from 1
	Entry string `json:"entry_id"` // the entry that already holds its text
}

// ImportOptions tunes ImportStream.
type ImportOptions struct {
	// AllowDuplicates imports a line even when an entry of its category
	// already holds its text.
	AllowDuplicates bool
	// Lines is how many candidates next yields, if known (0: not known):
	// the tables that grow with each line are sized for them up front.
	Lines int
}

// ImportFold is one folded import line.
type ImportFold struct {
	Into       string  `json:"entry_id"`   // the Pending entry it repeats
	Similarity float64 `json:"similarity"` // word overlap (Jaccard) with it
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
	return s.ImportStream(ctx, ImportOptions{}, func() (*Candidate, error) {
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
func (s *Store) ImportStream(ctx context.Context, opts ImportOptions, next func() (*Candidate, error)) (*ImportResult, error) {
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
	run, err := s.newImportRun(ctx, opts.Lines)
	if err != nil {
		return nil, err
	}
	defer run.spill.Close()
	run.allowDup = opts.AllowDuplicates
	// The candidates come in batches, read ahead on a goroutine of their
	// own; the instruction check, pure and the dearest part, and the
	// line's presentKey run on every core; placing runs here, in input
	// order, as a loop of next and place would.
	c, done := first, false
	readBatch := func() ([]importLine, error) {
		var batch []importLine
		for !done && len(batch) < 256 {
			if c == nil {
				done = true
				break
			}
			batch = append(batch, importLine{c: c})
			var err error
			if c, err = next(); err != nil {
				return nil, err
			}
		}
		return batch, nil
	}
	check := func(batch []importLine) {
		for i := range batch {
			batch[i].prepare()
		}
	}
	placeAll := func(batch []importLine) error {
		for i := range batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := run.place(&batch[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := inOrder(ctx, readBatch, check, placeAll); err != nil {
		return nil, err
	}
	if run.ids.len() == 0 {
		return run.res, nil // every line folded or present: nothing to write
	}
	if err := run.commit(ctx); err != nil {
		return nil, err
	}
	run.res.IDs = run.ids.strings()
	return run.res, nil
}

// importRun is one import under the lock: the memory being edited, the
// id allocator and what was done so far.
type importRun struct {
	s        *Store
	ed       *Editor
	alloc    *IDAllocator
	res      *ImportResult
	titled   map[string]bool // topics created by this import, titled once
	payloads *payloadSet     // instruction-like Pending entries, to fold near repeats into
	// present maps category + normalised text to the entry holding it:
	// i ≥ 0 is ids.at(i), a new entry; i < 0 is old[-i-1], an entry of
	// the memory.
	present  map[textKey]int32
	old      []string
	ids      idList // the ids allocated, in input order (res.IDs at the end)
	allowDup bool
	line     int      // the line being placed, from 1
	spill    *os.File // the new topic files as they fill (Editor.SpillTo)
}

// presentKey is what makes an import line a repeat of an entry: its
// category and its text, case, white space and trailing punctuation aside
// (cheap: it runs over every entry of the memory on each import). It is
// kept as a 128-bit hash, so that an import of a million lines does not
// hold their texts twice; two different texts share one with a
// probability of about n²/2¹²⁹.
func presentKey(category, content string) textKey {
	// The hash of category, a zero byte and
	// strings.TrimRight(strings.ToLower(OneLine(content)), ".!;:,"),
	// built in a buffer on the stack: ToLower of ASCII text is that of
	// each byte.
	text := OneLine(content)
	var buf [256]byte
	b := append(append(buf[:0], category...), 0)
	head := len(b)
	if isASCIIText(text) {
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
	} else {
		b = append(b, strings.ToLower(text)...)
	}
	for len(b) > head && strings.IndexByte(".!;:,", b[len(b)-1]) >= 0 {
		b = b[:len(b)-1]
	}
	h := sha256.Sum256(b)
	return textKey(h[:16])
}

// isASCIIText reports whether s is all ASCII.
func isASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// textKey is the hash of an import line's category and normalised text.
type textKey [16]byte

// newImportRun commits a person's uncommitted edits, then loads the
// memory and the id state the import writes on, with room for lines
// more entries.
func (s *Store) newImportRun(ctx context.Context, lines int) (*importRun, error) {
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
	entries := mem.Entries()
	r := &importRun{
		s: s, ed: mem.Edit(), alloc: NewIDAllocator(st, mem),
		res:    &ImportResult{Places: map[string]int{}},
		titled: map[string]bool{}, payloads: pendingPayloads(mem), present: make(map[textKey]int32, lines+len(entries)),
	}
	r.ids.packed = make([]uint64, 0, lines)
	for _, e := range entries {
		if e.ID != "" {
			r.old = append(r.old, e.ID)
			r.present[presentKey(e.Category, e.Content)] = int32(-len(r.old))
		}
	}
	r.ed.SetMaxBytes(s.Config.Files.MaxBytes)
	if r.spill, err = ScratchFile(s.Dir, ".import-files.tmp-*"); err != nil {
		return nil, fmt.Errorf("import files: %w", err)
	}
	r.ed.SpillTo(r.spill)
	if !he.Empty() {
		r.res.HandEdit = he
	}
	return r, nil
}

// importLine is a candidate of an import with what placing it needs that
// depends on the line alone, worked out on every core (prepare).
type importLine struct {
	c *Candidate
	// instruction is InstructionNote of the entry's text (OneLine of the
	// candidate's); raw that of the candidate's text as given.
	instruction, raw string
	key              textKey // presentKey of the candidate
}

// prepare sets the line's instruction checks and its presentKey.
func (l *importLine) prepare() {
	l.key = presentKey(l.c.Category, l.c.Content)
	text := OneLine(l.c.Content)
	l.instruction = InstructionNote(text)
	l.raw = l.instruction
	if text != l.c.Content {
		l.raw = InstructionNote(l.c.Content)
	}
}

// place folds a candidate into a waiting payload it repeats, or gives it
// an id and inserts it where it belongs.
func (r *importRun) place(l *importLine) error {
	c := l.c
	r.line++
	if fold, ok := r.payloads.repeat(c.Content, l.raw, c.Scope, c.Category, ImportFoldMin); ok {
		r.res.Folded = append(r.res.Folded, fold)
		return nil
	}
	key := l.key
	if i, ok := r.present[key]; ok && !r.allowDup {
		var id string
		if i >= 0 {
			id = r.ids.at(int(i))
		} else {
			id = r.old[-i-1]
		}
		r.res.Skipped = append(r.res.Skipped, ImportSkip{Line: r.line, Entry: id})
		return nil
	}
	if r.ids.len() >= math.MaxInt32 {
		return fmt.Errorf("import: more than %d entries in one import", math.MaxInt32)
	}
	id, err := r.alloc.Next(c.Category)
	if err != nil {
		return err
	}
	e := c.Entry(id)
	t := TargetFor(e, c.Topic)
	if why := holdReason(c, e, r.s.Config.Consolidate.HoldAgentCore, l.instruction); why != "" {
		e.Notes = append(e.Notes, PendingNote, why)
		t = Target{Place: PlacePending}
		r.payloads.add(e, l.instruction)
	}
	if t.Place == PlaceTopic && c.Topic == "" && !r.titled[t.Topic] {
		r.ed.SetTopicTitle(t.Topic, strings.ToUpper(t.Topic[:1])+t.Topic[1:]+" notes")
		r.titled[t.Topic] = true
	}
	path, err := r.ed.InsertAt(e, t)
	if err != nil {
		return err
	}
	r.present[key] = int32(r.ids.len())
	r.ids.add(id)
	if t.Place == PlaceTopic {
		r.res.Places[path]++
	} else {
		r.res.Places[string(t.Place)]++
	}
	return nil
}

// commit writes the edited files and the state as one transaction, the
// whole import one commit.
func (r *importRun) commit(ctx context.Context) error {
	res := r.res
	r.present = nil // placing is over: the texts' hashes go before the files come back
	files, created, err := r.ed.ChangedLoad()
	if err != nil {
		return err
	}
	if state, ok := r.alloc.StateFile(); ok {
		files[StatePath] = state
	}
	for p := range files {
		res.Files = append(res.Files, p)
	}
	for p := range created {
		res.Files = append(res.Files, p)
	}
	sort.Strings(res.Files)
	body := placesSummary(res.Places)
	if n := len(res.Folded); n > 0 {
		body += fmt.Sprintf("\n%d instruction-like %s folded, as near repeats, into Pending %s\n", n, plural(n, "line", "lines"), foldTargets(res.Folded))
	}
	n := r.ids.len()
	msg := CommitMessage{
		Subject: fmt.Sprintf("import: %d %s", n, plural(n, "entry", "entries")),
		Body:    body,
		Op:      "import",
		Extra:   idRangeTrailers(r.ids.all()),
	}
	// The new topic files stay in the spill until their blobs are written,
	// one at a time: a large import never holds its output whole.
	tx, err := r.s.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Abort()
	for _, p := range res.Files {
		if c, ok := created[p]; ok {
			err = tx.PutLoadOnDisk(ctx, p, c.Size, c.Load)
		} else {
			err = tx.PutOnDisk(ctx, p, files[p])
		}
		if err != nil {
			return err
		}
	}
	res.Commit, err = tx.Commit(ctx, msg)
	return err
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
// import has a short message and `memctl log` still finds every id. Each
// numbered id takes 12 bytes here, so that a million do not take 40 MB.
func idRangeTrailers(ids iter.Seq[string]) [][2]string {
	type num struct {
		prefix, n int32 // prefixes[prefix], the id's number
		alt       int32 // alts[alt-1] is the id, when it is not FormatID(prefix, n)
	}
	var prefixes, alts []string
	index := map[string]int32{}
	var nums []num
	var out [][2]string
	for id := range ids {
		p, n, ok := splitID(id)
		switch {
		case ok && n >= 0:
			pi, seen := index[p]
			if !seen {
				pi = int32(len(prefixes))
				prefixes = append(prefixes, p)
				index[p] = pi
			}
			nu := num{prefix: pi, n: int32(n)}
			if !canonicalID(id, n) {
				alts = append(alts, id)
				nu.alt = int32(len(alts))
			}
			nums = append(nums, nu)
		case ok: // a random id joins no range
			out = append(out, [2]string{TrailerEntry, id})
		}
	}
	idOf := func(x num) string {
		if x.alt > 0 {
			return alts[x.alt-1]
		}
		return FormatID(prefixes[x.prefix], int(x.n))
	}
	sort.Slice(nums, func(i, j int) bool {
		if nums[i].prefix != nums[j].prefix {
			return prefixes[nums[i].prefix] < prefixes[nums[j].prefix]
		}
		return nums[i].n < nums[j].n
	})
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1].prefix == nums[i].prefix && nums[j+1].n == nums[j].n+1 {
			j++
		}
		v := idOf(nums[i])
		if j > i {
			v += ".." + idOf(nums[j])
		}
		out = append(out, [2]string{TrailerEntry, v})
		i = j + 1
	}
	return out
}

// canonicalID reports whether id, numbered n, is FormatID of its prefix
// and n: its number has no more leading zeros than the three digits.
func canonicalID(id string, n int) bool {
	digits := 1
	for v := n; v >= 10; v /= 10 {
		digits++
	}
	return len(id)-strings.LastIndexByte(id, '-')-1 == max(3, digits)
}

// idList is a list of entry ids, the numbered ones FormatID gives packed
// in 8 bytes each (the prefix's index and the number), the others kept
// as strings: an import of a million entries holds 8 MB of ids, not 32.
type idList struct {
	packed   []uint64 // prefix index << 32 | number, or 1<<63 | index into other
	prefixes []string
	index    map[string]uint32
	last     uint32 // the index of the prefix added last
	other    []string
}

const otherID = 1 << 63

func (l *idList) len() int { return len(l.packed) }

func (l *idList) add(id string) {
	p, n, ok := splitID(id)
	if !ok || n < 0 || !canonicalID(id, n) {
		l.packed = append(l.packed, otherID|uint64(len(l.other)))
		l.other = append(l.other, id)
		return
	}
	pi, seen := l.last, l.index != nil && p == l.prefixes[l.last] // an import's ids share few prefixes
	if !seen {
		pi, seen = l.index[p]
	}
	if !seen {
		if l.index == nil {
			l.index = map[string]uint32{}
		}
		pi = uint32(len(l.prefixes))
		l.prefixes = append(l.prefixes, p)
		l.index[p] = pi
	}
	l.last = pi
	l.packed = append(l.packed, uint64(pi)<<32|uint64(n))
}

func (l *idList) at(i int) string {
	v := l.packed[i]
	if v&otherID != 0 {
		return l.other[v&^otherID]
	}
	return FormatID(l.prefixes[v>>32], int(v&(1<<32-1)))
}

// all yields the ids in order.
func (l *idList) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range l.packed {
			if !yield(l.at(i)) {
				return
			}
		}
	}
}

// strings returns the ids as a slice (nil when there are none).
func (l *idList) strings() []string {
	if len(l.packed) == 0 {
		return nil
	}
	out := make([]string, 0, len(l.packed))
	for id := range l.all() {
		out = append(out, id)
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
	return ok && ok1 && ok2 && n >= 0 && n1 >= 0 && p == p1 && p == p2 && n >= n1 && n <= n2
}

// CheckUniqueIDs refuses to write a memory in which one id names two
// entries (committed before memctl renumbered hand-written duplicates):
// writing would silently pick one of them. The error is lint's message.
func (m *Memory) CheckUniqueIDs() error {
	// Only the ids: the whole lint (governance detectors over every entry)
	// is not every write's cost.
	seen := map[string]*Entry{}
	for _, d := range m.Docs() {
		for _, e := range d.Entries {
			if e.ID == "" {
				continue
			}
			if first := seen[e.ID]; first != nil {
				p := Problem{File: e.File, Line: e.Line, Message: fmt.Sprintf("duplicate id %s (first at %s:%d)", e.ID, first.File, first.Line)}
				return fmt.Errorf("%s: %s: give one of them a new id by hand (memctl lint lists every problem), then run memctl again", p, "memctl does not write a memory with a duplicated id")
			}
			seen[e.ID] = e
		}
	}
	return nil
}

// CheckEditable refuses to edit a memory whose files memctl cannot splice
// safely (invalid UTF-8, git conflict markers).
func (m *Memory) CheckEditable() error {
	for _, d := range m.Docs() {
		if len(d.Conflicts) > 0 {
			return &ConflictError{Markers: d.Conflicts[:1]}
		}
		for _, p := range d.Problems {
			if strings.Contains(p.Message, "not valid UTF-8") {
				return fmt.Errorf("%s is not valid UTF-8: fix it by hand (memctl lint shows where) before memctl edits the memory", d.Path)
			}
		}
	}
	return nil
}

// payloadSet is the instruction-like entries waiting in Pending
// confirmation, with their words, so an import can fold near repeats.
type payloadSet []payload

type payload struct {
	id       string
	scope    string
	category string
	words    map[string]bool
}

// pendingPayloads collects the instruction-like Pending entries of m.
func pendingPayloads(m *Memory) *payloadSet {
	ps := &payloadSet{}
	for _, e := range m.Entries() {
		if e.Place == PlacePending && e.ID != "" {
			ps.add(e, InstructionNote(e.Content))
		}
	}
	return ps
}

// add records an entry going to Pending confirmation if it is
// instruction-like: if instruction, its InstructionNote, is not "".
func (ps *payloadSet) add(e *Entry, instruction string) {
	if instruction == "" {
		return
	}
	*ps = append(*ps, payload{id: e.ID, scope: strings.Join(e.Scope, ","), category: e.Category, words: foldWords(e.Content)})
}

// repeat finds the waiting payload that an instruction-like text repeats
// with a word overlap of at least min, in the same scope and category and
// with the same polarity (a "never" or "not" in one and not the other is
// another rule, not a variant). instruction is InstructionNote(text).
func (ps *payloadSet) repeat(text, instruction string, scope []string, category string, min float64) (ImportFold, bool) {
	if len(*ps) == 0 || instruction == "" {
		return ImportFold{}, false
	}
	w, sc := foldWords(text), strings.Join(scope, ",")
	best := ImportFold{}
	for _, p := range *ps {
		if p.scope != sc || p.category != category || Negated(w) != Negated(p.words) {
			continue
		}
		if j := wordJaccard(w, p.words); j >= min && j > best.Similarity {
			best = ImportFold{Into: p.id, Similarity: float64(int(j*100+0.5)) / 100}
		}
	}
	return best, best.Into != ""
}

// negations are the words that turn a statement into its opposite.
var negations = map[string]bool{"not": true, "never": true, "no": true, "don": true, "dont": true, "doesn": true, "didn": true,
	"isn": true, "aren": true, "wasn": true, "won": true, "cannot": true, "can't": true, "nor": true, "without": true, "nothing": true, "none": true}

// Negated reports whether a set of lower-case words (foldWords) holds a
// negation ("not", "never", "no", "don't", …).
func Negated(words map[string]bool) bool {
	for w := range words {
		if negations[w] {
			return true
		}
	}
	return false
}

// FoldWords is the set of lower-case words of a text as import compares
// them (foldWords).
func FoldWords(text string) map[string]bool { return foldWords(text) }

// foldWords is the set of lower-case words of a text, normalised as
// forget normalises (width, hidden characters).
func foldWords(text string) map[string]bool {
	w := map[string]bool{}
	for _, f := range strings.FieldsFunc(NormalizeForget(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w[f] = true
	}
	return w
}

// wordJaccard is |a ∩ b| / |a ∪ b|.
func wordJaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

// foldTargets lists the distinct entries imports were folded into.
func foldTargets(fs []ImportFold) string {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Into) {
			ids = append(ids, f.Into)
		}
	}
	return strings.Join(ids, ", ")
}
