package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testFactory returns a factory with captured output, a fixed clock and
// the given environment.
func testFactory(env map[string]string, stdin string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Getenv: func(k string) string { return env[k] },
		Now:    func() time.Time { return time.Date(2026, 1, 5, 10, 12, 0, 0, time.UTC) },
	}
	return f, &out, &errOut
}

func TestMemoryDirResolution(t *testing.T) {
	base := t.TempDir()
	withMarker := filepath.Join(base, "proj")
	sub := filepath.Join(withMarker, "a", "b")
	if err := os.MkdirAll(filepath.Join(withMarker, ".memctl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dirFlag, wd string
		env               map[string]string
		want              string
	}{
		{"flag wins", "/x/flag", sub, map[string]string{"MEMCTL_DIR": "/x/env"}, "/x/flag"},
		{"env next", "", sub, map[string]string{"MEMCTL_DIR": "/x/env"}, "/x/env"},
		{"nearest parent with .memctl", "", sub, nil, withMarker},
		{"XDG data home", "", base, map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/x/home"}, "/x/data/memctl"},
		{"relative XDG is ignored", "", base, map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/x/home"}, "/x/home/.local/share/memctl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.wd)
			f, _, _ := testFactory(tt.env, "")
			f.DirArg = tt.dirFlag
			got, err := f.MemoryDir()
			if err != nil || got != tt.want {
				t.Errorf("MemoryDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	t.Run("nothing to go on", func(t *testing.T) {
		t.Chdir(base)
		f, _, _ := testFactory(nil, "")
		if _, err := f.MemoryDir(); err == nil {
			t.Error("want an error without HOME")
		}
	})
}

// TestUsageErrors: bad flags and arguments exit 2 with an error and a hint,
// before touching any memory.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"list", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"add"}, "give the content as an argument"},
		{[]string{"add", "x", "--stdin-json"}, "not both"},
		{[]string{"add", "x", "--confidence", "high"}, `invalid --confidence "high": want a number`},
		{[]string{"add", "x", "--category", "nope"}, `invalid --category "nope": want one of`},
		{[]string{"inject", "--budget", "abc"}, `invalid --budget "abc": want a whole number`},
		{[]string{"show"}, "requires at least 1 arg"},
		{[]string{"list", "--place", "attic"}, `unknown --place "attic"`},
		{[]string{"log", "-n", "-1"}, "-n must not be negative"},
		{[]string{"version", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := testFactory(map[string]string{"HOME": t.TempDir()}, "")
			code := Run(context.Background(), f, append([]string{"--dir", t.TempDir()}, tt.args...))
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, ExitUsage, errOut)
			}
			if !strings.Contains(errOut.String(), "memctl: error: "+tt.want) && !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", errOut, tt.want)
			}
			if !strings.Contains(errOut.String(), "memctl: hint:") {
				t.Errorf("stderr %q has no hint", errOut)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

func TestRunAddQueueShow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	env := map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1"}
	f, _, errOut := testFactory(env, "")
	if code := Run(context.Background(), f, []string{"init", dir}); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	f, out, errOut := testFactory(env, `{"content":"From stdin","category":"fact","refs":"D1:3"}`+"\n")
	if code := Run(context.Background(), f, []string{"--dir", dir, "add", "-"}); code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out.String())
	if !strings.HasPrefix(id, "c20260105T101200.") {
		t.Fatalf("candidate id %q does not carry the clock", id)
	}
	f, out, errOut = testFactory(env, "")
	if code := Run(context.Background(), f, []string{"-C", dir, "show", id}); code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	for _, want := range []string{"content:      From stdin", "refs:         D1:3", "created:      2026-01-05T10:12:00Z", "place:        queue"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
}

func TestLockedExitCode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	env := map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1"}
	f, _, errOut := testFactory(env, "")
	if code := Run(context.Background(), f, []string{"init", dir}); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	f, _, _ = testFactory(env, "")
	f.DirArg = dir
	s, err := f.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Repo.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(dir, ".memctl", "config.toml"), []byte("[git]\nlock_wait = \"50ms\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, errOut = testFactory(env, `{"content":"x","category":"fact"}`+"\n")
	code := Run(context.Background(), f, []string{"--dir", dir, "import"})
	if code != ExitLocked || !strings.Contains(errOut.String(), "locked by pid") {
		t.Errorf("exit %d, stderr %q; want %d and the holder", code, errOut, ExitLocked)
	}
}

// TestEveryCommandHasHelp: every memctl command has a short line, a long
// description and examples.
func TestEveryCommandHasHelp(t *testing.T) {
	f, _, _ := testFactory(nil, "")
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Short == "" || c.Example == "" || (c.Long == "" && c.Name() != "version") {
			t.Errorf("%s: Short %q, Long %d bytes, Example %d bytes", c.Name(), c.Short, len(c.Long), len(c.Example))
		}
	}
	if len(root.Commands()) < 10 {
		t.Errorf("only %d commands registered", len(root.Commands()))
	}
}

func TestPlainFlagError(t *testing.T) {
	tests := []struct{ in, want string }{
		{`invalid argument "abc" for "-b, --budget" flag: strconv.ParseInt: parsing "abc": invalid syntax`, `invalid --budget "abc": want a whole number`},
		{`invalid argument "x" for "--l2-reserve" flag: strconv.ParseFloat: parsing "x": invalid syntax`, `invalid --l2-reserve "x": want a number`},
		{`invalid argument "maybe" for "--json" flag: strconv.ParseBool: parsing "maybe": invalid syntax`, `invalid --json "maybe": want true or false`},
		{`invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"`, `invalid --timeout "soon": want a duration such as 90s or 10m`},
		{`unknown flag: --nope`, `unknown flag: --nope`},
	}
	for _, tt := range tests {
		if got := plainFlagError(errors.New(tt.in)).Error(); got != tt.want {
			t.Errorf("plainFlagError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
