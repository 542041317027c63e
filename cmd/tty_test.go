package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNoFileButATerminalIsTakenForOne(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tt := range []struct {
		name string
		f    *os.File
	}{
		{"the null device (an agent's shell, cron)", null},
		{"a pipe", r},
		{"a regular file", file},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if isTerminal(tt.f) {
				t.Errorf("%s taken for a terminal", tt.name)
			}
		})
	}
}

func TestAddWitnessesThePersonOnlyAtATerminal(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		args     []string
		stdin    string
		wantSeen bool
		wantNote bool
	}{
		{"at a terminal: seen typed", true, []string{"add", "Prefers tabs", "-c", "preference", "--source", "user_explicit"}, "", true, false},
		{"no terminal: a label only, noted", false, []string{"add", "Prefers tabs", "-c", "preference", "--source", "user_explicit"}, "", false, true},
		{"JSON Lines at a terminal: no one typed them here", true, []string{"add", "-"}, `{"content":"Prefers tabs","category":"preference","source":"user_explicit"}` + "\n", false, true},
		{"no terminal, a fact: not held, no note", false, []string{"add", "Tabs are 4 wide", "-c", "fact", "--source", "user_explicit"}, "", false, false},
		{"at a terminal, an agent's source: not the person's", true, []string{"add", "Prefers tabs", "-c", "preference"}, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "mem")
			env := map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "MEMCTL_DIR": dir}
			f, _, errOut := testFactory(env, "")
			if code := Run(context.Background(), f, []string{"init", dir}); code != 0 {
				t.Fatalf("init: %d %s", code, errOut)
			}
			f, _, errOut = testFactory(env, tt.stdin)
			f.IO.InTTY = tt.terminal
			if code := Run(context.Background(), f, tt.args); code != 0 {
				t.Fatalf("add: %d %s", code, errOut)
			}
			files, _ := filepath.Glob(filepath.Join(dir, ".memctl", "queue", "*.json"))
			if len(files) != 1 {
				t.Fatalf("queue files %v", files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if seen := strings.Contains(string(b), `"seen":"typed"`); seen != tt.wantSeen {
				t.Errorf("seen %v, want %v: %s", seen, tt.wantSeen, b)
			}
			if note := strings.Contains(errOut.String(), "not run at a terminal"); note != tt.wantNote {
				t.Errorf("note %v, want %v: %s", note, tt.wantNote, errOut)
			}
		})
	}
}
