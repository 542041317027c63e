package mdmem

import "fmt"

// ConsolidateConfig governs memctl consolidate.
type ConsolidateConfig struct {
	MaxArchiveShare float64 `toml:"max_archive_share"` // most a run may archive, as a share of entries
	BatchSize       int     `toml:"batch_size"`        // candidates per LLM call
	NearDuplicate   float64 `toml:"near_duplicate"`    // shingle Jaccard at or above which two entries are duplicates
}

// LLMConfig names the OpenAI-compatible endpoint. OPENAI_BASE_URL,
// OPENAI_API_KEY and MEMCTL_MODEL override it. The key itself is never
// stored in the file: only the name of the variable holding it.
type LLMConfig struct {
	BaseURL   string   `toml:"base_url"`
	Model     string   `toml:"model"`
	APIKeyEnv string   `toml:"api_key_env"`
	Timeout   Duration `toml:"timeout"`
}

func defaultConsolidateConfig() ConsolidateConfig {
	return ConsolidateConfig{MaxArchiveShare: 0.2, BatchSize: 20, NearDuplicate: 0.8}
}

func defaultLLMConfig() LLMConfig {
	return LLMConfig{APIKeyEnv: "OPENAI_API_KEY"}
}

func (c ConsolidateConfig) validate() error {
	if c.MaxArchiveShare < 0 || c.MaxArchiveShare > 1 || c.BatchSize <= 0 || c.NearDuplicate <= 0 || c.NearDuplicate > 1 {
		return fmt.Errorf("consolidate: max_archive_share in [0,1], batch_size positive, near_duplicate in (0,1]")
	}
	return nil
}
