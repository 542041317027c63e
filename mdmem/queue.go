package mdmem

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Candidate is one queued memory awaiting consolidation, in the JSON schema
// of `memctl add --json` and `memctl import` (the seed's entry).
type Candidate struct {
	ID         string    `json:"id,omitempty"` // candidate id, assigned when queued
	Content    string    `json:"content"`
	Category   string    `json:"category"`
	Source     string    `json:"source,omitempty"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	Scope      Strings   `json:"scope,omitempty"`
	Confidence *float64  `json:"confidence,omitempty"`
	Refs       Strings   `json:"refs,omitempty"`
	Topic      string    `json:"topic,omitempty"`
	Tags       Strings   `json:"tags,omitempty"`
	QueuedAt   time.Time `json:"queued_at,omitzero"`
	// ExpiresAt is when the memory stops being true or useful (see
	// docs/FORMAT.md, retention); zero = never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// AllowForgotten is set by `add --allow-forgotten` only (input that
	// gives it is refused): the candidate may repeat a forgotten entry.
	AllowForgotten bool `json:"allow_forgotten,omitempty"`
	// Seen is where memctl saw the words: SeenTyped when the person typed
	// them (extract checked the transcript's typed turns; add ran at a
	// terminal). memctl's own: input that gives it is refused.
	Seen string `json:"seen,omitempty"`
}

// Strings is a list that also accepts a single JSON string.
type Strings []string

// UnmarshalJSON accepts "x" as well as ["x", "y"].
func (s *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// Redactor inspects text before it reaches disk. It returns the text to
// store (possibly redacted) or an error to refuse it. redact.Policy is
// one; AddConfig.Redactor builds it from [add] secrets and pii.
type Redactor interface {
	Redact(field, text string) (string, error)
}

type noRedactor struct{}

// Redact returns text unchanged.
func (noRedactor) Redact(_, text string) (string, error) { return text, nil }

// DefaultRedactor is the redaction hook used when none is given: it lets
// everything through, so that consolidation still sees (and holds) a
// secret a queue file brought in by hand. add and import pass the
// configured policy.
var DefaultRedactor Redactor = noRedactor{}

// DefaultSource is the source of a candidate that names none: an agent
// queued it. "user_explicit" is recorded only when stated.
const DefaultSource = "agent"

// agentSources are the sources that name an agent or a model, not a
// person: such entries are labelled when injected and, with
// consolidate.hold_agent_core, wait in Pending confirmation before they
// enter the core profile.
var agentSources = map[string]bool{"agent": true, "inference": true, "inferred": true, "agent_inferred": true,
	"session_summary": true, "extract": true, "extraction": true, "tool": true, "llm": true, "model": true}

// AgentSource reports whether source names an agent or a model rather
// than a person ("agent", "inference", "session_summary", "extract",
// "tool", …; case, and "-" or a space versus "_", aside).
func AgentSource(source string) bool {
	return agentSources[strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(source)))]
}

// namedList is one of a candidate's list fields with its name.
type namedList struct {
	name string
	vals []string
}

// listFields are the candidate's list fields as they are now: Normalize
// checks them twice, before and after splitting the scopes.
func (c *Candidate) listFields() [3]namedList {
	return [3]namedList{{"scope", c.Scope}, {"refs", c.Refs}, {"tags", c.Tags}}
}

// Normalize validates a candidate and fills defaults: category known,
// content non-empty valid UTF-8 within maxBytes, confidence in [0,1], topic
// a valid slug, dates within CheckDate's range (created_at defaults to
// now), source DefaultSource when empty. It runs every text field
// (content, source, scope, refs, tags, topic) through r first, so a
// refused or redacted secret never reaches the queue or the memory.
func (c *Candidate) Normalize(now time.Time, maxBytes int, r Redactor) error {
	if r == nil {
		r = DefaultRedactor
	}
	var err error
	for _, f := range []struct {
		name string
		v    *string
	}{{"content", &c.Content}, {"source", &c.Source}, {"topic", &c.Topic}} {
		if *f.v, err = r.Redact(f.name, *f.v); err != nil {
			return err
		}
	}
	for _, f := range c.listFields() {
		for i := range f.vals {
			if f.vals[i], err = r.Redact(f.name, f.vals[i]); err != nil {
				return err
			}
		}
	}
	c.Content = strings.TrimSpace(c.Content)
	if c.Content == "" {
		return errors.New("content is empty")
	}
	if err := ValidText("content", c.Content, maxBytes); err != nil {
		return err
	}
	if c.Category == "" {
		return fmt.Errorf("category is missing (known: %s)", strings.Join(CategoryNames(), ", "))
	}
	cat, ok := CategoryByName(c.Category)
	if !ok {
		return unknownCategoryError(c.Category)
	}
	c.Category = cat.Name
	if c.Confidence != nil && (*c.Confidence < 0 || *c.Confidence > 1 || *c.Confidence != *c.Confidence) {
		return fmt.Errorf("confidence %v is outside [0,1]", *c.Confidence)
	}
	if c.Topic != "" {
		if err := ValidSlug(c.Topic); err != nil {
			return err
		}
	}
	small := func(what string, vals []string) error {
		for _, v := range vals {
			if err := ValidText(what, v, 512); err != nil {
				return err
			}
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("%s has an empty value", what)
			}
		}
		return nil
	}
	if err := ValidText("source", c.Source, 256); err != nil {
		return err
	}
	if err := trailerSafeSource(c.Source); err != nil {
		return err
	}
	for i, r := range c.Refs {
		if c.Refs[i], err = trailerSafeItem("refs", r); err != nil {
			return err
		}
	}
	for _, tg := range c.Tags {
		if _, err := trailerSafeItem("tags", tg); err != nil {
			return err
		}
	}
	scopes, err := SplitScopes(c.Scope...)
	if err != nil {
		return err
	}
	c.Scope = scopes
	for _, sc := range scopes {
		if strings.EqualFold(sc, ScopeAll) {
			return fmt.Errorf("%w %q: it is reserved (inject --scope all means every scope)", ErrBadScope, sc)
		}
	}
	for _, f := range c.listFields() { // the scopes as split above
		if err := small(f.name, f.vals); err != nil {
			return err
		}
	}
	if len(c.Refs) > 256 || len(c.Scope) > 32 || len(c.Tags) > 64 {
		return errors.New("too many refs, scopes or tags (limits 256, 32, 64)")
	}
	if c.Source == "" {
		c.Source = DefaultSource
	}
	if err := CheckDate("created_at", c.CreatedAt, now); err != nil {
		return err
	}
	if err := CheckDate("updated_at", c.UpdatedAt, now); err != nil {
		return err
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now.UTC().Truncate(time.Second)
	}
	if !c.ExpiresAt.IsZero() && !c.ExpiresAt.After(now) {
		return fmt.Errorf("expires_at %s is not in the future", FormatTime(c.ExpiresAt))
	}
	return nil
}

// Entry converts the candidate to an entry with the given id. Its source
// is WitnessedSource: a person's label memctl did not see the person give
// becomes the agent's.
func (c *Candidate) Entry(id string) *Entry {
	e := &Entry{ID: id, Category: c.Category, Content: OneLine(c.Content), Source: WitnessedSource(c),
		Created: c.CreatedAt, Updated: c.UpdatedAt, Expires: c.ExpiresAt, Scope: c.Scope, Refs: c.Refs, Tags: c.Tags}
	if c.Confidence != nil {
		e.Confidence, e.HasConf = *c.Confidence, true
	}
	if e.Updated.Equal(e.Created) {
		e.Updated = time.Time{} // "updated" equal to "created" says nothing
	}
	return e
}

// maxBatch is how many candidates one Enqueue call may number: the
// sequence in the id has 8 digits.
const maxBatch = 100_000_000

// NewCandidateID returns a fresh candidate id that sorts by time, then by
// seq, the candidate's position in its batch:
// c<UTC time to the microsecond>-<seq, 8 digits>-<8 random hex digits>.
// Candidates of one batch share the time, so the sequence keeps their
// input order. Ids written before the sequence existed
// (c<time>-<8 random hex digits>) stay valid. seq must be in
// [0, 100000000).
func NewCandidateID(now time.Time, seq int) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("c%s-%08d-%s", now.UTC().Format("20060102T150405.000000"), seq, hex.EncodeToString(b[:]))
}

func validCandidateID(id string) bool {
	if len(id) < 10 || id[0] != 'c' || len(id) > 64 {
		return false
	}
	for _, c := range id[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == 'T' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// Enqueue writes each candidate to its own queue file (temp, fsync, rename),
// so concurrent writers need no lock and a crash never leaves half a
// candidate. It assigns and returns the candidate ids, which sort in the
// order of cands (ReadQueue returns them so). Candidates must have been
// normalised.
func Enqueue(ctx context.Context, dir string, cands []*Candidate, now time.Time) ([]string, error) {
	qd, err := SafeDir(dir, QueueDir)
	if err != nil {
		return nil, err
	}
	if err := privateDir(qd); err != nil {
		return nil, err
	}
	if len(cands) > maxBatch {
		return nil, fmt.Errorf("%d candidates in one batch, over the limit of %d: split the input", len(cands), maxBatch)
	}
	// Every file is encoded and checked before the first is written: a
	// batch is queued whole or refused.
	files := make([][]byte, len(cands))
	for i, c := range cands {
		c.ID = NewCandidateID(now, i)
		c.QueuedAt = now.UTC()
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // "<" stays one byte, as the limits count it
		if err := enc.Encode(c); err != nil {
			return nil, err
		}
		if b.Len() > MaxQueueFileBytes {
			return nil, fmt.Errorf("candidate %d: %d bytes queued, over the %d memctl reads back: shorten its content, refs or tags", i+1, b.Len(), MaxQueueFileBytes)
		}
		files[i] = b.Bytes()
	}
	ids := make([]string, 0, len(cands))
	for i, c := range cands {
		if err := WriteFileAtomic(ctx, filepath.Join(qd, c.ID+".json"), files[i], 0o600); err != nil {
			return ids, fmt.Errorf("queue candidate: %w", err)
		}
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// trailerSafeSource refuses a source the entry's trailer would not give
// back as written: one holding the trailer's separator or parentheses, or
// one that reads as a key of it ("scope project:x", "expires 2026-02-01",
// a date), which would come back as that key.
func trailerSafeSource(src string) error {
	if src == "" {
		return nil
	}
	first, _, _ := strings.Cut(src, " ")
	_, isDate := ParseTime(src)
	switch {
	case cleanMeta(src) != strings.TrimSpace(src):
		return fmt.Errorf("source %q holds \"·\", \"(\" or \")\", which an entry's metadata cannot hold: give a plain name such as \"agent\" or \"user\"", src)
	case isDate, first == keyConf, first == keyScope, first == keyRefs, first == keyTags, first == keyUpdated, first == keyExpires, first == keySee, strings.HasPrefix(src, keySuperseded):
		return fmt.Errorf("source %q reads as a metadata field of the entry, not a source: give a plain name such as \"agent\" or \"user\"", src)
	}
	return nil
}

// trailerSafeItem returns a refs or tags value as the entry's trailer
// can hold it: the trailer separates values with commas and ends at a
// parenthesis, so a URL gets those characters percent-encoded (the same
// URL), and any other value holding one is refused.
func trailerSafeItem(what, v string) (string, error) {
	if cleanListItem(v) == strings.TrimSpace(v) {
		return v, nil
	}
	if what == "refs" && strings.Contains(v, "://") {
		enc := strings.NewReplacer("(", "%28", ")", "%29", ",", "%2C", "·", "%C2%B7").Replace(v)
		if cleanListItem(enc) == strings.TrimSpace(enc) {
			return enc, nil
		}
	}
	return "", fmt.Errorf("%s value %q holds \",\", \"(\", \")\" or \"·\", which an entry's metadata cannot hold", what, v)
}

// MaxQueueFileBytes is the largest queue file memctl reads; Enqueue never
// writes a larger one.
const MaxQueueFileBytes = 1 << 20

// privateDir creates p (and its parents) for the queue: mode 0700, and
// an existing directory open to others is narrowed to 0700. Queue files
// are written 0600: they hold what agents queued, before a person saw it.
func privateDir(p string) error {
	if err := os.MkdirAll(p, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(p, fi.Mode().Perm()&0o700)
	}
	return nil
}

// QueueProblem is a queue file memctl could not read.
type QueueProblem struct {
	File string
	Err  error
}

// ReadQueue returns the queued candidates, oldest first, and the files it
// could not read (left in place for a person to look at): unreadable or
// invalid JSON, and queue entries that are not regular files (a symbolic
// link, a directory), which memctl never follows.
func ReadQueue(ctx context.Context, dir string) ([]*Candidate, []QueueProblem, error) {
	qd, err := SafeDir(dir, QueueDir)
	if err != nil {
		return nil, nil, err
	}
	ents, err := os.ReadDir(qd)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []*Candidate
	var bad []QueueProblem
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var c *Candidate
		if !de.Type().IsRegular() {
			err = notRegular(filepath.Join(qd, name), de.Type())
		} else {
			c, err = readCandidate(filepath.Join(qd, name))
		}
		if err == nil && c.ID != strings.TrimSuffix(name, ".json") {
			err = fmt.Errorf("id %q does not match the file name", c.ID)
		}
		if err != nil {
			bad = append(bad, QueueProblem{File: filepath.ToSlash(filepath.Join(QueueDir, name)), Err: err})
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, bad, nil
}

// notRegular describes a queue entry that is not a regular file.
func notRegular(path string, mode fs.FileMode) error {
	if mode&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return fmt.Errorf("is a symbolic link (to %s), not a regular file; memctl does not follow links in the queue", target)
	}
	return fmt.Errorf("is not a regular file (%s)", mode.Type())
}

// readCandidate reads a queue file: one JSON object as Enqueue writes it
// (DecodeQueueFile's rules), never through a symbolic link.
func readCandidate(path string) (*Candidate, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	li, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !li.Mode().IsRegular() || !os.SameFile(fi, li) {
		return nil, notRegular(path, li.Mode())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxQueueFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxQueueFileBytes {
		return nil, errors.New("file is larger than 1 MiB")
	}
	return DecodeQueueFile(data)
}

// DecodeQueueFile decodes a queue file's content: like a line of JSON input
// (one object, strict UTF-8, no unknown fields, a leading BOM ignored), but
// with memctl's own fields "id" (required, valid) and "queued_at".
func DecodeQueueFile(data []byte) (*Candidate, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	var c Candidate
	if err := decodeStrict(data, &c); err != nil {
		return nil, err
	}
	if !validCandidateID(c.ID) {
		return nil, fmt.Errorf("invalid candidate id %q", c.ID)
	}
	return &c, nil
}

// Dequeue removes queue files of the given candidate ids. Missing files are
// not an error, so a rerun after a crash finishes the job.
func Dequeue(ctx context.Context, dir string, ids []string) error {
	qd := filepath.Join(dir, filepath.FromSlash(QueueDir))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !validCandidateID(id) {
			return fmt.Errorf("invalid candidate id %q", id)
		}
		if err := os.Remove(filepath.Join(qd, id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return SyncDir(qd)
}

// DecodeJSONLines reads candidates from JSON Lines input (add --json,
// import). It calls fn for every non-blank line with its 1-based number and
// either the candidate or the reason the line is unreadable. The rules
// (docs/FORMAT.md): one JSON object per line with nothing after it, valid
// UTF-8 (no invalid bytes, no lone surrogate escapes), only the fields of
// the schema – "id" and "queued_at" are memctl's own and refused; a UTF-8
// byte order mark at the start of the input is ignored. Lines longer than
// maxLine bytes are reported, not read whole into memory.
func DecodeJSONLines(r io.Reader, maxLine int, fn func(line int, c *Candidate, err error) error) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, maxLine)
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var c *Candidate
			var perr error
			switch {
			case tooLong:
				perr = fmt.Errorf("line is longer than %d bytes", maxLine)
			default:
				c = &Candidate{}
				if perr = decodeInput(line, c); perr != nil {
					c = nil
				}
			}
			if ferr := fn(n, c, perr); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// DecodeJSONLinesParallel is DecodeJSONLines with the lines decoded, and
// each decoded candidate given to prep, on up to GOMAXPROCS goroutines
// (prep must be safe for that: Normalize is); fn still gets every line in
// order, on the caller's goroutine, with the error of its decoding or of
// prep (and then a nil candidate). What fn sees is what DecodeJSONLines and a prep call before fn
// give.
func DecodeJSONLinesParallel(ctx context.Context, r io.Reader, maxLine int, prep func(*Candidate) error, fn func(line int, c *Candidate, err error) error) error {
	type item struct {
		n       int
		line    []byte
		tooLong bool
		c       *Candidate
		err     error
	}
	br := bufio.NewReaderSize(r, 64*1024)
	n, eof := 0, false
	var readErr error // ends the input after the lines read before it
	next := func() ([]item, error) {
		if readErr != nil {
			return nil, readErr
		}
		var batch []item
		for size := 0; !eof && len(batch) < 512 && size < 1<<20; {
			n++
			line, tooLong, err := readLine(br, maxLine)
			if n == 1 {
				line = bytes.TrimPrefix(line, utf8BOM)
			}
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				batch = append(batch, item{n: n, line: line, tooLong: tooLong})
				size += len(line)
			}
			if err != nil {
				eof = true
				if err != io.EOF {
					readErr = err
				}
			}
		}
		if len(batch) == 0 && readErr != nil {
			return nil, readErr
		}
		return batch, nil
	}
	work := func(batch []item) {
		for i := range batch {
			it := &batch[i]
			if it.tooLong {
				it.err = fmt.Errorf("line is longer than %d bytes", maxLine)
				continue
			}
			c := &Candidate{}
			if it.err = decodeInput(it.line, c); it.err == nil {
				it.err = prep(c)
			}
			if it.err == nil {
				it.c = c
			}
			it.line = nil
		}
	}
	use := func(batch []item) error {
		for _, it := range batch {
			if err := fn(it.n, it.c, it.err); err != nil {
				return err
			}
		}
		return nil
	}
	return inOrder(ctx, next, work, use)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// inputCandidate is a Candidate as JSON input may give it: memctl's own
// fields shadow the candidate's and refuse any value.
type inputCandidate struct {
	*Candidate
	ID             ownID       `json:"id"`
	QueuedAt       ownQueuedAt `json:"queued_at"`
	AllowForgotten ownAllow    `json:"allow_forgotten"`
	Seen           ownSeen     `json:"seen"`
}

// ownID and ownQueuedAt are fields memctl sets when it queues a candidate;
// input that gives them is refused.
type (
	ownID       struct{}
	ownQueuedAt struct{}
	ownAllow    struct{}
	ownSeen     struct{}
)

// UnmarshalJSON refuses the field: only memctl says where it saw words.
func (*ownSeen) UnmarshalJSON([]byte) error { return ownField("seen") }

// UnmarshalJSON refuses the field.
func (*ownID) UnmarshalJSON([]byte) error { return ownField("id") }

// UnmarshalJSON refuses the field.
func (*ownQueuedAt) UnmarshalJSON([]byte) error { return ownField("queued_at") }

// UnmarshalJSON refuses the field (the override is a command-line flag).
func (*ownAllow) UnmarshalJSON([]byte) error {
	return errors.New(`field "allow_forgotten" is not taken from input; pass --allow-forgotten to the command`)
}

func ownField(name string) error {
	return fmt.Errorf("field %q is memctl's own (set when a candidate is queued); remove it from the input", name)
}

// decodeStrict decodes data, one JSON value with nothing but white space
// after it, into v: valid UTF-8 only, unknown fields refused.
func decodeStrict(data []byte, v any) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("invalid UTF-8 at byte %d; memctl stores text as UTF-8 and does not guess an encoding", invalidUTF8At(data)+1)
	}
	if err := loneSurrogate(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("invalid JSON: %v", err)
		}
		return fmt.Errorf("invalid candidate: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	rest := bytes.TrimSpace(data[dec.InputOffset():])
	switch {
	case len(rest) == 0:
		return checkKeys(data[:dec.InputOffset()], v)
	case rest[0] == '{':
		return errors.New("more than one JSON object on the line; give one object per line")
	default:
		if len(rest) > 20 {
			rest = append(rest[:20:20], "…"...)
		}
		return fmt.Errorf("text after the JSON object: %q; give one object per line and nothing else", rest)
	}
}

// checkKeys refuses what encoding/json lets pass silently in an object
// decoded into v (a pointer to a struct): a field given twice (the last
// value would win) and a field name spelt in another case than the
// schema's ("Content": it would be taken for "content"). data is the
// object, which Decode has already read as valid JSON.
func checkKeys(data []byte, v any) error {
	names := schemaNames(reflect.TypeOf(v))
	keys, ok := topLevelKeys(data)
	if !ok {
		return nil // not an object: Decode has said what it had to
	}
	seen := make(map[string]bool, len(keys))
	for _, key := range keys {
		if seen[key] {
			return fmt.Errorf("invalid candidate: field %q is given twice", key)
		}
		seen[key] = true
		if len(names) > 0 && !names[key] {
			return fmt.Errorf("invalid candidate: unknown field %q (field names are lowercase: %q)", key, strings.ToLower(key))
		}
	}
	return nil
}

// schemaFields caches schemaNames per type: checkKeys runs for every line
// of an import.
var schemaFields sync.Map // reflect.Type → map[string]bool

// schemaNames returns the JSON field names of the struct t points to (nil
// for any other type).
func schemaNames(t reflect.Type) map[string]bool {
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	if names, ok := schemaFields.Load(t); ok {
		return names.(map[string]bool)
	}
	names := map[string]bool{}
	for _, f := range reflect.VisibleFields(t.Elem()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" && !f.Anonymous {
			names[name] = true
		}
	}
	schemaFields.Store(t, names)
	return names
}

// topLevelKeys returns the keys of the JSON object data, in order, as
// encoding/json reads them (escapes decoded); ok is false when data is not
// an object. data must be valid JSON.
func topLevelKeys(data []byte) (keys []string, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			return keys, true
		}
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		end := stringEnd(data, i)
		raw := data[i:end]
		key := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			if err := json.Unmarshal(raw, &key); err != nil {
				return nil, false
			}
		}
		keys = append(keys, key)
		i = skipSpace(data, end)
		i = valueEnd(data, skipSpace(data, i+1)) // past the ':' and the value
	}
}

// skipSpace returns the index of the first non-white-space byte of data at
// or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at i.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// valueEnd returns the index just past the JSON value starting at i.
func valueEnd(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			i = stringEnd(data, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// invalidUTF8At returns the offset of the first invalid UTF-8 byte in b.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// loneSurrogate refuses a \uD800-\uDFFF escape that is not half of a
// surrogate pair: encoding/json would silently turn it into U+FFFD.
func loneSurrogate(b []byte) error {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escaped character: skip it (it may be a backslash)
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if r2, ok := hex4(i + 6); ok && r2 >= 0xDC00 && r2 < 0xE000 {
				i += 11
				continue
			}
			fallthrough
		case r >= 0xDC00 && r < 0xE000:
			return fmt.Errorf("invalid UTF-8: the escape %s is half of a surrogate pair", b[i:i+6])
		}
		i += 5
	}
	return nil
}

// readLine reads one line, keeping at most max bytes of it.
func readLine(br *bufio.Reader, max int) ([]byte, bool, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong = true
				line = nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}
