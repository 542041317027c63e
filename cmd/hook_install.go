package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/mdmem"
)

// mcpToolNames are the MCP tools an agent may call without asking once
// install --allow-tools has run: every tool but memory_forget.
var mcpToolNames = []string{"memory_search", "memory_show", "memory_inject", "memory_add", "memory_used"}

// mcpAllowRules are Claude Code permission rules for mcpToolNames.
func mcpAllowRules() []string {
	var rules []string
	for _, n := range mcpToolNames {
		rules = append(rules, "mcp__memctl__"+n)
	}
	return rules
}

// mcpAddLine is the one line that registers memctl's MCP server with
// Claude Code: user scope (every project), the absolute binary and the
// memory directory, so that no working directory or environment changes
// which memory the agent reads.
func mcpAddLine(self, dir string) string {
	return "claude mcp add --scope user memctl -- " + shellQuote(self) + " --dir " + shellQuote(dir) + " mcp"
}

// claudeSettingsPath is the settings file install writes: the person's
// ~/.claude/settings.json, or with --project the project's personal
// .claude/settings.local.json (Claude Code keeps it out of the shared,
// committed .claude/settings.json: the hooks hold this person's paths).
func claudeSettingsPath(f *Factory, project bool) (string, error) {
	if project {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".claude", "settings.local.json"), nil
	}
	home := f.Getenv("HOME")
	if home == "" {
		return "", &HintError{Err: errors.New("HOME is not set: cannot find ~/.claude/settings.json"), Hint: "set HOME, or run install --project in the project"}
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// writeTarget follows path through symbolic links (a settings file kept
// in a dotfiles repository) to the file to write, so that writing
// replaces the file and keeps the link. A link to a file not yet there
// resolves to where it points.
func writeTarget(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// runHookInstall merges memctl's hooks (and with --allow-tools the MCP
// tools' permissions) into a Claude Code settings file. The hooks run the
// absolute memctl binary with the absolute memory directory: Claude Code
// launched from an IDE has neither ~/go/bin on PATH nor MEMCTL_DIR.
func runHookInstall(ctx context.Context, f *Factory, opts *hookOptions) error {
	path, err := claudeSettingsPath(f, opts.Project)
	if err != nil {
		return err
	}
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	dir, err := f.MemoryDir()
	if err != nil {
		return err
	}
	base := shellQuote(self) + " --dir " + shellQuote(dir)
	var specs []hookSpec
	for _, ev := range claudeEvents {
		timeout := 10
		if ev.event == "SessionEnd" || ev.event == "PreCompact" {
			timeout = 30
		}
		specs = append(specs, hookSpec{Event: ev.event, Command: base + " hook claude " + ev.sub, Timeout: timeout})
	}
	marker := func(event string) string {
		for _, ev := range claudeEvents {
			if ev.event == event {
				return "hook claude " + ev.sub
			}
		}
		return event
	}
	out, changed, err := mergeHooks(old, specs, marker)
	if err == nil && opts.AllowTools {
		var allowed []string
		if out, allowed, err = mergeAllow(out, mcpAllowRules()); len(allowed) > 0 {
			changed = append(changed, "permission for "+strings.Join(mcpToolNames, ", "))
		}
	}
	if err != nil {
		return &HintError{Err: fmt.Errorf("%s: %w", target, err), Hint: "fix the file's JSON (or move it away), then run install again"}
	}
	installWarnings(ctx, f, dir)
	next := "memctl: next, the MCP server: " + mcpAddLine(self, dir)
	if len(changed) == 0 {
		fmt.Fprintf(f.IO.Out, "memctl: hooks already installed in %s; nothing to change\n%s\n", target, next)
		return nil
	}
	fmt.Fprint(f.IO.Out, consolidate.UnifiedDiff(func(string) []byte { return old }, map[string][]byte{target: out}))
	if opts.DryRun {
		fmt.Fprintf(f.IO.Out, "memctl: dry run: would set %s in %s\n", strings.Join(changed, ", "), target)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := mdmem.WriteFileAtomic(ctx, target, out, perm); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "memctl: set %s in %s\n%s\n", strings.Join(changed, ", "), target, next)
	return nil
}

// installWarnings tells the person what the hooks will lack: a memory to
// read (none at dir yet) and a model to extract transcripts with (the
// hooks run in Claude Code's environment: only config.toml reaches them
// for sure).
func installWarnings(ctx context.Context, f *Factory, dir string) {
	if _, err := os.Stat(filepath.Join(dir, mdmem.MarkerDir)); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: no memory at %s yet: the hooks will do nothing\nmemctl: hint: memctl init %s\n", dir, shellQuote(dir))
		return
	}
	s, err := mdmem.Open(ctx, dir)
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s: %v\n", dir, err)
		return
	}
	if _, _, _, ok := consolidate.LLMEndpoint(s.Config, func(string) string { return "" }); !ok {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: no model in %s: the hooks inject the memory, but a session's end cannot be distilled into memories; its transcript waits for memctl extract --catch-up\nmemctl: hint: set llm.model (and llm.base_url) in %s; the hooks run in Claude Code's environment, not your shell's\n",
			filepath.Join(dir, mdmem.ConfigPath), filepath.Join(dir, mdmem.ConfigPath))
	}
}
