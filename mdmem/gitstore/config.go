package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/gcfg"
)

// cfgEntry is one "section.subsection.key = value" line of a git config file.
type cfgEntry struct {
	section, subsection, key string // section and key lower-cased
	value                    string
	blank                    bool // "key" without "= value" (means true)
	origin                   string
}

// gitConfig is the merged configuration: entries in increasing priority.
type gitConfig struct {
	entries []cfgEntry
}

func (c *gitConfig) lookup(section, subsection, key string) (cfgEntry, bool) {
	section, key = strings.ToLower(section), strings.ToLower(key)
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := c.entries[i]
		if e.section == section && e.subsection == subsection && e.key == key {
			return e, true
		}
	}
	return cfgEntry{}, false
}

func (c *gitConfig) get(section, subsection, key string) string {
	e, _ := c.lookup(section, subsection, key)
	return e.value
}

// boolean returns the git boolean value of a key and whether it is set.
func (c *gitConfig) boolean(section, subsection, key string) (val, set bool) {
	e, ok := c.lookup(section, subsection, key)
	if !ok {
		return false, false
	}
	if e.blank {
		return true, true
	}
	switch strings.ToLower(strings.TrimSpace(e.value)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, err := strconv.Atoi(strings.TrimSpace(e.value)); err == nil {
		return n != 0, true
	}
	return false, true
}

func (c *gitConfig) readFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	return c.readBytes(b, path)
}

func (c *gitConfig) readBytes(b []byte, origin string) error {
	cb := func(s, ss, k, v string, blank bool) error {
		if k == "" {
			return nil
		}
		c.entries = append(c.entries, cfgEntry{
			section: strings.ToLower(s), subsection: ss, key: strings.ToLower(k),
			value: v, blank: blank, origin: origin,
		})
		return nil
	}
	if err := gcfg.ReadWithCallback(bytes.NewReader(b), cb); err != nil {
		return fmt.Errorf("git: parse git config %s: %w", origin, err)
	}
	return nil
}

// globalConfigFiles returns the system and global config files in git's order.
func globalConfigFiles() []string {
	var files []string
	if v, _ := strconv.ParseBool(os.Getenv("GIT_CONFIG_NOSYSTEM")); !v {
		if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
			files = append(files, p)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		files = append(files, p)
		return files
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	home, _ := os.UserHomeDir()
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

func loadGlobalConfig() (*gitConfig, error) {
	c := &gitConfig{}
	for _, f := range globalConfigFiles() {
		if f == os.DevNull {
			continue
		}
		if err := c.readFile(f); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// loadConfig reads system, global, repository and environment
// (GIT_CONFIG_COUNT/KEY_n/VALUE_n) configuration. include directives are not
// followed.
func loadConfig(gitDir string) (*gitConfig, error) {
	c, err := loadGlobalConfig()
	if err != nil {
		return nil, err
	}
	if err := c.readFile(filepath.Join(gitDir, "config")); err != nil {
		return nil, err
	}
	if v, _ := c.boolean("extensions", "", "worktreeconfig"); v {
		// git sparse-checkout and others write here, not to config.
		if err := c.readFile(filepath.Join(gitDir, "config.worktree")); err != nil {
			return nil, err
		}
	}
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := 0; i < n; i++ {
			k := os.Getenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i))
			v := os.Getenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i))
			first, last := strings.Index(k, "."), strings.LastIndex(k, ".")
			if first < 0 {
				continue
			}
			sub := ""
			if last > first {
				sub = k[first+1 : last]
			}
			c.entries = append(c.entries, cfgEntry{
				section: strings.ToLower(k[:first]), subsection: sub,
				key: strings.ToLower(k[last+1:]), value: v, origin: "GIT_CONFIG_KEY_" + strconv.Itoa(i),
			})
		}
	}
	return c, nil
}

func unsupported(setting, why string) error {
	return fmt.Errorf("git: the repository sets %s, which memctl cannot handle safely (%s); unset it or use a repository without it: %w",
		setting, why, ErrUnsupported)
}

// checkSupported refuses repository settings that would make our index or
// ref writes unsafe or unreadable.
func (r *Repo) checkSupported() error {
	c := r.cfg
	if v, _ := c.boolean("core", "", "bare"); v {
		return unsupported("core.bare=true", "a bare repository has no worktree")
	}
	if v := strings.ToLower(c.get("extensions", "", "objectformat")); v != "" && v != "sha1" {
		return unsupported("extensions.objectFormat="+v, "only SHA-1 repositories are supported")
	}
	if v := strings.ToLower(c.get("extensions", "", "refstorage")); v != "" && v != "files" {
		return unsupported("extensions.refStorage="+v, "only the files ref backend is supported")
	}
	if v := c.get("core", "", "repositoryformatversion"); v != "" && v != "0" && v != "1" {
		return unsupported("core.repositoryFormatVersion="+v, "unknown repository format")
	}
	for _, s := range []struct{ sec, key, why string }{
		{"index", "skiphash", "go-git cannot read indexes without a checksum"},
		{"feature", "manyfiles", "it enables index.skipHash and index.version=4 in git >= 2.40"},
		{"core", "splitindex", "split indexes are not supported"},
		{"index", "sparse", "sparse indexes are not supported"},
		{"core", "sparsecheckout", "sparse checkouts are not supported"},
	} {
		if v, _ := c.boolean(s.sec, "", s.key); v {
			return unsupported(s.sec+"."+canonicalKey(s.key)+"=true", s.why)
		}
	}
	for _, e := range c.entries {
		// Settings in an included file would be missed: refused when the
		// repository's own config includes one (a user's global config
		// may, for user.* and the like).
		if (e.section == "include" || e.section == "includeif") && e.key == "path" && strings.HasPrefix(e.origin, r.gitDir) {
			return unsupported(e.section+".path", "memctl does not read included config files")
		}
	}
	if _, err := os.Stat(filepath.Join(r.gitDir, "reftable")); err == nil {
		return unsupported("extensions.refStorage=reftable", "a reftable directory exists")
	}
	if _, err := os.Stat(filepath.Join(r.gitDir, "sharedindex")); err == nil {
		// not a real file name; split index shares are "sharedindex.<sha>"
		return unsupported("core.splitIndex=true", "a shared index file exists")
	}
	if m, _ := filepath.Glob(filepath.Join(r.gitDir, "sharedindex.*")); len(m) > 0 {
		return unsupported("core.splitIndex=true", "a shared index file exists")
	}
	return nil
}

func canonicalKey(k string) string {
	switch k {
	case "skiphash":
		return "skipHash"
	case "manyfiles":
		return "manyFiles"
	case "splitindex":
		return "splitIndex"
	case "sparsecheckout":
		return "sparseCheckout"
	}
	return k
}

// autoCRLF returns core.autocrlf as "true", "input" or "false".
func (c *gitConfig) autoCRLF() string {
	e, ok := c.lookup("core", "", "autocrlf")
	if !ok {
		return "false"
	}
	if strings.EqualFold(strings.TrimSpace(e.value), "input") {
		return "input"
	}
	if v, _ := c.boolean("core", "", "autocrlf"); v {
		return "true"
	}
	return "false"
}

// fileMode reports core.fileMode (default true).
func (c *gitConfig) fileMode() bool {
	v, set := c.boolean("core", "", "filemode")
	return !set || v
}
