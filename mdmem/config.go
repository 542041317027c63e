package mdmem

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"
)

// ConfigPath is the memory-relative path of the configuration file.
const ConfigPath = ".memctl/config.toml"

// Config is .memctl/config.toml. Every field has a documented default (see
// templates/config.toml); a missing file means all defaults.
type Config struct {
	Add         AddConfig         `toml:"add"`
	Git         GitConfig         `toml:"git"`
	Inject      InjectConfig      `toml:"inject"`
	Consolidate ConsolidateConfig `toml:"consolidate"`
	LLM         LLMConfig         `toml:"llm"`
	Files       FilesConfig       `toml:"files"`
}

// FilesConfig governs the size of the memory files memctl writes.
type FilesConfig struct {
	// MaxBytes is the size up to which memctl fills a file: a topic file
	// continues in topics/<slug>-2.md, -3, …; MEMORY.md is refused beyond
	// it. At most half of what memctl reads (MaxFileBytes).
	MaxBytes int `toml:"max_bytes"`
}

// AddConfig governs the queue.
type AddConfig struct {
	MaxContentBytes int `toml:"max_content_bytes"` // cap on one candidate's content
}

// GitConfig governs commits and the repository lock.
type GitConfig struct {
	AuthorName  string   `toml:"author_name"`
	AuthorEmail string   `toml:"author_email"`
	LockWait    Duration `toml:"lock_wait"` // how long a writer waits for the repo lock
}

// Duration is a time.Duration written as "10s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultConfig returns the configuration used when config.toml sets
// nothing.
func DefaultConfig() *Config {
	return &Config{
		Add:         AddConfig{MaxContentBytes: 4096},
		Git:         GitConfig{AuthorName: "memctl", AuthorEmail: "memctl@localhost", LockWait: Duration{10 * time.Second}},
		Inject:      defaultInjectConfig(),
		Consolidate: defaultConsolidateConfig(),
		LLM:         defaultLLMConfig(),
		Files:       FilesConfig{MaxBytes: DefaultMaxWriteBytes},
	}
}

// LoadConfig reads dir/.memctl/config.toml over the defaults. Unknown keys
// are an error, so a typo does not silently fall back to a default.
func LoadConfig(dir string) (*Config, error) {
	cfg := DefaultConfig()
	p := filepath.Join(dir, filepath.FromSlash(ConfigPath))
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	md, err := toml.Decode(string(data), cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigPath, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown setting %q", ConfigPath, und[0].String())
	}
	return cfg, cfg.validate()
}

func (c *Config) validate() error {
	if c.Add.MaxContentBytes <= 0 {
		return fmt.Errorf("%s: add.max_content_bytes must be positive", ConfigPath)
	}
	if err := c.Inject.validate(); err != nil {
		return fmt.Errorf("%s: %w", ConfigPath, err)
	}
	if err := c.Consolidate.validate(); err != nil {
		return fmt.Errorf("%s: %w", ConfigPath, err)
	}
	if c.Files.MaxBytes < MinWriteBytes || c.Files.MaxBytes > MaxFileBytes/2 {
		return fmt.Errorf("%s: files.max_bytes must be in %d..%d (16 KiB to 32 MiB)", ConfigPath, MinWriteBytes, MaxFileBytes/2)
	}
	return nil
}
