package mdmem

import "fmt"

// InjectConfig governs memctl inject.
type InjectConfig struct {
	Budget       int     `toml:"budget"`         // whole memory budget in tokens
	L2Reserve    float64 `toml:"l2_reserve"`     // share of the budget the core leaves to retrieved (L2) entries
	CoreMaxLines int     `toml:"core_max_lines"` // physical limit of the core, lines
	CoreMaxBytes int     `toml:"core_max_bytes"` // physical limit of the core, bytes
	TopK         int     `toml:"top_k"`          // L2 entries retrieved; 0 = as many as fit
	Tokenizer    string  `toml:"tokenizer"`      // "o200k", "cl100k" or "chars:N"
	StaleDays    int     `toml:"stale_days"`     // entries older than this are marked old
	Log          bool    `toml:"log"`            // record injects in .memctl/cache for stats
	Ranker       string  `toml:"ranker"`         // L2 ranking: "bm25" or "bm25-plain"
	MaxChars     int     `toml:"max_chars"`      // whole block in characters; 0 = no limit

	// CoreShare was the share of the budget the core could use. The L2
	// reserve replaced it (the core now takes what L2 does not keep);
	// the key is still read so that config files written by earlier
	// versions of `memctl init` stay valid, and has no effect.
	CoreShare float64 `toml:"core_share"`
}

func defaultInjectConfig() InjectConfig {
	return InjectConfig{Budget: 4000, L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25 * 1024, TopK: 8, Tokenizer: "o200k", StaleDays: 90, Ranker: "bm25"}
}

func (c InjectConfig) validate() error {
	return firstBadKey("inject",
		keyCheck{"budget", c.Budget, c.Budget <= 0, "positive"},
		keyCheck{"l2_reserve", c.L2Reserve, c.L2Reserve < 0 || c.L2Reserve > 1, "in [0,1]"},
		keyCheck{"core_share", c.CoreShare, c.CoreShare < 0 || c.CoreShare > 1, "in [0,1]"},
		keyCheck{"core_max_lines", c.CoreMaxLines, c.CoreMaxLines < 0, "0 or more"},
		keyCheck{"core_max_bytes", c.CoreMaxBytes, c.CoreMaxBytes < 0, "0 or more"},
		keyCheck{"top_k", c.TopK, c.TopK < 0, "0 or more"},
		keyCheck{"stale_days", c.StaleDays, c.StaleDays < 0, "0 or more"},
		keyCheck{"max_chars", c.MaxChars, c.MaxChars < 0, "0 or more"},
		keyCheck{"ranker", fmt.Sprintf("%q", c.Ranker), c.Ranker != "bm25" && c.Ranker != "bm25-plain", "bm25 or bm25-plain"},
	)
}
