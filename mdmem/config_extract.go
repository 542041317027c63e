package mdmem

// ExtractConfig governs memctl extract (also run by the agent hooks); its
// flags override it for one run.
type ExtractConfig struct {
	MinConfidence float64 `toml:"min_confidence"` // candidates below this confidence are dropped
	KeepTrace     bool    `toml:"keep_trace"`     // keep each transcript in .memctl/traces/ (never committed)
	TraceDays     int     `toml:"trace_days"`     // kept traces not updated for this many days are removed; 0 = kept
	// TranscriptDirs are folders, besides the agents' own (~/.claude/projects,
	// ~/.codex/sessions, ~/.gemini/tmp), that the hooks may read a
	// transcript from; "~/" is the home directory.
	TranscriptDirs []string `toml:"transcript_dirs"`
	// MaxCalls and MaxTokens cap one run's LLM calls and tokens (prompt
	// and completion); a long transcript goes on from its kept chunk
	// digests in the next run. 0 = no cap.
	MaxCalls  int `toml:"max_calls"`
	MaxTokens int `toml:"max_tokens"`
}

func defaultExtractConfig() ExtractConfig {
	return ExtractConfig{MinConfidence: 0.7, TraceDays: 90, MaxCalls: 40, MaxTokens: 400000}
}

func (c ExtractConfig) validate() error {
	return firstBadKey("extract",
		keyCheck{"min_confidence", c.MinConfidence, c.MinConfidence < 0 || c.MinConfidence > 1, "in [0,1]"},
		keyCheck{"trace_days", c.TraceDays, c.TraceDays < 0, "0 or more"},
		keyCheck{"max_calls", c.MaxCalls, c.MaxCalls < 0, "0 or more"},
		keyCheck{"max_tokens", c.MaxTokens, c.MaxTokens < 0, "0 or more"},
	)
}
