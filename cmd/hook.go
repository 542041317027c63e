package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newHookCmd) }

// maxHookContext is what Claude Code shows of a hook's context in full;
// beyond it the model gets a short preview only.
const maxHookContext = 10000

// maxHookInput caps the hook JSON read from stdin.
const maxHookInput = 1 << 20

// hookInput is Claude Code's hook payload (the fields memctl reads).
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Prompt         string `json:"prompt"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	Trigger        string `json:"trigger"`
}

type hookOptions struct {
	Scope      string
	Timeout    time.Duration
	Foreground bool
	Project    bool
	DryRun     bool
	AllowTools bool
}

// claudeEvents maps memctl's subcommands to Claude Code's event names.
var claudeEvents = []struct{ sub, event string }{
	{"session-start", "SessionStart"},
	{"user-prompt-submit", "UserPromptSubmit"},
	{"pre-compact", "PreCompact"},
	{"session-end", "SessionEnd"},
}

func newHookCmd(f *Factory) *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks: memory in and out of Claude Code sessions",
		Long: `Hook commands are run by an agent at points of its session, with the
agent's hook JSON on stdin. See docs/INTEGRATIONS.md.`,
		Example: `  memctl hook claude install
  memctl hook claude --help`,
		Args: cobra.NoArgs,
	}
	claude := &cobra.Command{
		Use:   "claude",
		Short: "Claude Code hooks (install, session-start, user-prompt-submit, pre-compact, session-end)",
		Long: `Claude Code runs these with its hook JSON on stdin (session_id,
transcript_path, cwd, hook_event_name, prompt, source). The payload is never
taken as the task: user-prompt-submit ranks entries against its "prompt".

  session-start       prints the core profile and the entries of the project
                      in cwd as context (hookSpecificOutput.additionalContext);
                      nothing on a resumed session (its transcript has them)
  user-prompt-submit  prints the entries relevant to the prompt, scoped to
                      the project in cwd, less those the session's start
                      gave; nothing when no other entry is relevant
  pre-compact,        start memctl extract on transcript_path in the
  session-end         background (bounded by llm.deadline); --foreground
                      waits for it

The project in cwd is the scope project:<path>, path being the full path
of the git repository holding cwd (or of cwd), the home directory as ~
(project:~/work/app; ~/personal/app is another project); --scope gives
another. Context stays under 10,000 characters (beyond that Claude Code
shows only a preview). A hook never breaks the session: on any error, or
after --timeout, it prints nothing on stdout, exits 0, and logs the error
to $XDG_STATE_HOME/memctl/hook.log (~/.local/state/memctl/hook.log).

install adds the four hooks to ~/.claude/settings.json (--project:
.claude/settings.local.json in the current directory): it prints the diff,
then writes; other settings and hooks are kept as they are, and a hook
already there is not added twice. See memctl hook claude install --help.`,
		Example: `  memctl hook claude install --dry-run
  memctl hook claude install --project
  echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"UserPromptSubmit","prompt":"fix the cache"}' | memctl hook claude user-prompt-submit`,
		Args: cobra.NoArgs,
	}
	for _, ev := range claudeEvents {
		opts := &hookOptions{}
		c := &cobra.Command{
			Use:     ev.sub,
			Short:   "Claude Code " + ev.event + " hook (hook JSON on stdin)",
			Long:    "Run by Claude Code at " + ev.event + ", with its hook JSON on stdin; see memctl hook claude --help.",
			Example: "  echo '{\"session_id\":\"s1\",\"transcript_path\":\"s1.jsonl\",\"cwd\":\"'$PWD'\",\"prompt\":\"fix the cache\"}' | memctl hook claude " + ev.sub,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				runClaudeHook(cmd.Context(), f, ev.event, opts)
				return nil
			},
		}
		c.Flags().StringVar(&opts.Scope, "scope", "", "scope of the project (default: project:<name of the git repository or directory in cwd>)")
		c.Flags().DurationVar(&opts.Timeout, "timeout", 5*time.Second, "give up (print nothing, exit 0) after this long")
		if ev.event == "PreCompact" || ev.event == "SessionEnd" {
			c.Flags().BoolVar(&opts.Foreground, "foreground", false, "run extract before returning instead of in the background")
		}
		claude.AddCommand(c)
	}
	inst := &hookOptions{}
	install := &cobra.Command{
		Use:   "install",
		Short: "Add memctl's hooks to Claude Code's settings.json (shows the diff first)",
		Long: `install adds SessionStart, UserPromptSubmit, PreCompact and SessionEnd hooks
to ~/.claude/settings.json, for every project. Each hook runs this memctl
binary by its absolute path with the absolute memory directory (--dir,
MEMCTL_DIR, …), so it works from an IDE without ~/go/bin on PATH or
MEMCTL_DIR set. It prints the diff, then writes the file atomically (through
a symbolic link, which stays a link); other settings and hooks keep their
place, a memctl hook already there is not added twice, and one with another
binary or directory is updated.

--project writes .claude/settings.local.json in the current directory
instead: the project's personal settings, which Claude Code keeps out of
the committed .claude/settings.json (the hooks hold your paths).

--allow-tools also allows the MCP tools memory_search, memory_show,
memory_inject, memory_add and memory_used (permissions.allow), which a
headless claude -p otherwise refuses unless run with
--allowedTools mcp__memctl__memory_search,…; memory_forget is never added.

install warns when there is no memory at the directory yet, and when no
model is configured (the hooks then inject, but a session's end waits for
memctl extract --catch-up). It ends with the line that registers the MCP
server.`,
		Example: `  memctl --dir ~/agent-memory hook claude install --dry-run
  memctl --dir ~/agent-memory hook claude install --allow-tools
  cd ~/src/app && memctl --dir ~/agent-memory hook claude install --project`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHookInstall(cmd.Context(), f, inst)
		},
	}
	install.Flags().BoolVar(&inst.Project, "project", false, "write .claude/settings.local.json in the current directory, not ~/.claude/settings.json")
	install.Flags().BoolVarP(&inst.DryRun, "dry-run", "n", false, "print the diff; write nothing")
	install.Flags().BoolVar(&inst.AllowTools, "allow-tools", false, "also allow memctl's MCP tools (all but memory_forget) in permissions.allow")
	claude.AddCommand(install)
	hook.AddCommand(claude)
	return hook
}

// hookLogPath is where hooks log what went wrong.
func hookLogPath(f *Factory) string {
	if x := f.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "memctl", "hook.log")
	}
	return filepath.Join(f.Getenv("HOME"), ".local", "state", "memctl", "hook.log")
}

// openHookLog opens the hook log for appending, private to the user
// (0600, narrowed if an older memctl made it readable to others): it
// names sessions and projects.
func openHookLog(p string) (*os.File, error) {
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if err := fh.Chmod(0o600); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// logField is a value from the hook's JSON as one token of a log line:
// letters, digits and "-_.:" only (at most 80), so a session id cannot
// end the line or forge another one.
func logField(s string) string {
	out := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.:", r)) {
			return r
		}
		return '_'
	}, s)
	if len(out) > 80 {
		out = out[:80]
	}
	return out
}

// logText is a message as the rest of one log line: control characters
// (line breaks included) become spaces.
func logText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
}

// hookLog appends one line to the hook log; a log that cannot be written
// is not an error either.
func hookLog(f *Factory, event, session, msg string) {
	p := hookLogPath(f)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	fh, err := openHookLog(p)
	if err != nil {
		return
	}
	defer fh.Close()
	fmt.Fprintf(fh, "%s %s session=%s %s\n", f.Now().UTC().Format(time.RFC3339), event, logField(session), logText(msg))
}

// runClaudeHook runs one hook; it never fails the agent: errors and time
// outs are logged, nothing is printed on stdout, the exit status is 0.
func runClaudeHook(ctx context.Context, f *Factory, event string, opts *hookOptions) {
	in, err := readHookInput(f.IO.In)
	if err != nil {
		hookLog(f, event, "", "error: "+err.Error())
		fmt.Fprintf(f.IO.ErrOut, "memctl hook: %v (logged to %s)\n", err, hookLogPath(f))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := claudeHook(ctx, f, event, in, opts)
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r.err = fmt.Errorf("gave up after %v", opts.Timeout)
	}
	if r.err != nil {
		hookLog(f, event, in.SessionID, "error: "+r.err.Error())
		fmt.Fprintf(f.IO.ErrOut, "memctl hook: %v (logged to %s)\n", r.err, hookLogPath(f))
		return
	}
	fmt.Fprint(f.IO.Out, r.out)
}

func readHookInput(r io.Reader) (*hookInput, error) {
	if r == nil {
		return nil, errors.New("no hook JSON on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHookInput {
		return nil, fmt.Errorf("hook JSON on stdin is larger than %d bytes", maxHookInput)
	}
	var in hookInput
	if err := json.Unmarshal(bytes.TrimSpace(data), &in); err != nil {
		return nil, fmt.Errorf("stdin is not Claude Code's hook JSON: %w", err)
	}
	return &in, nil
}

// projectScope is the scope of the project of a working directory
// (mdmem.ProjectScopeOf: the full path of its git repository, the home
// directory as "~").
func projectScope(f *Factory, cwd string) string {
	return mdmem.ProjectScopeOf(cwd, f.Getenv("HOME"))
}

// projectName names the project of a directory for a file name: the base
// name of its git repository (else of the directory), lower-cased, other
// characters "-".
func projectName(dir string) string {
	root := filepath.Clean(dir)
	if r, ok := mdmem.GitRoot(root); ok {
		root = r
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(root)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-.")
}

func (o *hookOptions) scopeFor(f *Factory, in *hookInput) string {
	if o.Scope != "" {
		return o.Scope
	}
	return projectScope(f, in.Cwd)
}

func claudeHook(ctx context.Context, f *Factory, event string, in *hookInput, opts *hookOptions) (string, error) {
	switch event {
	case "SessionStart", "UserPromptSubmit":
		return hookContext(ctx, f, event, in, opts)
	default:
		return "", hookExtract(ctx, f, event, in, opts)
	}
}

// hookContext prints the memory block for the session's start or for a
// prompt, as Claude Code's additionalContext, within maxHookContext.
//
// The core goes out once per session: at its start (and again after a
// /clear or a compaction, which drop it), not on a resumed session, whose
// transcript holds it. A prompt gets only the entries relevant to it that
// the start's block did not hold; when none is, the hook prints nothing.
func hookContext(ctx context.Context, f *Factory, event string, in *hookInput, opts *hookOptions) (string, error) {
	if event == "SessionStart" && in.Source == "resume" {
		return "", nil
	}
	if event == "UserPromptSubmit" && strings.TrimSpace(in.Prompt) == "" {
		return "", nil
	}
	s, err := f.Store(ctx, "inject")
	if err != nil {
		return "", err
	}
	o, err := configInjectOptions(s, f.Now())
	if err != nil {
		return "", err
	}
	if sc := opts.scopeFor(f, in); sc != "" {
		o.Scopes = []string{sc}
	}
	if o.MaxChars <= 0 || o.MaxChars > maxHookContext {
		o.MaxChars = maxHookContext
	}
	corpus, err := inject.LoadCorpusFor(ctx, s.Dir, true, o.Counter)
	if err != nil {
		return "", err
	}
	f.warnConflicts(corpus.Conflicts())
	start, err := hookBlock(corpus, o)
	if err != nil || event == "SessionStart" {
		if start != nil && len(start.Items) == 0 {
			start = nil // an empty fence says nothing
		}
		logInject(f, s, start)
		return hookOutput(event, start, err)
	}
	// A prompt: the whole budget ranks the entries against it, less the
	// ones the session's start gave or named as out of scope.
	o.Given = map[string]bool{}
	if start != nil {
		for _, it := range start.Items {
			o.Given[it.Note.Ref()] = true
		}
		for _, l := range start.LeftOut {
			if l.Reason == inject.ReasonScope {
				o.Given[l.Ref] = true
			}
		}
	}
	o.Task, o.L2Reserve = in.Prompt, 1
	o.Dense = injectDense(ctx, f, s, o.Task)
	res, err := hookBlock(corpus, o)
	if res != nil && len(res.Items) == 0 {
		res = nil
	}
	logInject(f, s, res)
	return hookOutput(event, res, err)
}

// hookBlock is the inject result whose block fits maxHookContext, halving
// the budget until it does; nil when none does.
func hookBlock(corpus *inject.Corpus, o inject.Options) (*inject.Result, error) {
	for budget := o.Budget; budget >= 64; budget /= 2 {
		o.Budget = budget
		res, err := inject.Inject(corpus, o)
		if err != nil {
			return nil, err
		}
		if len(res.Block) <= maxHookContext {
			return res, nil
		}
	}
	return nil, nil
}

// hookOutput is Claude Code's hook JSON carrying res's block; nothing
// without a block.
func hookOutput(event string, res *inject.Result, err error) (string, error) {
	if err != nil || res == nil || strings.TrimSpace(res.Block) == "" {
		return "", err
	}
	out, err := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": res.Block}})
	if err != nil {
		return "", err
	}
	return string(out) + "\n", nil
}

// configInjectOptions are the inject options of the memory's [inject]
// config, for the hooks and the MCP server (which have no inject flags).
func configInjectOptions(s *mdmem.Store, now time.Time) (inject.Options, error) {
	c := s.Config.Inject
	cnt, err := inject.NewCounter(c.Tokenizer)
	if err != nil {
		return inject.Options{}, fmt.Errorf("%s: inject.tokenizer: %w", mdmem.ConfigPath, err)
	}
	o := inject.Options{Budget: c.Budget, L2Reserve: c.L2Reserve, MaxChars: c.MaxChars, CoreMaxTokens: s.Config.Consolidate.CoreMaxTokens,
		CoreMaxLines: c.CoreMaxLines, CoreMaxBytes: c.CoreMaxBytes, TopK: c.TopK, StaleDays: c.StaleDays, Ranker: c.Ranker, Counter: cnt, Now: now.UTC()}
	if o.Header, o.RulesHeading, err = inject.LoadHeader(s.Dir, o.Now); err != nil {
		return inject.Options{}, err
	}
	return o, nil
}

// hookExtract starts memctl extract on the session's transcript: in the
// background (detached, so the agent does not wait; bounded by
// llm.deadline), or with --foreground before returning.
func hookExtract(ctx context.Context, f *Factory, event string, in *hookInput, opts *hookOptions) error {
	if in.TranscriptPath == "" {
		return errors.New("the hook JSON names no transcript_path")
	}
	dir, err := f.MemoryDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, mdmem.MarkerDir)); err != nil {
		return fmt.Errorf("%s is not a memctl memory (run memctl init): %w", dir, err)
	}
	if _, err := os.Stat(in.TranscriptPath); errors.Is(err, fs.ErrNotExist) {
		// Claude Code fires SessionEnd for sessions that wrote no
		// transcript (claude mcp list): nothing to extract.
		hookLog(f, event, in.SessionID, "no transcript at "+in.TranscriptPath+"; nothing to extract")
		return nil
	}
	s, err := mdmem.Open(ctx, dir)
	if err != nil {
		return err
	}
	transcriptPath, err := hookTranscript(f, in.TranscriptPath, s.Config.Extract.TranscriptDirs)
	if err != nil {
		return err
	}
	var scopes []string
	if sc := opts.scopeFor(f, in); sc != "" {
		scopes = []string{sc}
	}
	// Owed until an extract of it finishes: memctl extract --catch-up
	// reads it when this one cannot (no model, the model down, a kill).
	if err := consolidate.OweExtract(ctx, dir, consolidate.OwedExtract{Path: transcriptPath, Session: in.SessionID, Scopes: scopes, Event: event, Since: f.Now().UTC()}); err != nil {
		return err
	}
	if _, _, _, ok := consolidate.LLMEndpoint(s.Config, f.Getenv); !ok {
		hookLog(f, event, in.SessionID, "no model configured: "+transcriptPath+" waits for memctl extract --catch-up")
		return nil
	}
	args := []string{"--dir", dir, "extract", "--transcript", transcriptPath, "--quiet"}
	if in.SessionID != "" {
		args = append(args, "--session", in.SessionID)
	}
	for _, sc := range scopes {
		args = append(args, "--scope", sc)
	}
	if opts.Foreground {
		var out, errOut bytes.Buffer
		sub := *f
		sub.IO = &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}
		sub.DirArg, sub.opened = "", nil
		code := Run(ctx, &sub, args)
		ids := strings.Fields(out.String())
		hookLog(f, event, in.SessionID, fmt.Sprintf("extract exit %d, queued %d %s", code, len(ids), strings.TrimSpace(errOut.String())))
		if code != ExitOK {
			return fmt.Errorf("extract exited %d: %s", code, strings.TrimSpace(errOut.String()))
		}
		return nil
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	p := hookLogPath(f)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	logf, err := openHookLog(p)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "%s %s session=%s starting: memctl %s\n", f.Now().UTC().Format(time.RFC3339), event, logField(in.SessionID), logText(strings.Join(args, " ")))
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), logTimeEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logf, logf
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// transcriptRoots are the folders the agents keep their transcripts in,
// under the home directory (and CLAUDE_CONFIG_DIR, CODEX_HOME), and the
// configured ones (extract.transcript_dirs).
func transcriptRoots(f *Factory, configured []string) []string {
	home := f.Getenv("HOME")
	var roots []string
	if home != "" {
		roots = append(roots, filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".codex", "sessions"),
			filepath.Join(home, ".gemini", "tmp"))
	}
	if d := f.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		roots = append(roots, filepath.Join(d, "projects"))
	}
	if d := f.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
		roots = append(roots, filepath.Join(d, "sessions"))
	}
	for _, d := range configured {
		if rest, ok := strings.CutPrefix(d, "~/"); ok && home != "" {
			d = filepath.Join(home, rest)
		}
		if filepath.IsAbs(d) {
			roots = append(roots, d)
		}
	}
	return roots
}

// hookTranscript is the transcript a hook may read for path: a regular
// file, once links are resolved, inside an agent's transcript folder or a
// configured one. Anything else (/proc/self/environ, ~/.ssh/id_rsa, a
// FIFO) is refused without being opened.
func hookTranscript(f *Factory, path string, configured []string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("transcript_path: %w", err)
	}
	roots := transcriptRoots(f, configured)
	inside := false
	for _, r := range roots {
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			if rel, err := filepath.Rel(rr, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "." {
				inside = true
				break
			}
		}
	}
	if !inside {
		return "", fmt.Errorf("transcript_path %s is not in an agent's transcript folder (%s; more with extract.transcript_dirs): not read", abs, strings.Join(roots, ", "))
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("transcript_path %s is not a regular file: not read", abs)
	}
	return real, nil
}

// selfPath is the memctl binary to start again: os.Args[0] as invoked
// (so that a wrapper or link named memctl is honoured), else the
// executable.
func selfPath() (string, error) {
	if a := os.Args[0]; a != "" {
		if p, err := exec.LookPath(a); err == nil {
			return filepath.Abs(p)
		}
	}
	return os.Executable()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
