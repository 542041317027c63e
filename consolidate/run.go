package consolidate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// Failpoints, named by MEMCTL_FAILPOINT: the process exits with code 99
// at that point, so tests can crash a run at every step and check that the
// next run converges. The write itself has mdmem's transaction failpoints
// (mdmem.FailTxn*); these are the old names of three of them.
const (
	FailAfterLLM     = "after-llm"    // decisions made, nothing written
	FailAfterWrite   = "after-write"  // committed, files replaced, index not updated (mdmem.FailTxnFiles)
	FailAfterCommit  = "after-commit" // committed, files and index updated, queue files still there (mdmem.FailTxnIndexed)
	FailMidDequeue   = "mid-dequeue"  // half the queue files removed (mdmem.FailTxnMidDequeue)
	FailpointEnv     = mdmem.FailpointEnv
	FailpointExit    = mdmem.FailpointExit
	maxPlanAttempts  = 3
	reportOpsInBody  = 2000
	defaultModelNote = "none (rules only)"
)

// Options of a run.
type Options struct {
	DryRun bool
	NoLLM  bool
	// Full reads every file of the memory, as a run without the match
	// cache does (MatchCacheDir; docs/CONSOLIDATE.md, What a run reads).
	Full bool
	// Completer overrides the configured endpoint (tests, embedding).
	Completer Completer
	// Embedder overrides the configured embedding endpoint
	// (llm.embedding_model); EmbeddingModel names it (the cache key).
	Embedder       Embedder
	EmbeddingModel string
	Getenv         func(string) string
	Now            func() time.Time
	Log            func(format string, args ...any) // diagnostics a person should see
	Trace          func(format string, args ...any) // the model's retries and failed batches (summed up in the report), a plan read again on every file
	Progress       func(done, total int)            // LLM batches
	RetryBase      time.Duration
	// Measure, Retrieval and VectorCache are what the run needs of
	// inject (cmd gives inject.CoreMeasure, inject.Retrieval and
	// inject.VectorCache): see Input.Measure, Input.Retrieval and
	// Embeddings for what is done without them (nil).
	Measure     Measure
	Retrieval   Retrieval
	VectorCache VectorCache
	Secrets     SecretDetector
	Exit        func(code int) // failpoints; default os.Exit
}

// Summary counts what a run did.
type Summary struct {
	Added      int `json:"added"`
	Merged     int `json:"merged"`
	Superseded int `json:"superseded"`
	Archived   int `json:"archived"`
	Compressed int `json:"compressed"`
	Conflicts  int `json:"conflicts"`
	Pending    int `json:"pending"`
	Demoted    int `json:"demoted"`
	Held       int `json:"held"`
	// Quarantined: candidates moved to .memctl/queue/held/ this run.
	Quarantined int `json:"quarantined"`
}

// Report is the outcome of a run (printed as text or --json).
type Report struct {
	Mode        string `json:"mode"` // "llm" or "rules"
	Model       string `json:"model,omitempty"`
	DryRun      bool   `json:"dry_run"`
	NothingToDo bool   `json:"nothing_to_do"`
	Commit      string `json:"commit,omitempty"`
	HandEdit    string `json:"hand_edit_commit,omitempty"`
	Recovered   string `json:"recovered,omitempty"`
	// LLMStatus says whether the model could be used: "" (not needed),
	// "ok", "partial" (some batches without a usable answer) or
	// "unavailable" (none answered usably); LLMError is the last reason.
	LLMStatus string `json:"llm_status,omitempty"`
	LLMError  string `json:"llm_error,omitempty"`
	// EmbeddingModel is the model that embedded the texts for the
	// neighbours ("" = words only); EmbeddingError why it could not
	// (then the run used words only).
	EmbeddingModel string   `json:"embedding_model,omitempty"`
	EmbeddingError string   `json:"embedding_error,omitempty"`
	Queued         int      `json:"queued"`
	Reconciled     []string `json:"reconciled_candidate_ids"` // consumed by an earlier run, dequeued now
	Unreadable     []string `json:"unreadable_queue_files"`
	// Quarantined lists the candidates moved to .memctl/queue/held/ by
	// this run; HeldFiles every candidate waiting there for a person
	// (edit it and move it back to .memctl/queue/, or delete it).
	Quarantined []Hold     `json:"quarantined"`
	HeldFiles   []Hold     `json:"held_files"`
	Usage       *UsageInfo `json:"usage_log,omitempty"`
	Summary     Summary    `json:"summary"`
	LLM         Usage      `json:"llm"`
	Plan        *Plan      `json:"plan,omitempty"`
	Diff        string     `json:"diff,omitempty"`
	Elapsed     float64    `json:"elapsed_seconds"`
	// FilesRead is how many memory files the run parsed (MEMORY.md
	// included) of FilesTotal: a run with candidates reads through the
	// match cache only those it writes (and those without a fresh
	// segment); the entries its lookups return are read alone.
	FilesRead  int     `json:"files_read,omitempty"`
	FilesTotal int     `json:"files_total,omitempty"`
	LLMSeconds float64 `json:"llm_seconds"`

	// HandEdits says what committing a person's edits did (stray files
	// ignored, deleted ids restored, duplicate ids renumbered).
	HandEdits []*mdmem.HandEdit `json:"hand_edits"`
}

// addHandEdit records what CommitHandEdits did, if anything.
func (r *Report) addHandEdit(he *mdmem.HandEdit) {
	if he.Empty() {
		return
	}
	if he.Commit != "" {
		r.HandEdit = he.Commit
	}
	r.HandEdits = append(r.HandEdits, he)
}

// LLMEndpoint resolves the endpoint from the configuration and the
// environment (OPENAI_BASE_URL, the key variable, then OPENAI_API_KEY,
// MEMCTL_MODEL). ok is false without a model: then consolidate runs rules
// only.
func LLMEndpoint(cfg *mdmem.Config, getenv func(string) string) (baseURL, key, model string, ok bool) {
	baseURL, model = cfg.LLM.BaseURL, cfg.LLM.Model
	if v := getenv("OPENAI_BASE_URL"); v != "" {
		baseURL = v
	}
	if cfg.LLM.APIKeyEnv != "" {
		key = getenv(cfg.LLM.APIKeyEnv)
	}
	if key == "" {
		key = getenv("OPENAI_API_KEY")
	}
	if v := getenv("MEMCTL_MODEL"); v != "" {
		model = v
	}
	return baseURL, key, model, model != ""
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Exit == nil {
		o.Exit = os.Exit
	}
	if o.Secrets == nil {
		o.Secrets = Secrets{}
	}
}

func (o *Options) failpoint(name string) {
	if o.Getenv(FailpointEnv) == name {
		o.Exit(FailpointExit)
	}
}

// Run consolidates the queue of store s into its memory: one lock, hand
// edits committed first, one commit, exactly once. The lock is not held
// while the model works: the run plans again under the lock on what is
// there then. See docs/CONSOLIDATE.md.
func Run(ctx context.Context, s *mdmem.Store, o Options) (*Report, error) {
	o.defaults()
	s.Getenv, s.Exit = o.Getenv, o.Exit
	start := time.Now()
	r := &runner{s: s, o: &o, rep: &Report{DryRun: o.DryRun, Mode: "rules"}}
	rep := r.rep
	defer func() { rep.Elapsed = time.Since(start).Seconds() }()
	defer r.release()
	defer r.closeBase()
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.recordHeld()
	done, err := r.prepare(ctx)
	if err != nil {
		return nil, err
	}
	if done {
		return rep, nil
	}
	reload, err := r.llmStage(ctx)
	if err != nil {
		return nil, err
	}
	o.failpoint(FailAfterLLM)
	err = r.planAndCommit(ctx, reload)
	if r.in != nil && r.in.Mem != nil {
		rep.FilesRead, rep.FilesTotal = 1+len(r.in.Mem.Topics), 1+len(r.in.Mem.Topics)
		if r.base != nil {
			rep.FilesTotal = 1 + len(r.base.slugs)
		}
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// runner is one consolidation run: the store, the options, the report it
// fills, the lock it holds and the input it plans on, shared by the steps
// of Run.
type runner struct {
	s            *mdmem.Store
	o            *Options
	rep          *Report
	unlock       func() error
	in           *Input
	usage        map[string]Use
	prevAttempts map[string]attemptRec
	// base is the match cache when the run reads the memory in part;
	// stale the topic files it parsed for want of a fresh segment.
	base       *matchBase
	staleSlugs []string
}

// closeBase releases the match cache's mapped segments.
func (r *runner) closeBase() {
	if r.base != nil {
		r.base.close()
		r.base = nil
	}
}

// release lets go of the memory lock if the run holds it.
func (r *runner) release() {
	if r.unlock != nil {
		_ = r.unlock()
		r.unlock = nil
	}
}

// lock takes the memory lock, finishes or undoes an interrupted write
// and commits a person's uncommitted edits. A dry run takes no lock.
func (r *runner) lock(ctx context.Context) error {
	if r.o.DryRun {
		return nil
	}
	u, err := r.s.Lock(ctx)
	if err != nil {
		return err
	}
	r.unlock = u
	for _, rec := range r.s.Recovered {
		r.o.Log("%s", rec)
		if r.rep.Recovered != "" {
			r.rep.Recovered += "; "
		}
		r.rep.Recovered += rec
	}
	r.s.Recovered = nil
	he, err := r.s.CommitHandEdits(ctx)
	if err != nil {
		return fmt.Errorf("commit hand edits: %w", err)
	}
	r.rep.addHandEdit(he)
	return nil
}

// recordHeld lists in the report every candidate waiting in the held
// directory for a person, whatever the run did.
func (r *runner) recordHeld() {
	hf, err := HeldFiles(r.s.Dir)
	if err != nil {
		r.o.Log("%s: %v", HeldDir, err)
	}
	r.rep.HeldFiles = hf
}

// prepare reads the queue and the memory and builds the planner's input
// (usage counts loaded on demand, attempts of earlier runs). done is true
// when there is nothing to do: an empty queue and a core within its limits.
func (r *runner) prepare(ctx context.Context) (done bool, err error) {
	todo, err := readTodo(ctx, r.s, r.rep, r.o)
	if err != nil {
		return false, err
	}
	r.rep.Queued = len(todo)
	if len(todo) == 0 && r.idleNeedsCoreOnly() && !r.o.Full {
		// An idle run (cron, most of the time) reads MEMORY.md alone: the
		// core's size is all it checks. Topic files are not read.
		main, err := mdmem.LoadMain(ctx, r.s.Dir)
		if err != nil {
			return false, err
		}
		if !CoreLimits(r.s.Config).over(MeasureCore(r.o.Measure, r.s.Config, main.Main, r.o.Now())) {
			r.rep.NothingToDo = true
			return true, nil
		}
	}
	mem, err := r.load(ctx, len(todo) > 0)
	if err != nil {
		return false, err
	}
	if len(todo) == 0 && r.o.Full {
		// The whole-memory checks of a run that reads every file, and
		// the match cache for the next runs with candidates.
		if err := mem.CheckUniqueIDs(); err != nil {
			return false, err
		}
		r.saveSegments(ctx, mem)
	}
	if len(todo) == 0 && !CoreLimits(r.s.Config).over(MeasureCore(r.o.Measure, r.s.Config, mem.Main, r.o.Now())) {
		r.rep.NothingToDo = true
		refreshVectors(ctx, r.s, mem, r.o, r.rep)
		return true, nil
	}
	if r.in, err = input(r.s, mem, todo, r.o); err != nil {
		return false, err
	}
	r.in.base = r.base
	r.saveSegments(ctx, mem)
	r.in.LoadUsage = r.loadUsage
	r.in.Attempts, r.prevAttempts = readAttempts(r.s.Dir, todo, r.o.Log)
	return false, nil
}

// load reads the memory: in part through the match cache for a run with
// candidates and no embedding model (MEMORY.md, and the topic files
// without a fresh segment; the planner parses the others it needs), else
// every file.
func (r *runner) load(ctx context.Context, cands bool) (*mdmem.Memory, error) {
	if cands && !r.o.Full && r.noEmbeddings() {
		st, err := r.s.ReadState()
		if err != nil {
			return nil, err
		}
		if !st.RandomIDs() {
			mb, stale, ok, err := openMatchBase(ctx, r.s.Dir)
			if err != nil {
				return nil, err
			}
			if ok {
				r.base, r.staleSlugs = mb, stale
				return mb.mem, nil
			}
		}
	}
	return r.s.Load(ctx)
}

// noEmbeddings reports whether the run ranks neighbours without an
// embedding model: embeddings are of every live entry, so a run with one
// reads every file.
func (r *runner) noEmbeddings() bool {
	emb, _ := embedder(r.s, r.o)
	return emb == nil
}

// saveSegments writes the match cache's segments of the topic files the
// run parsed whole without a fresh one (all of them after a run that
// read every file), once their ids are known to be unique. A failure
// costs the next run time only: it is logged.
func (r *runner) saveSegments(ctx context.Context, mem *mdmem.Memory) {
	if r.o.DryRun {
		return
	}
	slugs := r.staleSlugs
	if r.base == nil {
		slugs = nil
		for _, slug := range mem.TopicSlugs() {
			if s := openSegment(r.s.Dir, slug); s != nil {
				s.close()
				continue
			}
			slugs = append(slugs, slug)
		}
		removeStaleSegments(r.s.Dir, mem.TopicSlugs())
	} else {
		removeStaleSegments(r.s.Dir, r.base.slugs)
	}
	for _, slug := range slugs {
		if d := mem.Topics[slug]; d != nil {
			if err := writeSegment(ctx, r.s.Dir, d, time.Now()); err != nil {
				r.o.Log("match cache: %v", err)
			}
		}
	}
}

// idleNeedsCoreOnly reports whether a run with an empty queue has nothing
// to do beyond checking the core's size: no embedding cache to refresh.
func (r *runner) idleNeedsCoreOnly() bool {
	if r.o.NoLLM || r.o.DryRun {
		return true
	}
	emb, _ := embedder(r.s, r.o)
	return emb == nil
}

// loadUsage reads the inject usage log the first time the planner asks
// for it and records what it found in the report.
func (r *runner) loadUsage() map[string]Use {
	if r.rep.Usage == nil {
		var info UsageInfo
		r.usage, info = ReadUsage(r.s.Dir, r.in.Now)
		r.rep.Usage = &info
		if info.Error != "" {
			r.o.Log("inject log: %s; usage counts may be incomplete", info.Error)
		}
	}
	return r.usage
}

// finishQueue runs once the plan is committed (or needs no commit):
// quarantined candidates leave the queue, attempts are recorded.
func (r *runner) finishQueue(ctx context.Context, plan *Plan) error {
	if err := quarantine(ctx, r.s.Dir, plan.Quarantine); err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	r.rep.Quarantined = plan.Quarantine
	for _, h := range plan.Quarantine {
		r.o.Log("candidate %s moved to %s/ after %d failed runs (%s); it never enters the memory: edit it and move it back to %s/, or delete it", h.Candidate, HeldDir, h.Attempts, h.Reason, mdmem.QueueDir)
	}
	return writeAttempts(ctx, r.s.Dir, plan, r.in.Cands, r.prevAttempts, r.in.Now)
}

// completer picks the model for the run: the one in the options, else the
// configured endpoint; ok is false for a rules-only run.
func (r *runner) completer() (comp Completer, ok bool) {
	if r.o.NoLLM {
		return nil, false
	}
	if r.o.Completer != nil {
		r.rep.Model = "custom"
		return r.o.Completer, true
	}
	if base, key, model, ok := LLMEndpoint(r.s.Config, r.o.Getenv); ok {
		r.rep.Model = model
		return NewOpenAI(base, key, model), true
	}
	return nil, false
}

// llmStage asks the model about the candidates the rules cannot settle.
// The lock is released meanwhile: a hanging model must not stop imports,
// adds or the next cron run, and everything is planned again under the
// lock afterwards (reload is true then).
func (r *runner) llmStage(ctx context.Context) (reload bool, err error) {
	comp, ok := r.completer()
	if !ok {
		return false, nil
	}
	r.rep.Mode = "llm"
	embed(ctx, r.s, r.in, r.o, r.rep)
	clusters, err := triage(r.in)
	if errors.Is(err, errMatchCache) {
		// The cache did not serve: triage on every file.
		r.logMatchCache(err)
		r.in.base = nil
		r.closeBase()
		if r.in.Mem, err = r.s.Load(ctx); err != nil {
			return false, err
		}
		clusters, err = triage(r.in)
	}
	if err != nil {
		return false, err
	}
	if len(clusters) == 0 {
		return false, nil
	}
	r.release()
	t0 := time.Now()
	st := &LLMStage{Completer: comp, MemDir: r.s.Dir, Config: r.s.Config, Now: r.in.Now, RetryBase: r.o.RetryBase, Progress: r.o.Progress, Log: r.o.Log, Trace: r.o.Trace}
	ds, sent, notes, u, err := st.Run(ctx, r.in, clusters)
	r.rep.LLM = u
	r.rep.LLMSeconds = time.Since(t0).Seconds()
	if err != nil {
		return false, err
	}
	r.rep.LLMStatus, r.rep.LLMError = llmStatus(u, notes)
	r.in.Decisions, r.in.LLMCands, r.in.LLMNotes = ds, sent, notes
	if err := r.lock(ctx); err != nil {
		return false, err
	}
	return !r.o.DryRun, nil
}

// llmStatus says whether the model could be used ("ok", "partial" or
// "unavailable") and, when a batch failed, one of the reasons: that of
// the last candidate id, so the same failures give the same report.
func llmStatus(u Usage, notes map[string]string) (status, lastErr string) {
	if u.FailedBatches == 0 {
		return "ok", ""
	}
	status = "partial"
	if u.FailedBatches >= u.Batches+boolInt(u.DeadlineHit && u.Batches == 0) {
		status = "unavailable"
	}
	last := ""
	for id, n := range notes {
		if id >= last {
			last, lastErr = id, n
		}
	}
	return status, lastErr
}

// planAndCommit plans on the input and commits the plan, planning again
// on the new content (up to maxPlanAttempts times) when the memory
// changed under the run. reload says the input must be read again first.
func (r *runner) planAndCommit(ctx context.Context, reload bool) error {
	// After the model's answer the run may read the memory in part again
	// (through a fresh match cache); after a refusal it reads every file.
	partial := r.base != nil
	for attempt := 1; ; attempt++ {
		if reload {
			if err := r.reload(ctx, partial); err != nil {
				return err
			}
		}
		partial = false
		plan, err := Compute(r.in)
		if errors.Is(err, errMatchCache) {
			// The cache did not describe a file: plan on every file.
			r.logMatchCache(err)
			reload = true
			continue
		}
		if err != nil {
			return err
		}
		r.rep.Plan = plan
		r.rep.Summary = summarize(plan)
		for _, w := range plan.Warnings {
			r.o.Log("%s", w)
		}
		if r.o.DryRun {
			r.rep.Diff = UnifiedDiff(func(p string) []byte { return docSrc(r.in.Mem, p) }, plan.Files)
			return nil
		}
		if len(plan.Files) == 0 && len(plan.Consumed) == 0 {
			r.rep.NothingToDo = len(plan.Held) == 0 && len(plan.Quarantine) == 0
			return r.finishQueue(ctx, plan)
		}
		r.rep.Commit, err = commitPlan(ctx, r.s, r.in, plan, commitMessage(r.rep, plan, r.s.Config))
		if errors.Is(err, mdmem.ErrStale) {
			if err := r.stale(ctx, attempt, err); err != nil {
				return err
			}
			reload = true
			continue
		}
		if err != nil {
			return err
		}
		return r.finishQueue(ctx, plan)
	}
}

// logMatchCache says why the run reads every file after all: a warning
// when the cache did not describe a file, a trace when the neighbours'
// ranking needs every file (errRankAll: nothing is wrong).
func (r *runner) logMatchCache(err error) {
	switch {
	case !errors.Is(err, errRankAll):
		r.o.Log("%v; reading every file", err)
	case r.o.Trace != nil:
		r.o.Trace("%v; reading every file", err)
	}
}

// reload reads the queue, the memory and the state again. Time passed
// without the lock: another run may have applied some candidates, a
// person may have edited. The run plans on what is there now: in part
// through the match cache, opened again, when partial is set, else every
// file.
func (r *runner) reload(ctx context.Context, partial bool) error {
	var err error
	if r.in.Cands, err = stillQueued(ctx, r.s, r.in.Cands); err != nil {
		return err
	}
	r.in.base = nil
	r.closeBase()
	if partial {
		r.in.Mem, err = r.load(ctx, len(r.in.Cands) > 0)
		r.in.base = r.base
	} else {
		r.in.Mem, err = r.s.Load(ctx)
	}
	if err != nil {
		return err
	}
	if r.in.State, err = r.s.ReadState(); err != nil {
		return err
	}
	return nil
}

// stale handles a commit refused because the memory changed: it gives up
// after maxPlanAttempts, else commits the person's edits so the next
// attempt plans on them.
func (r *runner) stale(ctx context.Context, attempt int, staleErr error) error {
	if attempt >= maxPlanAttempts {
		return fmt.Errorf("the memory keeps changing during consolidation (%w); nothing written, retry later", staleErr)
	}
	r.o.Log("%v; planning again on the new content", staleErr)
	he, err := r.s.CommitHandEdits(ctx)
	if err != nil {
		return fmt.Errorf("commit hand edits: %w", err)
	}
	r.rep.addHandEdit(he)
	return nil
}

// embedder is the configured embedding endpoint (llm.embedding_model,
// MEMCTL_EMBEDDING_MODEL) or the one given in o, and its model; nil when
// there is none.
func embedder(s *mdmem.Store, o *Options) (Embedder, string) {
	if o.Embedder != nil {
		return o.Embedder, o.EmbeddingModel
	}
	base, key, model := EmbeddingEndpoint(s.Config, o.Getenv)
	if model == "" {
		return nil, ""
	}
	return NewOpenAIEmbedder(base, key, model), model
}

// liveTexts are the texts of the live entries with an id: what the
// vector cache holds for inject and the neighbours.
func liveTexts(mem *mdmem.Memory) []string {
	var texts []string
	for _, e := range mem.Entries() {
		if e.ID != "" && live(e.Place) {
			texts = append(texts, e.Content)
		}
	}
	return texts
}

// embedTexts embeds texts through the cache (saved unless a dry run)
// within one llm.timeout. A failure costs only the dense ranking: it is
// reported and logged.
func embedTexts(ctx context.Context, s *mdmem.Store, emb Embedder, model string, texts []string, o *Options, rep *Report) map[string][]float32 {
	t := s.Config.LLM.Timeout.Duration
	if t <= 0 {
		t = 2 * time.Minute
	}
	ectx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	v, err := Embeddings(ectx, o.VectorCache, s.Dir, model, emb, texts, !o.DryRun)
	rep.EmbeddingModel = model
	if err != nil {
		rep.EmbeddingError = err.Error()
		o.Log("%v; ranking by words only", err)
	}
	return v
}

// embed fills in.Vectors when an embedding model is configured or
// given: every live entry and candidate, from the cache or the endpoint.
func embed(ctx context.Context, s *mdmem.Store, in *Input, o *Options, rep *Report) {
	emb, model := embedder(s, o)
	if emb == nil {
		return
	}
	texts := liveTexts(in.Mem)
	for _, c := range in.Cands {
		texts = append(texts, mdmem.OneLine(c.Content))
	}
	in.Vectors = embedTexts(ctx, s, emb, model, texts, o, rep)
}

// refreshVectors keeps the vector cache current for inject when the
// queue is empty: live entries not cached yet (imported, edited by hand
// or rewritten by the last run) are embedded; nothing is sent when all
// are cached.
func refreshVectors(ctx context.Context, s *mdmem.Store, mem *mdmem.Memory, o *Options, rep *Report) {
	if o.NoLLM || o.DryRun {
		return
	}
	if emb, model := embedder(s, o); emb != nil {
		embedTexts(ctx, s, emb, model, liveTexts(mem), o, rep)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readTodo reads the queue, moves unreadable queue files to the held
// directory, and dequeues candidates the ledger records as consumed by an
// earlier run that stopped before dequeueing them.
func readTodo(ctx context.Context, s *mdmem.Store, rep *Report, o *Options) ([]*mdmem.Candidate, error) {
	cands, bad, err := mdmem.ReadQueue(ctx, s.Dir)
	if err != nil {
		return nil, err
	}
	// A queue file that cannot be read never will be (add writes whole
	// files by rename): it goes to the held directory for a person.
	var unreadable []Hold
	for _, b := range bad {
		rep.Unreadable = append(rep.Unreadable, b.File+": "+b.Err.Error())
		id := strings.TrimSuffix(path.Base(b.File), ".json")
		if o.DryRun || strings.HasPrefix(id, ".") {
			o.Log("queue file %s is unreadable: %v", b.File, b.Err)
			continue
		}
		unreadable = append(unreadable, Hold{Candidate: id, Reason: "unreadable queue file: " + b.Err.Error(), Kind: HoldInvalid})
		o.Log("queue file %s is unreadable (moved to %s): %v", b.File, HeldDir, b.Err)
	}
	if err := quarantine(ctx, s.Dir, unreadable); err != nil {
		return nil, err
	}
	done, err := ledgerConsumed(s.Dir, cands)
	if err != nil {
		return nil, err
	}
	todo := cands[:0:0]
	for _, c := range cands {
		if done[c.ID] {
			rep.Reconciled = append(rep.Reconciled, c.ID)
		} else {
			todo = append(todo, c)
		}
	}
	if len(rep.Reconciled) > 0 && !o.DryRun {
		if err := mdmem.Dequeue(ctx, s.Dir, rep.Reconciled); err != nil {
			return nil, err
		}
		o.Log("dequeued %d candidates an earlier run had already applied", len(rep.Reconciled))
	}
	return dropForgotten(ctx, s, todo, o)
}

// dropForgotten takes out of the queue the candidates that repeat an entry
// memctl forget deleted (unless added with --allow-forgotten): forget's
// tombstones keep consolidation from bringing the text back.
func dropForgotten(ctx context.Context, s *mdmem.Store, todo []*mdmem.Candidate, o *Options) ([]*mdmem.Candidate, error) {
	if len(todo) == 0 {
		return todo, nil
	}
	errs, err := s.CheckForgotten(todo)
	if err != nil {
		return nil, err
	}
	kept := todo[:0:0]
	var drop []string
	for i, c := range todo {
		var fe *mdmem.ForgottenError
		if errors.As(errs[i], &fe) {
			o.Log("candidate %s repeats %s, forgotten on %s: dropped (add it with --allow-forgotten to keep it)", c.ID, fe.Tombstone.ID, fe.Tombstone.Date)
			drop = append(drop, c.ID)
			continue
		}
		kept = append(kept, c)
	}
	if len(drop) > 0 && !o.DryRun {
		if err := mdmem.Dequeue(ctx, s.Dir, drop); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// ledgerConsumed returns which of cands the ledger records as consumed.
func ledgerConsumed(dir string, cands []*mdmem.Candidate) (map[string]bool, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return mdmem.ReadLedger(dir, ids)
}

// stillQueued keeps the candidates that are still queued and not recorded
// as consumed (another run may have applied some while the model worked).
func stillQueued(ctx context.Context, s *mdmem.Store, cands []*mdmem.Candidate) ([]*mdmem.Candidate, error) {
	done, err := ledgerConsumed(s.Dir, cands)
	if err != nil {
		return nil, err
	}
	out := cands[:0:0]
	for _, c := range cands {
		if done[c.ID] {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.Dir, filepath.FromSlash(mdmem.QueueDir), c.ID+".json")); err != nil {
			continue
		}
		out = append(out, c)
	}
	return out, ctx.Err()
}

// commitPlan writes a plan as one mdmem transaction: its files, planned on
// the content the plan read, and its consumed candidates.
func commitPlan(ctx context.Context, s *mdmem.Store, in *Input, plan *Plan, msg mdmem.CommitMessage) (string, error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Abort()
	paths := make([]string, 0, len(plan.Files))
	for p := range plan.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		var basedOn []byte
		if d := in.Mem.Doc(p); d != nil {
			basedOn = d.Src
			if basedOn == nil && fileExists(filepath.Join(s.Dir, filepath.FromSlash(p))) {
				basedOn = []byte{}
			}
		} else if basedOn, err = os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(p))); errors.Is(err, fs.ErrNotExist) {
			basedOn = nil
		} else if err != nil {
			return "", err
		}
		if err := tx.Put(ctx, p, basedOn, plan.Files[p]); err != nil {
			return "", err
		}
	}
	outcome := map[string]string{}
	for _, op := range plan.Ops {
		for _, c := range op.Candidates {
			outcome[c] = string(op.Kind) + " " + op.Entry
		}
	}
	for _, c := range plan.Consumed {
		tx.Consume(c, outcome[c])
	}
	commit, err := tx.Commit(ctx, msg)
	if err == nil {
		s.CarryChecks(ctx, tx.Base(), commit, plan.Files, in.Now)
	}
	return commit, err
}

func fileExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

func input(s *mdmem.Store, mem *mdmem.Memory, cands []*mdmem.Candidate, o *Options) (*Input, error) {
	if err := mem.CheckUniqueIDs(); err != nil {
		return nil, err
	}
	st, err := s.ReadState()
	if err != nil {
		return nil, err
	}
	return &Input{Mem: mem, Cands: cands, Config: s.Config, State: st, Now: o.Now(), Secrets: o.Secrets,
		Measure: o.Measure, Retrieval: o.Retrieval}, nil
}

func docSrc(m *mdmem.Memory, p string) []byte {
	if d := m.Doc(p); d != nil {
		return d.Src
	}
	if b, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(p))); err == nil {
		return b
	}
	return nil
}

func summarize(p *Plan) Summary {
	var s Summary
	for _, o := range p.Ops {
		switch o.Kind {
		case OpAdd:
			s.Added++
		case OpMerge, OpNoop:
			s.Merged++
		case OpSupersede:
			s.Superseded++
		case OpArchive:
			s.Archived++
		case OpCompress:
			s.Compressed++
		case OpConflict:
			s.Conflicts++
		case OpPending:
			s.Pending++
		case OpDemote:
			s.Demoted++
		case OpHold:
			s.Held++
		case OpQuarantine:
			s.Quarantined++
		}
	}
	return s
}

// String renders the summary on one line.
func (s Summary) String() string {
	parts := []string{}
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Added, "added")
	add(s.Merged, "merged")
	add(s.Superseded, "superseded")
	add(s.Archived, "archived")
	add(s.Compressed, "compressed")
	add(s.Conflicts, "conflicts")
	add(s.Pending, "pending")
	add(s.Demoted, "demoted")
	add(s.Held, "held in the queue")
	add(s.Quarantined, "quarantined in "+HeldDir+"/")
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// FormatOp renders one operation for the commit body and the terminal.
func FormatOp(o Op) string {
	var b strings.Builder
	b.WriteString(string(o.Kind))
	if o.Entry != "" {
		b.WriteString(" " + o.Entry)
	}
	if len(o.Targets) > 0 && !(len(o.Targets) == 1 && o.Targets[0] == o.Entry) {
		b.WriteString(" (" + strings.Join(o.Targets, ", ") + ")")
	}
	if len(o.Candidates) > 0 {
		b.WriteString(" <- " + strings.Join(o.Candidates, ", "))
	}
	if o.By == "llm" {
		b.WriteString(" [llm]")
	}
	if o.Reason != "" {
		b.WriteString(": " + o.Reason)
	}
	return mdmem.OneLine(b.String())
}

func commitMessage(rep *Report, p *Plan, cfg *mdmem.Config) mdmem.CommitMessage {
	sum := summarize(p)
	noun := "candidates"
	if len(p.Consumed) == 1 {
		noun = "candidate"
	}
	subject := fmt.Sprintf("consolidate: %d %s: %s", len(p.Consumed), noun, sum)
	if len(p.Consumed) == 0 {
		subject = "consolidate: " + sum.String()
	}
	var b strings.Builder
	b.WriteString("Operations:\n")
	n := 0
	for _, o := range p.Ops {
		if o.Kind == OpHold {
			continue
		}
		if n++; n > reportOpsInBody {
			fmt.Fprintf(&b, "  … and %d more\n", len(p.Ops)-reportOpsInBody)
			break
		}
		b.WriteString("  " + FormatOp(o) + "\n")
	}
	if len(p.Held) > 0 {
		fmt.Fprintf(&b, "\nLeft in the queue (%d):\n", len(p.Held))
		for i, h := range p.Held {
			if i >= 200 {
				fmt.Fprintf(&b, "  … and %d more\n", len(p.Held)-200)
				break
			}
			b.WriteString("  " + h.Candidate + ": " + mdmem.OneLine(h.Reason) + "\n")
		}
	}
	model := rep.Model
	if model == "" {
		model = defaultModelNote
	}
	est := ""
	if rep.LLM.Estimated {
		est = " (estimated, bytes/4)"
	}
	fmt.Fprintf(&b, "\nLLM: %s; %d calls, %d prompt + %d completion tokens%s\n", model, rep.LLM.Calls, rep.LLM.PromptTokens, rep.LLM.CompletionTokens, est)
	lim := CoreLimits(cfg)
	fmt.Fprintf(&b, "Core profile: %s (was %s; limits %d lines, %d bytes, %d tokens)\n", p.CoreAfter, p.CoreBefore, lim.Lines, lim.Bytes, lim.Tokens)
	return mdmem.CommitMessage{
		Subject:  subject,
		Body:     b.String(),
		Op:       "consolidate",
		Entries:  p.Entries,
		Consumed: p.Consumed,
		Extra: [][2]string{
			{"Memctl-Model", model},
			{"Memctl-LLM-Calls", fmt.Sprint(rep.LLM.Calls)},
			{"Memctl-Tokens", fmt.Sprintf("prompt=%d completion=%d", rep.LLM.PromptTokens, rep.LLM.CompletionTokens)},
		},
	}
}
