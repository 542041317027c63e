package mdmem

import "github.com/memctl/memctl/templates"

// Every path memctl keeps under .memctl/, relative to the memory directory
// and slash-separated. Committed: the config, the state, the ledger and
// the tombstones. Git-ignored: the queue, the cache (derived data that can
// be rebuilt or is private to this machine) and kept transcripts.
const (
	// MarkerDir is the directory whose presence marks a memory directory.
	MarkerDir = ".memctl"
	// ConfigPath is the configuration file (committed).
	ConfigPath = MarkerDir + "/config.toml"
	// StatePath is memctl's committed state: the id high-water marks that
	// keep ids from ever being reused.
	StatePath = MarkerDir + "/state.json"
	// LedgerDir holds the consumed-candidate ledger, one file per month
	// (committed).
	LedgerDir = MarkerDir + "/consumed"
	// TombstonesPath is the tombstone list of forgotten entries (committed).
	TombstonesPath = MarkerDir + "/tombstones.jsonl"
	// TemplatesDir holds a person's overrides of the embedded templates.
	TemplatesDir = templates.OverrideDir

	// QueueDir is the directory of queued candidates (git-ignored).
	QueueDir = MarkerDir + "/queue"
	// HeldQueueDir is where candidates that can never be entries (a
	// secret, invalid, an unreadable queue file) wait for a person: inside
	// the git-ignored queue directory, never committed, not read as queue.
	// Each <id>.json keeps the queue file byte for byte; <id>.reason says
	// why.
	HeldQueueDir = QueueDir + "/held"
	// TraceDir is where extract --keep-trace keeps raw transcripts (never
	// committed).
	TraceDir = MarkerDir + "/traces"

	// CacheDir is the directory of derived, git-ignored data (journals,
	// the inject index and log, consolidate's attempts).
	CacheDir = MarkerDir + "/cache"
	// TxnDir holds the journal of a write transaction (see txn.go).
	TxnDir = CacheDir + "/txn"
	// applyLockPath is the flock writers hold exclusively while a
	// transaction applies and readers hold shared while they read.
	applyLockPath = CacheDir + "/apply.lock"
	// InjectLogPath is inject's usage log (inject and used records).
	InjectLogPath = CacheDir + "/inject.log"
	// IndexCachePath is the manifest of inject's search index, whose
	// segment files are in IndexSegmentsDir.
	IndexCachePath   = CacheDir + "/index.bin"
	IndexSegmentsDir = CacheDir + "/segments"
	// IDMarksPath is a local copy of the id high-water marks that only
	// rises (never committed): it outlives a `git revert` or `git reset`
	// of state.json and ids a person wrote by hand and deleted since, so
	// no id is handed out twice on this machine.
	IDMarksPath = CacheDir + "/id-marks.json"
	// AttemptsPath counts consolidate's failed runs per candidate.
	AttemptsPath = CacheDir + "/consolidate-attempts.json"
	// ExtractCacheDir keeps extract's per-transcript read offsets.
	ExtractCacheDir = CacheDir + "/extract"
	// EmbeddingsCachePath keeps embedding vectors by content hash
	// (format: inject/dense.go).
	EmbeddingsCachePath = CacheDir + "/embeddings.bin"
)
