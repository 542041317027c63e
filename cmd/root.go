// Package cmd is memctl's command line: one thin file per subcommand that
// parses flags into an options struct and calls into mdmem, consolidate or
// inject. Errors are mapped to exit codes here and nowhere else.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

// Exit codes, documented in `memctl --help` and the README.
const (
	ExitOK        = 0   // success
	ExitFailure   = 1   // an error, or lint found problems
	ExitUsage     = 2   // bad flags or arguments
	ExitLocked    = 3   // another memctl holds the memory's lock
	ExitNoModel   = 4   // consolidate: the configured model could not be used
	ExitRefused   = 5   // sync refused: rewritten or unrelated remote, a secret or local file to publish, a file it cannot merge
	ExitRemote    = 6   // sync: the remote could not be reached or kept moving; nothing local was lost
	ExitConflicts = 7   // sync done, and conflicting edits wait in Pending confirmation
	ExitCancelled = 130 // interrupted (Ctrl-C, SIGTERM)
)

// Version is set at build time with -ldflags "-X github.com/memctl/memctl/cmd.Version=…".
var Version = "dev"

// IOStreams are the standard streams a command uses; tests replace them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// InTTY and ErrTTY tell whether stdin / stderr are terminals.
	InTTY, ErrTTY bool
}

// Factory builds the dependencies commands need, lazily.
type Factory struct {
	IO     *IOStreams
	DirArg string // --dir
	Getenv func(string) string
	Now    func() time.Time
	opened []*mdmem.Store // stores opened by the command, for reporting recoveries
	// wroteJSON says the command printed its JSON document: a failure
	// after it prints no error document.
	wroteJSON bool

	// NoVerify is --no-verify: memctl's commits skip the git hooks.
	NoVerify bool
	// JQ is --jq: a jq expression that filters the command's JSON output.
	JQ string
}

// MemoryDir resolves the memory directory: --dir, then MEMCTL_DIR, then the
// nearest parent holding .memctl/, then $XDG_DATA_HOME/memctl (or
// ~/.local/share/memctl).
func (f *Factory) MemoryDir() (string, error) {
	if f.DirArg != "" {
		return filepath.Abs(f.DirArg)
	}
	if d := f.Getenv("MEMCTL_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if fi, err := os.Stat(filepath.Join(d, mdmem.MarkerDir)); err == nil && fi.IsDir() {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if x := f.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "memctl"), nil
	}
	home := f.Getenv("HOME")
	if home == "" {
		return "", errors.New("cannot choose a memory directory: no --dir, MEMCTL_DIR, .memctl/ in a parent, XDG_DATA_HOME or HOME")
	}
	return filepath.Join(home, ".local", "share", "memctl"), nil
}

// Store opens the memory directory. sections are the config.toml sections
// the command uses: a mistake in one of them stops it; mistakes in other
// sections do not (memctl lint reports them), and mistakes outside every
// known section are printed as warnings.
func (f *Factory) Store(ctx context.Context, sections ...string) (*mdmem.Store, error) {
	dir, err := f.MemoryDir()
	if err != nil {
		return nil, err
	}
	s, err := mdmem.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	for _, fixed := range s.Repo.Repaired() {
		fmt.Fprintf(f.IO.ErrOut, "memctl: repaired: %s\n", fixed)
	}
	for _, w := range s.Config.Warnings() {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %v\n", w)
	}
	if err := s.Config.Check(sections...); err != nil {
		return nil, err
	}
	s.Now = f.Now
	s.Repo.NoVerify, s.Repo.HookOutput = f.NoVerify, f.IO.ErrOut
	f.opened = append(f.opened, s)
	return s, nil
}

// Memory opens the memory directory and parses its files.
func (f *Factory) Memory(ctx context.Context) (*mdmem.Store, *mdmem.Memory, error) {
	s, err := f.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	mem, err := s.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	f.warnConflicts(mem.Conflicts())
	return s, mem, nil
}

// warnConflicts tells, on stderr, of git conflict markers in the memory
// files: their conflicted lines were not read as memory.
func (f *Factory) warnConflicts(markers []mdmem.ConflictMarker) {
	fmt.Fprint(f.IO.ErrOut, mdmem.ConflictWarning(markers))
}

// FlagError is a usage error: wrong flags or arguments.
type FlagError struct{ Err error }

// Error returns the usage problem.
func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a usage error.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError ends the command with a given code after it has printed what it
// had to say (e.g. lint found problems). Msg, if set, is printed as an error.
type ExitError struct {
	Code int
	Msg  string
}

// Error returns the message, or the exit status when there is none.
func (e *ExitError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// HintError carries a hint printed after the error.
type HintError struct {
	Err  error
	Hint string
}

// Error returns the error without the hint.
func (e *HintError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *HintError) Unwrap() error { return e.Err }

// command constructors registered by each subcommand file's init.
var commands []func(*Factory) *cobra.Command

func register(ctor func(*Factory) *cobra.Command) { commands = append(commands, ctor) }

// NewRootCmd builds the memctl command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "memctl",
		Short: "Durable, budgeted memory for long-running LLM agents",
		Long: `memctl keeps an agent's memory as human-editable Markdown in a git repository.

Agents queue candidate memories (add, extract); a cron job consolidates them
(consolidate); agent wrappers print a token-budgeted memory block before each
model call (inject). People edit MEMORY.md by hand, read git log, and forget
entries. Every rewrite is a git commit.

The memory directory is --dir, else $MEMCTL_DIR, else the nearest parent
holding .memctl/, else $XDG_DATA_HOME/memctl (~/.local/share/memctl).

Exit status: 0 ok; 1 error, or found problems / nothing found (lint,
search, log <id>); 2 usage error; 3 the memory is locked by another
memctl; 4 consolidate or extract could not use the configured model
(what the rules decided is committed, the rest stays queued); 5 sync
refused (nothing changed); 6 sync could not reach the remote (nothing
lost); 7 synced, with conflicting edits waiting in Pending; 130
interrupted.`,
		Example: `  memctl init ~/agent-memory
  memctl --dir ~/agent-memory add "Example code uses Python 3.11" --category preference
  memctl --dir ~/agent-memory list
  memctl --dir ~/agent-memory inject --task "fix the slow report API" --budget 4000`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("memctl {{.Version}}\n")
	root.PersistentFlags().StringVarP(&f.DirArg, "dir", "C", "", "memory directory (default: $MEMCTL_DIR, nearest .memctl/, XDG data home)")
	root.PersistentFlags().BoolVar(&f.NoVerify, "no-verify", false, "memctl's commits skip the repository's pre-commit and commit-msg hooks (as git commit --no-verify)")
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &FlagError{Err: plainFlagError(err)} })
	subs := make([]*cobra.Command, 0, len(commands))
	for _, ctor := range commands {
		subs = append(subs, ctor(f))
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	root.AddCommand(subs...)
	markArgErrorsAsUsage(root)
	addJQFlags(f, root)
	addCompletions(f, root)
	return root
}

// pflagValueError matches pflag's message for a value that does not parse,
// e.g. `invalid argument "abc" for "-b, --budget" flag: strconv.ParseInt:
// parsing "abc": invalid syntax`.
var pflagValueError = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (strconv\.Parse\w+|time: )`)

// plainFlagError says a flag value's problem in memctl's words instead of
// Go's parser's.
func plainFlagError(err error) error {
	m := pflagValueError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := "a valid value"
	switch {
	case strings.HasPrefix(m[3], "strconv.ParseInt"), strings.HasPrefix(m[3], "strconv.ParseUint"):
		want = "a whole number"
	case strings.HasPrefix(m[3], "strconv.ParseFloat"):
		want = "a number"
	case strings.HasPrefix(m[3], "strconv.ParseBool"):
		want = "true or false"
	case strings.HasPrefix(m[3], "time: "):
		want = "a duration such as 90s or 10m"
	}
	return fmt.Errorf("invalid %s %q: want %s", m[2], m[1], want)
}

// markArgErrorsAsUsage makes positional-argument errors usage errors (exit
// 2), like flag errors.
func markArgErrorsAsUsage(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return &FlagError{Err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markArgErrorsAsUsage(sub)
	}
}

// Main runs memctl with args and returns the exit code.
func Main(args []string) int {
	f := &Factory{
		IO:     &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, InTTY: isTerminal(os.Stdin), ErrTTY: isTerminal(os.Stderr)},
		Getenv: os.Getenv,
		Now:    time.Now,
	}
	if os.Getenv(logTimeEnv) == "1" {
		f.IO.Out, f.IO.ErrOut = newTimedWriter(os.Stdout, time.Now), newTimedWriter(os.Stderr, time.Now)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, f, args)
}

// Run executes the command tree with a prepared factory; tests call it.
func Run(ctx context.Context, f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	for _, s := range f.opened {
		for _, msg := range s.Recovered {
			fmt.Fprintf(f.IO.ErrOut, "memctl: recovered: %s\n", msg)
		}
	}
	if err == nil {
		return ExitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		err = &FlagError{Err: err} // cobra's own error for a mistyped command
	}
	code, msg, hints := describeError(err, ctx)
	if msg != "" {
		fmt.Fprintf(f.IO.ErrOut, "memctl: error: %s\n", msg)
	}
	for _, h := range hints {
		fmt.Fprintf(f.IO.ErrOut, "memctl: hint: %s\n", h)
	}
	if msg != "" && !f.wroteJSON && wantsJSON(cmd) {
		// One rule for every command: with --json, a failure is a JSON
		// document on stdout too (docs/JSON.md, "Errors").
		if hints == nil {
			hints = []string{}
		}
		_ = writeJSON(f.IO.Out, struct {
			Error    string   `json:"error"`
			Hints    []string `json:"hints"`
			ExitCode int      `json:"exit_code"`
		}{msg, hints, code})
	}
	return code
}

// wantsJSON reports whether the command was asked for JSON output
// (--json, or inject's --format json).
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if fl := cmd.Flags().Lookup("json"); fl != nil && fl.Value.String() == "true" {
		return true
	}
	fl := cmd.Flags().Lookup("format")
	return fl != nil && fl.Value.String() == "json"
}

// describeError is the exit status of err, its message ("" when the
// command has said all there is) and the hints for the person.
func describeError(err error, ctx context.Context) (code int, msg string, hints []string) {
	var exitErr *ExitError
	if errors.As(err, &exitErr) {
		return exitErr.Code, exitErr.Msg, nil
	}
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return ExitCancelled, "interrupted; nothing was left half written", nil
	}
	var hint *HintError
	var hinter interface{ Hint() string }
	if errors.As(err, &hint) && hint.Hint != "" {
		hints = append(hints, hint.Hint)
	} else if errors.As(err, &hinter) && hinter.Hint() != "" {
		hints = append(hints, hinter.Hint())
	}
	var flagErr *FlagError
	switch {
	case errors.As(err, &flagErr):
		return ExitUsage, err.Error(), append(hints, "see `memctl --help` or `memctl <command> --help`")
	case errors.As(err, new(*mdmem.SyncRefusedError)):
		return ExitRefused, err.Error(), hints
	case errors.Is(err, mdmem.ErrRemoteBusy):
		return ExitRemote, err.Error(), append(hints, "nothing changed here; another machine is pushing to this remote (or a push there was killed and left the branch's lock file in the remote repository): sync again in a moment")
	case errors.Is(err, mdmem.ErrRemote):
		return ExitRemote, err.Error(), append(hints, "nothing changed here; check the network and your git credentials (git fetch works?), then sync again")
	case errors.Is(err, mdmem.ErrLocked):
		return ExitLocked, err.Error(), append(hints, "another memctl is writing this memory; retry later (writers wait up to git.lock_wait)")
	}
	return ExitFailure, err.Error(), hints
}

// heapLimit sets a soft limit on the Go heap for a one-shot command (the
// collector works harder near it) unless the person set GOMEMLIMIT, and
// returns the restore for callers that run on (tests). gcOff also stops
// collecting below the limit: for a command that allocates a few MB and
// exits.
func heapLimit(limit int64, gcOff bool) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldLimit := debug.SetMemoryLimit(limit)
	oldGC := -2
	if gcOff {
		oldGC = debug.SetGCPercent(-1)
	}
	return func() {
		if oldGC != -2 {
			debug.SetGCPercent(oldGC)
		}
		debug.SetMemoryLimit(oldLimit)
	}
}
