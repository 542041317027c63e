package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const childEnv = "GITSTORE_TEST_CHILD"

// TestMain isolates git from the developer's configuration and lets tests
// re-exec this binary as a helper process (concurrency and kill -9 tests).
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode, os.Getenv("GITSTORE_TEST_DIR"), os.Getenv("GITSTORE_TEST_ID")))
	}
	home, err := os.MkdirTemp("", "gitstore-home-")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Person", "GIT_AUTHOR_EMAIL": "person@example.com",
		"GIT_COMMITTER_NAME": "Person", "GIT_COMMITTER_EMAIL": "person@example.com",
		"GIT_TERMINAL_PROMPT": "0",
	} {
		os.Setenv(k, v)
	}
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_WORK_TREE")
	os.Unsetenv("GIT_INDEX_FILE")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// child implements the helper processes.
func child(mode, dir, id string) int {
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	switch mode {
	case "conc":
		syncEnabled = false // this test is about locking, not durability
		for i := 0; i < 20; i++ {
			unlock, err := r.Lock(ctx, 60*time.Second)
			if err != nil {
				fmt.Fprintln(os.Stderr, "lock:", err)
				return 3
			}
			name := fmt.Sprintf("topics/p%s-%02d.md", id, i)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 4
			}
			h, err := r.Commit(ctx, CommitRequest{Paths: []string{name}, Message: "add " + name, Author: MemctlSignature})
			if err != nil || h == "" {
				fmt.Fprintln(os.Stderr, "commit:", h, err)
				return 5
			}
			_ = unlock()
		}
		return 0
	case "crash":
		fmt.Println("ready")
		for i := 0; ; i++ {
			unlock, err := r.Lock(ctx, 10*time.Second)
			if err != nil {
				fmt.Fprintln(os.Stderr, "lock:", err)
				return 3
			}
			content := fmt.Sprintf("entry %d %d\n", os.Getpid(), i)
			_ = os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(content), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "topics", fmt.Sprintf("t%d.md", i%7)), []byte(content), 0o644)
			if _, err := r.Commit(ctx, CommitRequest{Paths: []string{"MEMORY.md", fmt.Sprintf("topics/t%d.md", i%7)}, Message: "loop"}); err != nil {
				fmt.Fprintln(os.Stderr, "commit:", err)
				return 5
			}
			_ = unlock()
			fmt.Println("committed")
		}
	case "hold":
		if _, err := r.Lock(ctx, 0); err != nil {
			fmt.Fprintln(os.Stderr, "lock:", err)
			return 3
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		return 0
	}
	return 1
}

func childCmd(t testing.TB, mode, dir, id string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "GITSTORE_TEST_DIR="+dir, "GITSTORE_TEST_ID="+id)
	return cmd
}

// git runs the git CLI in dir and returns its trimmed stdout.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return strings.TrimSpace(stdout.String() + stderr.String()), err
	}
	return strings.TrimSpace(stdout.String()), nil
}

// fsckClean fails unless `git fsck --full` reports nothing but dangling objects.
func fsckClean(t testing.TB, dir string) {
	t.Helper()
	out, err := gitErr(dir, "fsck", "--full", "--no-progress")
	if err != nil {
		t.Fatalf("git fsck failed: %v\n%s", err, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "dangling ") {
			t.Fatalf("git fsck: %s", out)
		}
	}
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newRepo(t testing.TB) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	r, created, err := Init(context.Background(), dir)
	if err != nil || !created {
		t.Fatalf("Init: created=%v err=%v", created, err)
	}
	return r, r.Root()
}

func mustCommit(t testing.TB, r *Repo, paths ...string) string {
	t.Helper()
	h, err := r.Commit(context.Background(), CommitRequest{Paths: paths, Message: "memctl: update\n\nMemctl-Op: test"})
	if err != nil {
		t.Fatalf("Commit(%v): %v", paths, err)
	}
	return h
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
