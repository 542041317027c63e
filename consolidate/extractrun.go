package consolidate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/memctl/memctl/consolidate/transcript"
	"github.com/memctl/memctl/mdmem"
)

// ExtractCacheDir holds, per transcript, how far extract has read it.
const ExtractCacheDir = mdmem.ExtractCacheDir

// ErrNoModel is returned when extract has no LLM to use.
var ErrNoModel = errors.New("no LLM is configured: extract needs one (set llm.model in .memctl/config.toml or MEMCTL_MODEL, and the endpoint: llm.base_url or OPENAI_BASE_URL, OPENAI_API_KEY)")

// LLMError is an extraction that failed because the model could not be
// used (unreachable, errors, unreadable answers, the deadline). Nothing
// was queued.
type LLMError struct{ Err error }

// Error says why the model could not be used.
func (e *LLMError) Error() string { return "the model could not be used: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *LLMError) Unwrap() error { return e.Err }

// ExtractOptions configure ExtractTranscript.
type ExtractOptions struct {
	Path          string // the transcript file
	Format        string // transcript format; "" or "auto" detects it
	SessionID     string // overrides the session id the transcript names
	Scopes        []string
	MinConfidence float64 // 0 means DefaultMinConfidence
	DryRun        bool    // propose, queue nothing, keep no offset
	Full          bool    // ignore the kept offset: read the whole transcript
	// KeepTrace copies the transcript into .memctl/traces/ (L3, searched
	// by memctl search --traces); traces older than TraceDays (0: kept)
	// are removed then.
	KeepTrace bool
	TraceDays int
	Completer Completer
	Getenv    func(string) string
	Now       func() time.Time
	RetryBase time.Duration
	Log       func(format string, args ...any)
}

// ExtractReport says what an extraction read and queued.
type ExtractReport struct {
	Transcript string      `json:"transcript"`
	Format     string      `json:"format"`
	SessionID  string      `json:"session_id,omitempty"`
	FromTurn   int         `json:"from_turn"` // first turn number read
	Turns      int         `json:"turns"`     // turns read (dialogue and tool)
	Skipped    int         `json:"skipped_records"`
	Warnings   []string    `json:"warnings"`
	NothingNew bool        `json:"nothing_new,omitempty"`
	DryRun     bool        `json:"dry_run,omitempty"`
	Model      string      `json:"model,omitempty"`
	Queued     []string    `json:"candidate_ids"`
	Proposals  []*Proposal `json:"proposals"`
	Usage      Usage       `json:"llm"`
	// DialogueDigest and ToolDigest are the layered summaries the
	// candidates were extracted from.
	DialogueDigest string `json:"dialogue_digest,omitempty"`
	ToolDigest     string `json:"tool_digest,omitempty"`
	// Trace is where the transcript was kept (--keep-trace); Pruned the
	// traces removed for their age.
	Trace  string   `json:"trace,omitempty"`
	Pruned []string `json:"pruned_traces"`
	// Offline is a dry run without a model: DialogueLines and ToolLines
	// are what the model would have been sent to digest, and nothing was
	// proposed.
	Offline       bool     `json:"offline,omitempty"`
	DialogueLines []string `json:"dialogue_lines,omitempty"`
	ToolLines     []string `json:"tool_lines,omitempty"`
}

// extractState is the cache record of one transcript.
type extractState struct {
	Path     string `json:"path"`
	Format   string `json:"format"`
	Next     int64  `json:"next"`      // byte offset read up to
	NextTurn int    `json:"next_turn"` // number of the next turn
	Prefix   string `json:"prefix_sha256"`
}

func stateKey(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:12])
}

// prefixHash hashes the first n bytes of f.
func prefixHash(f *os.File, n int64) (string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ExtractTranscript reads the part of a transcript not read before, asks
// the model for candidate memories, and queues the ones that are
// confident enough and not already queued or in memory, with refs to the
// session and turns. Then it keeps the offset read up to, so the same
// transcript twice queues nothing new and a grown one is read only for
// its new part. Without a model it fails with ErrNoModel; when the model
// fails, with an *LLMError: nothing is queued either way.
func ExtractTranscript(ctx context.Context, s *mdmem.Store, o ExtractOptions) (*ExtractReport, error) {
	o.defaults()
	abs, f, fi, err := openTranscript(o.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep := &ExtractReport{Transcript: abs, DryRun: o.DryRun, Queued: []string{}, Proposals: []*Proposal{}}
	format, err := transcriptFormat(f, abs, o.Format)
	if err != nil {
		return nil, err
	}
	rep.Format = format
	lk, statePath, err := lockTranscript(s.Dir, abs, o.Path)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	st, err := readExtractState(statePath, abs, format, o.Full)
	if err != nil {
		return nil, err
	}
	res, firstTurn, err := o.readNew(ctx, f, fi, st, format)
	if err != nil {
		return nil, err
	}
	rep.FromTurn, rep.Turns, rep.Skipped, rep.Warnings = firstTurn, len(res.Turns), res.Skipped, res.Warnings
	rep.SessionID = sessionID(o.SessionID, res.SessionID, abs)
	next := extractState{Path: abs, Format: format, Next: res.Next, NextTurn: res.NextTurn}
	if format != transcript.OpenAI {
		if next.Prefix, err = prefixHash(f, res.Next); err != nil {
			return nil, err
		}
	}
	if len(res.Turns) == 0 {
		rep.NothingNew = true
		if !o.DryRun && next != st {
			if err := writeState(ctx, statePath, next); err != nil {
				return rep, err
			}
		}
		if !o.DryRun {
			if err := settleOwed(statePath); err != nil {
				return rep, err
			}
		}
		return rep, o.keepTrace(ctx, s, rep)
	}
	comp, err := o.completer(s, rep)
	if errors.Is(err, ErrNoModel) && o.DryRun {
		// Offline: what the model would be sent, and nothing else.
		rep.Offline, rep.Model = true, ""
		rep.DialogueLines, rep.ToolLines = renderTurns(res.Turns)
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	mem, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	digests := &digestFile{path: strings.TrimSuffix(statePath, ".json") + ".digests.json"}
	if o.Full || o.DryRun {
		digests.fresh = true // read whole again: digests of another reading are not reused
	}
	if r, err := o.askModel(ctx, s, comp, mem, res.Turns, rep, digests); err != nil {
		return r, err
	}
	now := o.Now()
	keep, err := o.screen(ctx, s, mem, rep, now)
	if err != nil {
		return nil, err
	}
	if o.DryRun {
		return rep, nil
	}
	if len(keep) > 0 {
		ids, err := mdmem.Enqueue(ctx, s.Dir, keep, now)
		rep.Queued = append(rep.Queued, ids...)
		if err != nil {
			return rep, fmt.Errorf("queued %d of %d candidates, then: %w", len(ids), len(keep), err)
		}
	}
	if err := writeState(ctx, statePath, next); err != nil {
		return rep, err
	}
	if err := digests.remove(); err != nil {
		return rep, err
	}
	if err := settleOwed(statePath); err != nil {
		return rep, err
	}
	return rep, o.keepTrace(ctx, s, rep)
}

// digestFile is the DigestCache of one transcript's reading, a JSON
// object in the extract cache next to its state: written after every
// digest, so a run that stops (its cap, the deadline, a kill) leaves them
// for the next; removed once the reading is queued.
type digestFile struct {
	path   string
	fresh  bool // start empty, and keep nothing (a dry run, --full)
	loaded bool
	m      map[string]string
}

func (d *digestFile) load() {
	if d.loaded {
		return
	}
	d.loaded, d.m = true, map[string]string{}
	if d.fresh {
		return
	}
	if b, err := os.ReadFile(d.path); err == nil {
		_ = json.Unmarshal(b, &d.m) // a broken file is digested again
	}
}

// Get returns a kept digest.
func (d *digestFile) Get(key string) (string, bool) {
	d.load()
	v, ok := d.m[key]
	return v, ok
}

// Put keeps a digest, on disk at once.
func (d *digestFile) Put(ctx context.Context, key, digest string) error {
	d.load()
	d.m[key] = digest
	if d.fresh {
		return nil
	}
	b, err := json.Marshal(d.m)
	if err != nil {
		return err
	}
	return mdmem.WriteFileAtomic(ctx, d.path, b, mdmem.PrivateFileMode)
}

// Len is how many digests are kept.
func (d *digestFile) Len() int { d.load(); return len(d.m) }

func (d *digestFile) remove() error {
	if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// defaults fills in the options left zero.
func (o *ExtractOptions) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MinConfidence == 0 {
		o.MinConfidence = DefaultMinConfidence
	}
}

// openTranscript opens the transcript at path, which must be a regular
// file, and returns its absolute path and its file info.
func openTranscript(path string) (abs string, f *os.File, fi os.FileInfo, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", nil, nil, err
	}
	// A FIFO or a device would block the open, or never end: refused
	// before it is opened.
	if st, err := os.Stat(abs); err == nil && !st.Mode().IsRegular() {
		return "", nil, nil, fmt.Errorf("transcript %s is not a regular file", path)
	}
	if f, err = os.Open(abs); err != nil {
		return "", nil, nil, fmt.Errorf("transcript: %w", err)
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return "", nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return "", nil, nil, fmt.Errorf("transcript %s is not a regular file", path)
	}
	return abs, f, fi, nil
}

// transcriptFormat returns format, or the one detected from the file's
// name and first 64 KiB when format is "" or auto.
func transcriptFormat(f *os.File, abs, format string) (string, error) {
	if format != "" && format != transcript.Auto {
		return format, nil
	}
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	return transcript.Detect(abs, head[:n]), nil
}

// lockTranscript takes the lock of one transcript in the extract cache
// and returns it with the path of the transcript's state record. One
// extract per transcript at a time (a SessionEnd and a PreCompact hook
// may both fire): the second would read the same part.
func lockTranscript(memDir, abs, path string) (lk *flock.Flock, statePath string, err error) {
	cacheDir, err := mdmem.SafeDir(memDir, ExtractCacheDir)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, "", err
	}
	key := stateKey(abs)
	lk = flock.New(filepath.Join(cacheDir, key+".lock"))
	locked, err := lk.TryLock()
	if err != nil {
		return nil, "", err
	}
	if !locked {
		return nil, "", fmt.Errorf("another memctl extract is reading %s: %w", path, mdmem.ErrLocked)
	}
	return lk, filepath.Join(cacheDir, key+".json"), nil
}

// readExtractState reads how far the transcript was read; a missing,
// unreadable or foreign record (another path or format), or full, means
// from the start.
func readExtractState(statePath, abs, format string, full bool) (extractState, error) {
	var st extractState
	if full {
		return st, nil
	}
	if b, err := os.ReadFile(statePath); err == nil {
		if json.Unmarshal(b, &st) != nil || st.Path != abs || st.Format != format {
			st = extractState{}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	return st, nil
}

// readNew reads the turns after the part read already (st): from its byte
// offset when the part read is unchanged, else whole; an OpenAI
// conversation is read whole from the next turn, and from its start when
// it has fewer messages than last time. firstTurn is the number of the
// first turn read.
func (o *ExtractOptions) readNew(ctx context.Context, f *os.File, fi os.FileInfo, st extractState, format string) (res *transcript.Result, firstTurn int, err error) {
	from, firstTurn := int64(0), 1
	if st.Next > 0 && format != transcript.OpenAI {
		switch h, err := prefixHash(f, st.Next); {
		case st.Next > fi.Size() || err != nil || h != st.Prefix:
			o.logf("transcript %s changed before the part read already; reading it whole (the queue is checked for duplicates)", o.Path)
		default:
			from, firstTurn = st.Next, st.NextTurn
		}
	} else if st.NextTurn > 0 && format == transcript.OpenAI {
		firstTurn = st.NextTurn
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, err
	}
	res, err = transcript.Read(ctx, f, format, from, firstTurn)
	if err != nil {
		return nil, 0, fmt.Errorf("transcript %s (%s format): %w; nothing was queued", o.Path, format, err)
	}
	if format == transcript.OpenAI && res.NextTurn < firstTurn {
		// fewer messages than last time: another conversation
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, 0, err
		}
		if res, err = transcript.Read(ctx, f, format, 0, 1); err != nil {
			return nil, 0, fmt.Errorf("transcript %s (%s format): %w; nothing was queued", o.Path, format, err)
		}
	}
	return res, firstTurn, nil
}

// sessionID is the session the candidates cite: the one given, else the
// one the transcript names, else the transcript's file name without its
// extension.
func sessionID(given, named, abs string) string {
	if given != "" {
		return given
	}
	if named != "" {
		return named
	}
	base := filepath.Base(abs)
	return base[:len(base)-len(filepath.Ext(base))]
}

// completer is the model of the options, else the configured one (named
// in rep); ErrNoModel without one.
func (o *ExtractOptions) completer(s *mdmem.Store, rep *ExtractReport) (Completer, error) {
	rep.Model = "custom"
	if o.Completer != nil {
		return o.Completer, nil
	}
	base, apiKey, model, ok := LLMEndpoint(s.Config, o.Getenv)
	if !ok {
		return nil, ErrNoModel
	}
	rep.Model = model
	return NewOpenAI(base, apiKey, model), nil
}

// askModel has the model propose candidates from the turns, with the core
// entries of mem as context, and records its proposals and usage in rep.
// On error it returns the report to return with it (nil unless the model
// failed, an *LLMError).
func (o *ExtractOptions) askModel(ctx context.Context, s *mdmem.Store, comp Completer, mem *mdmem.Memory, turns []transcript.Turn, rep *ExtractReport, digests *digestFile) (*ExtractReport, error) {
	var core []string
	for _, e := range mem.Entries() {
		if e.Place == mdmem.PlaceCore && e.ID != "" {
			core = append(core, fmt.Sprintf("- [%s] %s", e.ID, promptText(e.Content)))
		}
	}
	x := &Extractor{Completer: comp, MemDir: s.Dir, Config: s.Config, MinConfidence: o.MinConfidence, Scopes: o.Scopes, RetryBase: o.RetryBase, Log: o.Log,
		MaxCalls: s.Config.Extract.MaxCalls, MaxTokens: s.Config.Extract.MaxTokens, Digests: digests}
	ex, err := x.Extract(ctx, turns, core, rep.SessionID)
	rep.Usage = ex.Usage
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(ctxErr, context.DeadlineExceeded) {
			return nil, ctxErr
		}
		if n := digests.Len(); n > 0 && !digests.fresh {
			err = fmt.Errorf("%w; nothing was queued yet, but %d chunk %s kept, and the next run goes on from %s", err, n,
				map[bool]string{true: "digest is", false: "digests are"}[n == 1], map[bool]string{true: "it", false: "them"}[n == 1])
		}
		return rep, &LLMError{Err: err}
	}
	rep.DialogueDigest, rep.ToolDigest, rep.Proposals = ex.DialogueDigest, ex.ToolDigest, ex.Proposals
	return nil, nil
}

// screen takes the proposals the path of memctl add takes: normalised
// (and redacted, once the redaction hook has detectors), then checked
// against what is queued and what the memory holds. It marks each
// proposal left out with the reason and returns the candidates to queue,
// normalised as of now.
func (o *ExtractOptions) screen(ctx context.Context, s *mdmem.Store, mem *mdmem.Memory, rep *ExtractReport, now time.Time) ([]*mdmem.Candidate, error) {
	seen := map[string]string{}
	queued, _, err := mdmem.ReadQueue(ctx, s.Dir)
	if err != nil {
		return nil, err
	}
	for _, c := range queued {
		seen[contentKey(tokens(c.Content))] = "already queued as " + c.ID
	}
	for _, e := range mem.Entries() {
		if k := contentKey(tokens(e.Content)); e.ID != "" && seen[k] == "" {
			seen[k] = "already in memory as " + e.ID
		}
	}
	var keep []*mdmem.Candidate
	for _, p := range rep.Proposals {
		if p.Dropped != "" {
			continue
		}
		// A candidate the model wrote around a secret is dropped, not
		// queued redacted: "the deploy key is [REDACTED]" is worth nothing.
		if found := (Secrets{}).Find(p.Candidate.Content); len(found) > 0 {
			p.Dropped = "holds a secret (" + strings.Join(found, ", ") + ")"
			p.Secret = true
			p.Candidate.Content = "" // never printed, nor in --json
			continue
		}
		if err := p.Candidate.Normalize(now, s.Config.Add.MaxContentBytes, s.Config.Add.Redactor()); err != nil {
			p.Dropped = err.Error()
			continue
		}
		k := contentKey(tokens(p.Candidate.Content))
		if why := seen[k]; why != "" {
			p.Dropped = why
			continue
		}
		seen[k] = "proposed twice in this extraction"
		keep = append(keep, p.Candidate)
	}
	return keep, nil
}

// keepTrace keeps the transcript as a raw trace and applies the traces'
// retention, when asked to.
func (o *ExtractOptions) keepTrace(ctx context.Context, s *mdmem.Store, rep *ExtractReport) error {
	if !o.KeepTrace || o.DryRun {
		return nil
	}
	var err error
	if rep.Trace, err = transcript.KeepTrace(ctx, s.Dir, rep.Transcript, rep.Format, rep.SessionID); err != nil {
		return fmt.Errorf("keep trace: %w", err)
	}
	if o.TraceDays > 0 {
		rep.Pruned, err = transcript.PruneTraces(ctx, s.Dir, time.Duration(o.TraceDays)*24*time.Hour, o.Now())
	}
	return err
}

func writeState(ctx context.Context, path string, st extractState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return mdmem.WriteFileAtomic(ctx, path, append(b, '\n'), mdmem.PrivateFileMode)
}

func (o *ExtractOptions) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}
