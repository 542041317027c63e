package mdmem

import (
	"time"
)

// ConsolidateConfig governs memctl consolidate.
type ConsolidateConfig struct {
	MaxArchiveShare float64 `toml:"max_archive_share"` // most a run may archive, as a share of entries
	BatchSize       int     `toml:"batch_size"`        // most candidates per LLM call
	BatchTokens     int     `toml:"batch_tokens"`      // most prompt tokens per LLM call (inject.tokenizer); related candidates that alone take more go alone; 0 = none
	NearDuplicate   float64 `toml:"near_duplicate"`    // share of tokens two texts align on at or above which they are one statement (consolidate compare)
	Related         float64 `toml:"related"`           // shingle Jaccard at or above which a pair is related: without an LLM, the candidate waits in Pending confirmation
	Neighbors       int     `toml:"neighbors"`         // live entries retrieved per candidate and shown to the LLM with it
	CoreMaxTokens   int     `toml:"core_max_tokens"`   // token limit of the core profile as inject prints it (inject.tokenizer); 0 = none
	MaxRetries      int     `toml:"max_retries"`       // LLM retries on 429, 5xx, timeouts and unreadable answers
	MaxAttempts     int     `toml:"max_attempts"`      // failed runs after which a candidate leaves the queue (Pending confirmation, or .memctl/queue/held/); 0 = never
	MaxPending      int     `toml:"max_pending"`       // most entries in Pending confirmation; further candidates for it stay queued
	ArchiveDays     int     `toml:"archive_days"`      // days an archived entry is kept before consolidate forgets it; 0 = forever
	// HoldAgentCore holds core candidates (preference, constraint,
	// decision) whose source is an agent's, a tool's or a model's
	// (AgentSource) in Pending confirmation for a person, in consolidate
	// and import. On by default: the core belongs to the person.
	HoldAgentCore bool `toml:"hold_agent_core"`
}

// LLMConfig names the OpenAI-compatible endpoint. OPENAI_BASE_URL,
// OPENAI_API_KEY and MEMCTL_MODEL override it. The key itself is never
// stored in the file: only the name of the variable holding it.
type LLMConfig struct {
	BaseURL   string   `toml:"base_url"`
	Model     string   `toml:"model"`
	APIKeyEnv string   `toml:"api_key_env"`
	Timeout   Duration `toml:"timeout"`
	// Deadline bounds all LLM calls of one consolidate run, retries
	// included; candidates not decided by then stay queued. 0 = none.
	Deadline Duration `toml:"deadline"`
	// Parallel is how many of a consolidate run's LLM batches are asked
	// at once; 1 asks them one after another. The decisions do not
	// depend on it.
	Parallel int `toml:"parallel"`
	// EmbeddingModel, when set, embeds entries and candidates through the
	// same endpoint (/v1/embeddings) for consolidation's neighbours;
	// MEMCTL_EMBEDDING_MODEL overrides it. "" = lexical retrieval only.
	EmbeddingModel string `toml:"embedding_model"`
	// EmbeddingTimeout bounds the one embedding call of memctl inject
	// (the task's vector); past it inject ranks by words. 0 = 2s.
	EmbeddingTimeout Duration `toml:"embedding_timeout"`
}

func defaultConsolidateConfig() ConsolidateConfig {
	return ConsolidateConfig{MaxArchiveShare: 0.2, BatchSize: 20, BatchTokens: 4000, NearDuplicate: 0.8, Related: 0.4, Neighbors: 4, CoreMaxTokens: 2900, MaxRetries: 3, MaxAttempts: 3, MaxPending: 50, HoldAgentCore: true}
}

func defaultLLMConfig() LLMConfig {
	return LLMConfig{APIKeyEnv: "OPENAI_API_KEY", Timeout: Duration{2 * time.Minute}, Deadline: Duration{10 * time.Minute}, Parallel: 4, EmbeddingTimeout: Duration{2 * time.Second}}
}

func (c ConsolidateConfig) validate() error {
	return firstBadKey("consolidate",
		keyCheck{"max_archive_share", c.MaxArchiveShare, c.MaxArchiveShare < 0 || c.MaxArchiveShare > 1, "in [0,1]"},
		keyCheck{"batch_size", c.BatchSize, c.BatchSize <= 0 || c.BatchSize > 200, "in 1..200"},
		keyCheck{"batch_tokens", c.BatchTokens, c.BatchTokens < 0 || c.BatchTokens > 1000000, "in 0..1000000"},
		keyCheck{"near_duplicate", c.NearDuplicate, c.NearDuplicate <= 0 || c.NearDuplicate > 1, "in (0,1]"},
		keyCheck{"related", c.Related, c.Related <= 0 || c.Related > c.NearDuplicate, "in (0, near_duplicate]"},
		keyCheck{"neighbors", c.Neighbors, c.Neighbors < 1 || c.Neighbors > 20, "in 1..20"},
		keyCheck{"core_max_tokens", c.CoreMaxTokens, c.CoreMaxTokens < 0, "0 or more"},
		keyCheck{"max_retries", c.MaxRetries, c.MaxRetries < 0 || c.MaxRetries > 10, "in 0..10"},
		keyCheck{"max_attempts", c.MaxAttempts, c.MaxAttempts < 0 || c.MaxAttempts > 100, "in 0..100"},
		keyCheck{"max_pending", c.MaxPending, c.MaxPending < 1 || c.MaxPending > 10000, "in 1..10000"},
		keyCheck{"archive_days", c.ArchiveDays, c.ArchiveDays < 0, "0 or more"},
	)
}

func (c LLMConfig) validate() error {
	// More calls at once mostly meet an endpoint's rate limit.
	return firstBadKey("llm",
		keyCheck{"parallel", c.Parallel, c.Parallel < 1 || c.Parallel > 32, "in 1..32"},
	)
}
