package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/redact"
	"github.com/memctl/memctl/templates"
)

// Request is one chat completion: a system and a user message, and the
// JSON schema the answer must follow (structured output, where the server
// supports it).
type Request struct {
	System     string
	User       string
	SchemaName string
	Schema     json.RawMessage
}

// Response is the model's answer and the token usage the server reported.
type Response struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
}

// Completer is the one thing consolidate needs from an LLM. OpenAI
// implements it with go-openai; tests use fakes. A run calls it from
// llm.parallel goroutines at once: it must be safe for concurrent use.
type Completer interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// RetryableError is implemented by Completer errors that say whether a
// retry may succeed (429, 5xx, timeouts).
type RetryableError interface {
	error
	Retryable() bool
}

// OpSchema is the JSON schema of the model's answer. Every field is
// required so that strict structured output accepts it; target 0, "" text
// and "" category mean "none".
var OpSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "operations": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "op": {"type": "string", "enum": ["add", "merge", "supersede", "archive", "compress", "conflict", "noop"]},
          "target": {"type": "integer", "description": "id of the entry the operation acts on; 0 for none"},
          "sources": {"type": "array", "items": {"type": "integer"}, "description": "ids of the candidates (and, for compress, entries) it uses"},
          "text": {"type": "string", "description": "new statement; empty keeps the source wording"},
          "category": {"type": "string", "description": "category for compress; empty for the sources' category"},
          "reason": {"type": "string"}
        },
        "required": ["op", "target", "sources", "text", "category", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["operations"],
  "additionalProperties": false
}`)

// Usage sums what the LLM stage cost.
type Usage struct {
	Calls            int  `json:"calls"`
	Failed           int  `json:"failed_calls"`
	Batches          int  `json:"batches"`
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	Estimated        bool `json:"estimated,omitempty"` // the server reported no usage: bytes/4
	Candidates       int  `json:"candidates"`          // candidates sent to the model
	// FailedBatches counts batches without a usable answer (errors,
	// unreadable answers, the run's deadline).
	FailedBatches int `json:"failed_batches"`
	// DeadlineHit: the run's LLM deadline (llm.deadline) stopped the stage.
	DeadlineHit bool `json:"deadline_hit,omitempty"`
}

// add sums o's calls and tokens into u.
func (u *Usage) add(o Usage) {
	u.Calls += o.Calls
	u.Failed += o.Failed
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.Estimated = u.Estimated || o.Estimated
}

// LLMStage runs the LLM over the triaged clusters.
type LLMStage struct {
	Completer Completer
	MemDir    string // for template overrides
	Config    *mdmem.Config
	Now       time.Time
	RetryBase time.Duration // first backoff; default 500ms
	Progress  func(done, total int)
	Log       func(format string, args ...any)
	Trace     func(format string, args ...any) // retries and failed batches; nil: Log
	sleep     func(context.Context, time.Duration) error
	logMu     sync.Mutex // Log and Trace are called from concurrent calls one at a time
}

// promptItem is one numbered item shown to the model.
type promptItem struct {
	ID       int      `json:"id"`
	Kind     string   `json:"kind"`
	Category string   `json:"cat"`
	Date     string   `json:"date,omitempty"` // the day only: the prompt's size matters more
	Scope    []string `json:"scope,omitempty"`
	Text     string   `json:"text"`
}

// batchMap maps a batch's integer ids back to entries and candidates.
type batchMap struct {
	entries map[int]*mdmem.Entry
	cands   map[int]*mdmem.Candidate
}

func (s *LLMStage) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// tracef reports a retry or a failed batch: detail the run's report sums up.
func (s *LLMStage) tracef(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	switch {
	case s.Trace != nil:
		s.Trace(format, args...)
	case s.Log != nil:
		s.Log(format, args...)
	}
}

// promptText is stored text as the model may see it: secrets redacted
// (an entry imported or edited by hand may hold one, and the prompt
// leaves the machine), hidden characters and chat-template tokens
// neutralised.
func promptText(s string) string {
	r, _ := redact.Redact(s)
	return redact.Neutralise(r)
}

// promptLine is one item of the prompt as a JSON line, dated by its UTC
// day when date is set.
func promptLine(it promptItem, date time.Time) string {
	if !date.IsZero() {
		it.Date = date.UTC().Format("2006-01-02")
	}
	b, _ := json.Marshal(it)
	return string(b)
}

// entryLine is the prompt item of entry e, numbered n.
func entryLine(n int, e *mdmem.Entry) string {
	return promptLine(promptItem{ID: n, Kind: "entry", Category: e.Category, Scope: e.Scope, Text: promptText(e.Content)}, e.Date())
}

// candLine is the prompt item of candidate c, numbered n.
func candLine(n int, c *mdmem.Candidate) string {
	return promptLine(promptItem{ID: n, Kind: "candidate", Category: c.Category, Scope: c.Scope, Text: promptText(mdmem.OneLine(c.Content))}, c.CreatedAt)
}

// prompts are the templates of a consolidate request, read once per run
// (a memory may override them). err is why they could not be read: every
// request built from them fails with it, so the candidates stay queued.
type prompts struct {
	system, user string
	err          error
}

func loadPrompts(memDir string) *prompts {
	p := &prompts{}
	if p.system, p.err = templates.Load(memDir, "consolidate-system.tmpl"); p.err == nil {
		p.user, p.err = templates.Load(memDir, "consolidate-user.tmpl")
	}
	return p
}

// build is the request about cl: its entries numbered first, then its
// candidates, and the map of those numbers back.
func (p *prompts) build(cl *Cluster, now time.Time) (Request, *batchMap, error) {
	if p.err != nil {
		return Request{}, nil, p.err
	}
	bm := &batchMap{entries: map[int]*mdmem.Entry{}, cands: map[int]*mdmem.Candidate{}}
	var items []string
	n := 0
	for _, e := range cl.Entries {
		n++
		bm.entries[n] = e
		items = append(items, entryLine(n, e))
	}
	for _, c := range cl.Cands {
		n++
		bm.cands[n] = c
		items = append(items, candLine(n, c))
	}
	sys, err := renderTemplate("consolidate-system.tmpl", p.system, map[string]any{"Categories": strings.Join(mdmem.CategoryNames(), ", ")})
	if err != nil {
		return Request{}, nil, err
	}
	user, err := renderTemplate("consolidate-user.tmpl", p.user, map[string]any{"Today": now.UTC().Format("2006-01-02"), "Items": items})
	if err != nil {
		return Request{}, nil, err
	}
	return Request{System: sys, User: user, SchemaName: "memctl_operations", Schema: OpSchema}, bm, nil
}

// batchResult is what one batch's call gave.
type batchResult struct {
	asked     bool // the model was asked (not cut by the deadline first)
	decisions []*Decision
	err       error
	deadline  bool  // err came from the run's LLM deadline
	usage     Usage // its calls and tokens
}

// Run asks the model about every batch, llm.parallel at a time, and
// returns the decisions, the candidates sent (LLMCands), and for
// candidates without a usable answer the reason. The answers are taken
// in batch order, whatever order they arrive in, so the same answers
// give the same decisions. Failed batches leave their candidates without
// decision: they stay queued. A cancelled ctx stops every call and
// returns its error once they have all returned.
func (s *LLMStage) Run(ctx context.Context, in *Input, clusters []*Cluster) ([]*Decision, map[string]bool, map[string]string, Usage, error) {
	cfg := s.Config.Consolidate
	p := loadPrompts(s.MemDir)
	lim := batchLimits{cands: cfg.BatchSize, tokens: cfg.BatchTokens}
	batches := packBatches(clusters, lim, newTokenMeter(p, s.Now, promptCounter(in.Measure, s.Config.Inject.Tokenizer)))
	for i, b := range batches {
		if lim.tokens > 0 && b.tokens > lim.tokens {
			s.tracef("LLM batch %d/%d: %d related candidates take %d prompt tokens, over consolidate.batch_tokens = %d; sent alone", i+1, len(batches), len(b.Cands), b.tokens, lim.tokens)
		}
	}
	// One deadline for every call of the run, retries included: a hanging
	// endpoint costs at most this, then the rest stays queued.
	parent := ctx
	if d := s.Config.LLM.Deadline.Duration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	capN := ArchiveCap(s.Config, in.entries())
	plainCap := PlainArchiveCap(s.Config, in.entries())
	results := s.ask(ctx, parent, p, batches, capN, plainCap)
	if parent.Err() != nil {
		var u Usage
		for _, r := range results {
			u.add(r.usage)
		}
		return nil, nil, nil, u, parent.Err()
	}
	sent := map[string]bool{}
	notes := map[string]string{}
	var all []*Decision
	var u Usage
	unasked := 0
	for i, r := range results {
		b := batches[i]
		for _, c := range b.Cands {
			// a candidate not asked about is counted as sent too: held
			// for the model, never added by rule because the model was
			// not asked
			sent[c.ID] = true
		}
		if !r.asked {
			unasked++
			for _, c := range b.Cands {
				notes[c.ID] = "the run's LLM deadline was reached before the model was asked"
			}
			continue
		}
		u.Batches++
		u.Candidates += len(b.Cands)
		u.add(r.usage)
		if r.err != nil {
			u.FailedBatches++
			err := r.err
			if r.deadline {
				u.DeadlineHit = true
				err = fmt.Errorf("the run's LLM deadline (llm.deadline = %v) was reached: %w", s.Config.LLM.Deadline.Duration, err)
			}
			s.tracef("LLM batch %d/%d: %v; its %d candidates stay queued", i+1, len(batches), err, len(b.Cands))
			for _, c := range b.Cands {
				notes[c.ID] = err.Error()
			}
			continue
		}
		all = append(all, r.decisions...)
	}
	if unasked > 0 {
		u.DeadlineHit = true
		u.FailedBatches += unasked
		s.logf("LLM deadline (llm.deadline = %v) reached: %d batches not sent, their candidates stay queued", s.Config.LLM.Deadline.Duration, unasked)
	}
	return all, sent, notes, u, nil
}

// ask calls the model for the batches, llm.parallel calls at a time, in
// batch order, and returns each batch's result once every call has
// returned. Once ctx is done no batch is sent: those are left not asked.
func (s *LLMStage) ask(ctx, parent context.Context, p *prompts, batches []*llmBatch, capN, plainCap int) []batchResult {
	results := make([]batchResult, len(batches))
	var (
		mu         sync.Mutex // guards next, done and Progress
		next, done int
		wg         sync.WaitGroup
	)
	progress := func() {
		if s.Progress != nil {
			s.Progress(done, len(batches))
		}
	}
	progress()
	for range min(max(s.Config.LLM.Parallel, 1), len(batches)) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				if i >= len(batches) || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				r := &results[i]
				r.asked = true
				r.decisions, r.err = s.batch(ctx, p, batches[i].Cluster, capN, plainCap, &r.usage)
				r.deadline = r.err != nil && ctx.Err() != nil && parent.Err() == nil
				mu.Lock()
				done++
				progress()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if done < len(batches) {
		done = len(batches) // the rest will not be sent: the bar ends
		progress()
	}
	return results
}

// batch calls the model for one batch, retrying transport errors with
// backoff and an unreadable answer once, and translates the answer.
func (s *LLMStage) batch(ctx context.Context, p *prompts, b *Cluster, capN, plainCap int, u *Usage) ([]*Decision, error) {
	req, bm, err := p.build(b, s.Now)
	if err != nil {
		return nil, err
	}
	retries := s.Config.Consolidate.MaxRetries
	parseRetries := 1
	var lastErr error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, s.timeout())
		resp, err := s.Completer.Complete(actx, req)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		u.Calls++
		if err == nil {
			s.count(u, req, resp)
			var ds []*Decision
			ds, err = translate(resp.Text, bm, capN, plainCap)
			if err == nil {
				return ds, nil
			}
			if errors.Is(err, errUnreadable) && parseRetries > 0 {
				parseRetries--
				u.Failed++
				s.tracef("LLM answer unreadable (%v); asking again", err)
				continue
			}
			u.Failed++
			return nil, err
		}
		u.Failed++
		lastErr = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !(timedOut || retryable(err)) || attempt >= retries {
			return nil, fmt.Errorf("LLM call failed after %d attempt(s): %w", attempt+1, lastErr)
		}
		d := s.backoff(attempt)
		s.tracef("LLM call failed (%v); retrying in %v", err, d.Round(time.Millisecond))
		if err := s.doSleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

func (s *LLMStage) timeout() time.Duration {
	if t := s.Config.LLM.Timeout.Duration; t > 0 {
		return t
	}
	return 2 * time.Minute
}

func (s *LLMStage) count(u *Usage, req Request, r Response) {
	if r.PromptTokens == 0 && r.CompletionTokens == 0 {
		u.Estimated = true
		u.PromptTokens += (len(req.System) + len(req.User) + 3) / 4
		u.CompletionTokens += (len(r.Text) + 3) / 4
		return
	}
	u.PromptTokens += r.PromptTokens
	u.CompletionTokens += r.CompletionTokens
}

func (s *LLMStage) backoff(attempt int) time.Duration {
	base := s.RetryBase
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	d := base << attempt
	if d > 30*time.Second {
		d = 30 * time.Second
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func (s *LLMStage) doSleep(ctx context.Context, d time.Duration) error {
	if s.sleep != nil {
		return s.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func retryable(err error) bool {
	var re RetryableError
	if errors.As(err, &re) {
		return re.Retryable()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

var errUnreadable = errors.New("unreadable answer")

// rawOp is one operation as models write it: ids may come as numbers or
// strings, fields may be missing.
type rawOp struct {
	Op       string          `json:"op"`
	Target   json.RawMessage `json:"target"`
	Sources  json.RawMessage `json:"sources"`
	Text     string          `json:"text"`
	Category string          `json:"category"`
	Reason   string          `json:"reason"`
}

// extractJSON finds the JSON value in an answer: code fences and prose
// around it are tolerated.
func extractJSON(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			s = strings.TrimSpace(rest[:j])
		}
	}
	start := strings.IndexAny(s, "{[")
	if start < 0 {
		return s
	}
	end := strings.LastIndexAny(s, "}]")
	if end < start {
		return s[start:]
	}
	return s[start : end+1]
}

// maxAnswerBytes caps the answer parsed: a batch of at most 200
// candidates needs far less, and the cap keeps parsing linear and small.
const maxAnswerBytes = 1 << 20

func parseOps(text string) ([]rawOp, error) {
	if len(text) > maxAnswerBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d", errUnreadable, len(text), maxAnswerBytes)
	}
	js := extractJSON(text)
	var ops []rawOp
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &obj); err == nil {
		raw, ok := obj["operations"]
		if !ok {
			raw, ok = obj["ops"]
		}
		if !ok {
			return nil, fmt.Errorf("%w: no \"operations\" field", errUnreadable)
		}
		if err := json.Unmarshal(raw, &ops); err != nil {
			return nil, fmt.Errorf("%w: operations: %w", errUnreadable, err)
		}
		return ops, nil
	}
	if err := json.Unmarshal([]byte(js), &ops); err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	return ops, nil
}

func parseID(raw json.RawMessage) (int, bool, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, false, nil
	}
	s = strings.Trim(s, `"`)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "#"), "id")
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, fmt.Errorf("an id is not an integer")
	}
	return n, n != 0, nil
}

func parseIDs(raw json.RawMessage) ([]int, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		n, ok, err := parseID(raw)
		if err != nil || !ok {
			return nil, fmt.Errorf("sources must be a list of ids")
		}
		return []int{n}, nil
	}
	var out []int
	for _, r := range list {
		n, ok, err := parseID(r)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// translate parses an answer and maps its integer ids back. Structural
// faults reject the whole answer: an id not in the batch (invented), an
// unknown operation, a candidate used as a target, or more archiving than
// the run allows.
func translate(text string, bm *batchMap, capN, plainCap int) ([]*Decision, error) {
	ops, err := parseOps(text)
	if err != nil {
		return nil, err
	}
	// Every valid operation consumes a candidate or acts on an entry, each
	// at most once: more operations than items is not an answer.
	if maxOps := 2*(len(bm.entries)+len(bm.cands)) + 8; len(ops) > maxOps {
		return nil, fmt.Errorf("the answer has %d operations for %d items", len(ops), len(bm.entries)+len(bm.cands))
	}
	snap := map[string]string{}
	for _, e := range bm.entries {
		snap[e.ID] = e.Raw
	}
	var out []*Decision
	archives, plain := 0, 0
	for i, o := range ops {
		kind := OpKind(strings.ToLower(strings.TrimSpace(o.Op)))
		switch kind {
		case OpAdd, OpMerge, OpSupersede, OpArchive, OpCompress, OpConflict, OpNoop:
		default:
			// The model's own value is not quoted: what memctl stores and
			// commits never carries the model's free text.
			return nil, fmt.Errorf("operation %d: unknown op (not add, merge, supersede, archive, compress, conflict or noop)", i+1)
		}
		d := &Decision{Op: kind, Text: mdmem.OneLine(o.Text), Category: strings.TrimSpace(o.Category), Reason: mdmem.OneLine(o.Reason), Snap: snap}
		t, has, err := parseID(o.Target)
		if err != nil {
			return nil, fmt.Errorf("operation %d: %w", i+1, err)
		}
		if has {
			e := bm.entries[t]
			if e == nil {
				if bm.cands[t] != nil {
					return nil, fmt.Errorf("operation %d: target %d is a candidate, not an entry", i+1, t)
				}
				return nil, fmt.Errorf("operation %d: target %d does not exist (invented id)", i+1, t)
			}
			d.Target = e.ID
		}
		srcs, err := parseIDs(o.Sources)
		if err != nil {
			return nil, fmt.Errorf("operation %d: %w", i+1, err)
		}
		seen := map[int]bool{}
		for _, n := range srcs {
			if seen[n] {
				continue
			}
			seen[n] = true
			switch {
			case bm.cands[n] != nil:
				d.Candidates = append(d.Candidates, bm.cands[n].ID)
			case bm.entries[n] != nil:
				if bm.entries[n].ID == d.Target {
					continue
				}
				if kind != OpCompress {
					return nil, fmt.Errorf("operation %d: %s cannot take entry %d as a source", i+1, kind, n)
				}
				d.Entries = append(d.Entries, bm.entries[n].ID)
			default:
				return nil, fmt.Errorf("operation %d: source %d does not exist (invented id)", i+1, n)
			}
		}
		archives += d.archives()
		if kind == OpArchive {
			plain++
		}
		out = append(out, d)
	}
	if archives > capN || plain > plainCap {
		return nil, fmt.Errorf("the answer archives %d entries (%d without replacement), over the run's limit of %d (%d)", archives, plain, capN, plainCap)
	}
	return out, nil
}
