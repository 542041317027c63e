package mdmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/memctl/memctl/mdmem/redact"
)

// Config is .memctl/config.toml. Every field has a documented default (see
// templates/config.toml); a missing file means all defaults.
type Config struct {
	Add         AddConfig         `toml:"add"`
	Git         GitConfig         `toml:"git"`
	Inject      InjectConfig      `toml:"inject"`
	Consolidate ConsolidateConfig `toml:"consolidate"`
	LLM         LLMConfig         `toml:"llm"`
	Files       FilesConfig       `toml:"files"`
	Extract     ExtractConfig     `toml:"extract"`

	problems []ConfigProblem // mistakes found by LoadConfig, by section
}

// FilesConfig governs the size of the memory files memctl writes.
type FilesConfig struct {
	// MaxBytes is the size up to which memctl fills a file: a topic file
	// continues in topics/<slug>-2.md, -3, …; MEMORY.md is refused beyond
	// it. At most half of what memctl reads (MaxFileBytes).
	MaxBytes int `toml:"max_bytes"`
}

// AddConfig governs the queue, and what add, import and confirm --text
// do with secrets.
type AddConfig struct {
	MaxContentBytes int `toml:"max_content_bytes"` // cap on one candidate's content
	// Secrets is the secrets policy: "redact" (default) stores each secret
	// as [REDACTED:<kind>]; "refuse" refuses a candidate holding one.
	Secrets string `toml:"secrets"`
	// PII: "keep" (default) stores e-mail addresses and phone numbers as
	// given; "redact" treats them as secrets.
	PII string `toml:"pii"`
}

// Redactor returns the secrets policy of [add] as an mdmem.Redactor.
func (c AddConfig) Redactor() Redactor {
	return redact.Policy{Action: redact.Action(c.Secrets), PII: c.PII == "redact"}
}

// GitConfig governs commits and the repository lock.
type GitConfig struct {
	AuthorName  string   `toml:"author_name"`
	AuthorEmail string   `toml:"author_email"`
	LockWait    Duration `toml:"lock_wait"` // how long a writer waits for the repo lock
	// AllowHandDelete keeps entries a person deleted by hand deleted; by
	// default memctl restores them into the archive (see CommitHandEdits).
	AllowHandDelete bool `toml:"allow_hand_delete"`
	// IDs is how new entry ids are made: "counter" (or unset, the
	// default) numbers them per prefix (dec-015); "random" draws letters
	// (dec-kqxzbt), so machines that write offline and sync never mint
	// the same id. Unset by default, so a memory init writes stays
	// writable by a memctl that predates the key.
	IDs string `toml:"ids"`
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
		Add:         AddConfig{MaxContentBytes: 4096, Secrets: string(redact.ActionRedact), PII: "keep"},
		Git:         GitConfig{AuthorName: "memctl", AuthorEmail: "memctl@localhost", LockWait: Duration{10 * time.Second}},
		Inject:      defaultInjectConfig(),
		Consolidate: defaultConsolidateConfig(),
		LLM:         defaultLLMConfig(),
		Files:       FilesConfig{MaxBytes: DefaultMaxWriteBytes},
		Extract:     defaultExtractConfig(),
	}
}

// ConfigSections are the sections of config.toml. Each is read on its
// own: a mistake in one stops only the commands that use it (Check), and
// `memctl lint` reports them all (Problems).
var ConfigSections = []string{"add", "git", "inject", "consolidate", "llm", "files", "extract"}

// ConfigProblem is a mistake in config.toml. Section is the section it is
// in; "" for a mistake outside every known section (an unknown section,
// text before the first header), which changes no setting.
type ConfigProblem struct {
	Section string
	Line    int // 1-based; 0 if unknown
	Err     error
}

// Error returns the problem with the file and line.
func (p ConfigProblem) Error() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", ConfigPath, p.Line, p.Err)
	}
	return fmt.Sprintf("%s: %v", ConfigPath, p.Err)
}

// ConfigError is a mistake in a section of config.toml that the command
// needs: it stops the command.
type ConfigError struct{ ConfigProblem }

// Error returns the problem and how to go on.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s; this command needs [%s]: fix it (`memctl lint` lists every config problem)", e.ConfigProblem.Error(), e.Section)
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads dir/.memctl/config.toml over the defaults, one section
// at a time. Unknown keys are mistakes, so a typo does not silently fall
// back to a default. A section with a mistake keeps all its defaults and
// records the problem: Check reports it to the commands using the
// section. The error is only for a file that cannot be read.
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
	cfg.load(string(data))
	return cfg, nil
}

// Check returns the first problem of the named sections, as a
// *ConfigError; nil when they are all fine.
func (c *Config) Check(sections ...string) error {
	for _, name := range sections {
		for _, p := range c.problems {
			if p.Section == name {
				return &ConfigError{p}
			}
		}
	}
	return nil
}

// Problems returns every mistake in config.toml, in file order.
func (c *Config) Problems() []ConfigProblem { return c.problems }

// Warnings returns the mistakes outside every known section: they stop no
// command, and every command mentions them.
func (c *Config) Warnings() []ConfigProblem {
	var out []ConfigProblem
	for _, p := range c.problems {
		if p.Section == "" {
			out = append(out, p)
		}
	}
	return out
}

// section returns a pointer to the settings of a known section, or nil.
func (c *Config) section(name string) any {
	switch name {
	case "add":
		return &c.Add
	case "git":
		return &c.Git
	case "inject":
		return &c.Inject
	case "consolidate":
		return &c.Consolidate
	case "llm":
		return &c.LLM
	case "files":
		return &c.Files
	case "extract":
		return &c.Extract
	}
	return nil
}

// setSection copies section name from src to c.
func (c *Config) setSection(name string, src *Config) {
	switch name {
	case "add":
		c.Add = src.Add
	case "git":
		c.Git = src.Git
	case "inject":
		c.Inject = src.Inject
	case "consolidate":
		c.Consolidate = src.Consolidate
	case "llm":
		c.LLM = src.LLM
	case "files":
		c.Files = src.Files
	case "extract":
		c.Extract = src.Extract
	}
}

// tomlLine finds the line number in a TOML decoding error.
var tomlLine = regexp.MustCompile(`^toml: line (\d+)`)

// configChunk is the text of one section header and its keys.
type configChunk struct {
	section string // first part of the header ("" before the first header)
	header  string // the header as written, "" before the first
	line    int    // 1-based line of the header (1 for the text before it)
	text    string // the chunk, after line-1 newlines so TOML's line numbers hold
}

// load decodes data section by section into c, recording problems.
func (c *Config) load(data string) {
	bad := map[string]bool{}
	problem := func(section string, line int, err error) {
		if c.section(section) == nil {
			section = ""
		}
		if section != "" {
			bad[section] = true
		}
		c.problems = append(c.problems, ConfigProblem{Section: section, Line: line, Err: err})
	}
	headers := map[string]int{}
	first := map[string]int{}
	for _, ch := range splitConfig(data) {
		if ch.header != "" {
			if l, dup := headers[ch.header]; dup {
				problem(ch.section, ch.line, fmt.Errorf("[%s] appears again (first at line %d); give each section once", ch.header, l))
				continue
			}
			headers[ch.header] = ch.line
			if _, ok := first[ch.section]; !ok {
				first[ch.section] = ch.line
			}
			if c.section(ch.section) == nil {
				problem("", ch.line, fmt.Errorf("unknown section [%s] (known: %s); its settings are ignored", ch.header, strings.Join(ConfigSections, ", ")))
				continue
			}
		}
		tmp := *c
		md, err := toml.Decode(ch.text, &tmp)
		if err != nil {
			line := ch.line
			var perr toml.ParseError
			if errors.As(err, &perr) && perr.Position.Line > 0 {
				line = perr.Position.Line
			} else if m := tomlLine.FindStringSubmatch(err.Error()); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			problem(ch.section, line, err)
			continue
		}
		if und := md.Undecoded(); len(und) > 0 {
			problem(und[0][0], ch.line, fmt.Errorf("unknown setting %q", und[0].String()))
			continue
		}
		for _, k := range md.Keys() {
			if len(k) > 0 {
				c.setSection(k[0], &tmp)
			}
		}
	}
	def := DefaultConfig()
	for _, name := range ConfigSections {
		if !bad[name] {
			if err := c.validateSection(name); err != nil {
				problem(name, first[name], err)
			}
		}
		if bad[name] {
			c.setSection(name, def) // a section with a mistake counts for nothing
		}
	}
	sort.SliceStable(c.problems, func(i, j int) bool { return c.problems[i].Line < c.problems[j].Line })
}

// splitConfig cuts config.toml at its table headers ("[inject]",
// "[[x.y]]"), keeping multi-line strings whole.
func splitConfig(data string) []configChunk {
	lines := strings.SplitAfter(data, "\n")
	var out []configChunk
	cur := configChunk{line: 1}
	var b strings.Builder
	inString := ""
	for i, l := range lines {
		if inString == "" {
			if name, header, ok := tableHeader(l); ok {
				cur.text = strings.Repeat("\n", cur.line-1) + b.String()
				out = append(out, cur)
				cur, b = configChunk{section: name, header: header, line: i + 1}, strings.Builder{}
			}
		}
		for _, q := range []string{`"""`, "'''"} {
			if (inString == "" || inString == q) && strings.Count(l, q)%2 == 1 {
				if inString == "" {
					inString = q
				} else {
					inString = ""
				}
			}
		}
		b.WriteString(l)
	}
	cur.text = strings.Repeat("\n", cur.line-1) + b.String()
	return append(out, cur)
}

// tableHeader recognises a TOML table header line and returns its first
// key part (unquoted) and the header text.
func tableHeader(line string) (section, header string, ok bool) {
	t := strings.TrimSpace(line)
	if i := strings.Index(t, "#"); i >= 0 && strings.Count(t[:i], `"`)%2 == 0 {
		t = strings.TrimSpace(t[:i])
	}
	if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
		return "", "", false
	}
	header = strings.TrimSpace(strings.Trim(t, "[]"))
	if header == "" || strings.ContainsAny(header, "=,{}") {
		return "", "", false
	}
	first, _, _ := strings.Cut(header, ".")
	return strings.Trim(strings.TrimSpace(first), `"'`), header, true
}

// keyCheck is one config key's value and whether it is out of range.
type keyCheck struct {
	key   string
	value any
	bad   bool
	want  string // what the key must be, e.g. "in [0,1]"
}

// firstBadKey reports the first out-of-range key of section, by its name:
// "inject.l2_reserve = 1.5: must be in [0,1]".
func firstBadKey(section string, checks ...keyCheck) error {
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("%s.%s = %v: must be %s", section, c.key, c.value, c.want)
		}
	}
	return nil
}

// MaxContentBytesLimit caps add.max_content_bytes: a candidate at the cap,
// escaped as JSON with its metadata, stays within the queue file memctl
// reads back (MaxQueueFileBytes), and an entry within a topic file's.
const MaxContentBytesLimit = 256 << 10

// validateSection checks the values of one section.
func (c *Config) validateSection(name string) error {
	switch name {
	case "add":
		if c.Add.MaxContentBytes <= 0 || c.Add.MaxContentBytes > MaxContentBytesLimit {
			return fmt.Errorf("add.max_content_bytes must be between 1 and %d, not %d", MaxContentBytesLimit, c.Add.MaxContentBytes)
		}
		if c.Add.Secrets != string(redact.ActionRedact) && c.Add.Secrets != string(redact.ActionRefuse) {
			return fmt.Errorf("add.secrets must be \"redact\" or \"refuse\", not %q", c.Add.Secrets)
		}
		if c.Add.PII != "keep" && c.Add.PII != "redact" {
			return fmt.Errorf("add.pii must be \"keep\" or \"redact\", not %q", c.Add.PII)
		}
	case "git":
		if c.Git.IDs != "" && c.Git.IDs != IDsCounter && c.Git.IDs != IDsRandom {
			return fmt.Errorf("git.ids must be %q or %q, not %q", IDsCounter, IDsRandom, c.Git.IDs)
		}
	case "inject":
		return c.Inject.validate()
	case "consolidate":
		return c.Consolidate.validate()
	case "llm":
		return c.LLM.validate()
	case "extract":
		return c.Extract.validate()
	case "files":
		if c.Files.MaxBytes < MinWriteBytes || c.Files.MaxBytes > MaxFileBytes/2 {
			return fmt.Errorf("files.max_bytes must be in %d..%d (16 KiB to 32 MiB)", MinWriteBytes, MaxFileBytes/2)
		}
	}
	return nil
}
