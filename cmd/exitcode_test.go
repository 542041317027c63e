package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
)

// TestExitRule enforces the one exit rule of the README on every kind of
// outcome: 0 ok; 1 error or found problems / nothing found, with or
// without --json; 2 usage; 3 locked; 4 the model unusable; 130
// interrupted.
func TestExitRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs consolidate with retries")
	}
	dir := filepath.Join(t.TempDir(), "mem")
	srv := fakellm.New([]fakellm.Step{{Status: 503, Repeat: true}})
	defer srv.Close()
	env := map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "MEMCTL_DIR": dir}
	llmEnv := map[string]string{"HOME": env["HOME"], "GIT_CONFIG_NOSYSTEM": "1", "MEMCTL_DIR": dir,
		"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test", "MEMCTL_MODEL": "fake-model"}
	run := func(env map[string]string, ctx context.Context, args ...string) (int, string) {
		f, _, errOut := testFactory(env, "")
		return Run(ctx, f, args), errOut.String()
	}
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", dir},
		{"add", "Example code uses Python 3.11", "-c", "preference"},
		{"consolidate", "--no-llm"},
	} {
		if code, errOut := run(env, ctx, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	cfg := filepath.Join(dir, mdmem.ConfigPath)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `lock_wait = "10s"`, `lock_wait = "200ms"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name string
		env  map[string]string
		ctx  context.Context
		args []string
		want int
	}{
		{"search hit", env, ctx, []string{"search", "python"}, ExitOK},
		{"search no hit", env, ctx, []string{"search", "zzzqqq"}, ExitFailure},
		{"search no hit, json", env, ctx, []string{"search", "--json", "zzzqqq"}, ExitFailure},
		{"log with history", env, ctx, []string{"log", "pref-001"}, ExitOK},
		{"log without history", env, ctx, []string{"log", "fact-099"}, ExitFailure},
		{"log without history, json", env, ctx, []string{"log", "--json", "fact-099"}, ExitFailure},
		{"log of a malformed id", env, ctx, []string{"log", "not an id"}, ExitUsage},
		{"show unknown id", env, ctx, []string{"show", "fact-099"}, ExitFailure},
		{"show unknown id, json", env, ctx, []string{"show", "--json", "fact-099"}, ExitFailure},
		{"lint clean", env, ctx, []string{"lint"}, ExitOK},
		{"bad flag value", env, ctx, []string{"inject", "--budget", "abc"}, ExitUsage},
		{"unknown command", env, ctx, []string{"nosuch"}, ExitUsage},
		{"model down", llmEnv, ctx, []string{"add", "The order service uses Memcached now", "-c", "fact"}, ExitOK},
		{"consolidate, model down", llmEnv, ctx, []string{"consolidate"}, ExitNoModel},
		{"interrupted", env, cancelled, []string{"consolidate", "--no-llm"}, ExitCancelled},
	}
	for _, tt := range tests {
		if code, errOut := run(tt.env, tt.ctx, tt.args...); code != tt.want {
			t.Errorf("%s: memctl %v: exit %d, want %d; stderr %s", tt.name, tt.args, code, tt.want, errOut)
		}
	}

	// locked: another writer holds the memory's lock
	s, err := mdmem.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if code, errOut := run(env, ctx, "consolidate", "--no-llm"); code != ExitLocked {
		t.Errorf("locked: exit %d, want %d; stderr %s", code, ExitLocked, errOut)
	}

	// found problems: lint of a malformed entry line
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, mdmem.MainFile)
	mb, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, append(mb, []byte("\n- [pref-001] A second entry with the same id\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, errOut := run(env, ctx, "lint"); code != ExitFailure {
		t.Errorf("lint with problems: exit %d, want %d; stderr %s", code, ExitFailure, errOut)
	}
}
