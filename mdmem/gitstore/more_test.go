package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	unlock, err := r.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r2.Lock(ctx, 0)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.PID != os.Getpid() {
		t.Fatalf("err = %#v", err)
	}
	host, _ := os.Hostname()
	if want := fmt.Sprintf("memory repository is locked by pid %d on %s since ", os.Getpid(), host); !strings.HasPrefix(err.Error(), want) ||
		!strings.HasSuffix(err.Error(), "Z") {
		t.Fatalf("message %q", err)
	}
	go func() { time.Sleep(100 * time.Millisecond); unlock() }()
	start := time.Now()
	unlock2, err := r2.Lock(ctx, 5*time.Second)
	if err != nil || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("waiting Lock: %v after %v", err, time.Since(start))
	}
	// context cancellation is honoured
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	r3, _ := Open(ctx, root)
	if _, err := r3.Lock(cctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx err = %v", err)
	}
	unlock2()

	// a holder killed with SIGKILL does not block the next Lock
	cmd := childCmd(t, "hold", root, "")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q", line)
	}
	_, err = r.Lock(ctx, 0)
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("err = %v, want holder pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	u, err := r.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("lock after holder was killed: %v", err)
	}
	u()
	if _, err := os.Stat(filepath.Join(root, ".git", "memctl.lock")); err != nil {
		t.Fatal("lock file must never be deleted")
	}
}

func TestLogAndTrailers(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	for i := 0; i < 5; i++ {
		writeFile(t, root, "MEMORY.md", fmt.Sprint(i))
		op := "add"
		if i%2 == 1 {
			op = "forget"
		}
		when := time.Date(2026, 1, 2, 3, 4, i, 0, time.FixedZone("", 3600))
		if _, err := r.Commit(ctx, CommitRequest{Paths: []string{"MEMORY.md"}, When: when,
			Message: fmt.Sprintf("memctl: %s %d\n\nBody line.\n\nMemctl-Op: %s\nMemctl-Id: a%d\nMemctl-Id: b%d\n", op, i, op, i, i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Log(ctx, func(c *Commit) bool { return c.Trailers["Memctl-Op"][0] == "forget" }, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("Log = %v %v", got, err)
	}
	if got[0].Subject != "memctl: forget 3" || got[1].Subject != "memctl: forget 1" ||
		!reflect.DeepEqual(got[0].Trailers["Memctl-Id"], []string{"a3", "b3"}) || got[0].Author != MemctlSignature ||
		!got[0].When.Equal(time.Date(2026, 1, 2, 3, 4, 3, 0, time.UTC).Add(-time.Hour)) || !strings.HasPrefix(got[0].Body, "Body line.") {
		t.Fatalf("commit = %+v", got[0])
	}
	if got[0].Hash != git(t, root, "rev-parse", "HEAD~1") {
		t.Fatal("hash")
	}
	all, _ := r.Log(ctx, nil, 3)
	if len(all) != 3 {
		t.Fatalf("limit: %d", len(all))
	}
	// git itself parses our trailers the same way
	if out := git(t, root, "log", "-1", "--format=%(trailers:key=Memctl-Id,valueonly,separator=%x2C)"); out != "a4,b4" {
		t.Fatalf("git trailers %q", out)
	}
}

func TestParseTrailers(t *testing.T) {
	cases := []struct {
		msg  string
		want map[string][]string
	}{
		{"subject only", nil},
		{"Key: value", nil}, // the subject is never a trailer block
		{"s\n\nKey: v\n", map[string][]string{"Key": {"v"}}},
		{"s\n\nbody\n\nA: 1\nB-b: 2\nA: 3\n\n", map[string][]string{"A": {"1", "3"}, "B-b": {"2"}}},
		{"s\n\nA: 1\nnot a trailer\n", nil},
		{"s\n\nA: long\n  continued\n", map[string][]string{"A": {"long continued"}}},
		{"s\r\n\r\nA: crlf\r\n", map[string][]string{"A": {"crlf"}}},
		{"s\n\nbad key: v\n", nil},
		{"s\n\nA:\n", map[string][]string{"A": {""}}},
	}
	for _, c := range cases {
		if got := ParseTrailers(c.msg); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTrailers(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}

func TestEOLNormalisation(t *testing.T) {
	cases := []struct {
		name, attrs, autocrlf string
		content, wantBlob     string
		refuse                bool
	}{
		{"eol=lf", "*.md text eol=lf\n", "", "a\r\nb\r\n", "a\nb\n", false},
		{"text=auto", "* text=auto\n", "", "a\r\nb\r\n", "a\nb\n", false},
		{"autocrlf=true", "", "true", "a\r\nb\r\n", "a\nb\n", false},
		{"autocrlf=input", "", "input", "a\r\nb\r\n", "a\nb\n", false},
		{"none", "", "", "a\r\nb\r\n", "a\r\nb\r\n", false},
		{"-text", "*.md -text\n", "true", "a\r\nb\r\n", "a\r\nb\r\n", false},
		{"binary macro", "*.md binary\n", "true", "a\r\nb\r\n", "a\r\nb\r\n", false},
		{"auto binary content", "* text=auto\n", "", "a\r\n\x00b\r\n", "a\r\n\x00b\r\n", false},
		{"lfs filter", "*.md filter=lfs diff=lfs merge=lfs -text\n", "", "x\n", "", true},
		{"ident", "*.md ident\n", "", "x\n", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, root := newRepo(t)
			if c.attrs != "" {
				writeFile(t, root, ".gitattributes", c.attrs)
				git(t, root, "add", ".gitattributes")
				git(t, root, "commit", "-q", "-m", "attrs")
			}
			if c.autocrlf != "" {
				git(t, root, "config", "core.autocrlf", c.autocrlf)
				var err error
				if r, err = Open(context.Background(), root); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, root, "MEMORY.md", c.content)
			_, err := r.Commit(context.Background(), CommitRequest{Paths: []string{"MEMORY.md"}, Message: "m"})
			if c.refuse {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := git(t, root, "cat-file", "blob", "HEAD:MEMORY.md"); got != strings.TrimSpace(c.wantBlob) {
				t.Fatalf("blob %q, want %q", got, c.wantBlob)
			}
			if s := git(t, root, "status", "--porcelain"); s != "" {
				t.Fatalf("status:\n%s", s)
			}
			// git agrees the stored blob is what it would store
			if s := git(t, root, "add", "--renormalize", "MEMORY.md"); s != "" {
				t.Fatal(s)
			}
			if s := git(t, root, "status", "--porcelain"); s != "" {
				t.Fatalf("after renormalize:\n%s", s)
			}
			t.Log(git(t, root, "ls-files", "--eol", "MEMORY.md"))
		})
	}
}

// TestConcurrentProcesses runs 8 processes × 20 commits, each under Lock.
func TestConcurrentProcesses(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "seed\n")
	os.MkdirAll(filepath.Join(root, "topics"), 0o755)
	mustCommit(t, r, "MEMORY.md")
	const procs = 8
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		go func(p int) {
			out, err := childCmd(t, "conc", root, fmt.Sprint(p)).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("child %d: %v: %s", p, err, out)
			}
			errs <- err
		}(p)
	}
	for p := 0; p < procs; p++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := atoi(t, git(t, root, "rev-list", "--count", "main")); n != 1+procs*20 {
		t.Fatalf("%d commits reachable, want %d", n, 1+procs*20)
	}
	if n := len(strings.Split(git(t, root, "ls-tree", "-r", "--name-only", "HEAD", "topics/"), "\n")); n != procs*20 {
		t.Fatalf("%d files in HEAD", n)
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status:\n%s", s)
	}
	fsckClean(t, root)
}

// TestCrashSafety kills a committing child with SIGKILL at random moments.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 loop")
	}
	ctx := context.Background()
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "seed\n")
	mustCommit(t, r, "MEMORY.md")
	os.MkdirAll(filepath.Join(root, "topics"), 0o755)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	const kills = 100
	done := 0
	repaired := 0
	for i := 0; i < kills; i++ {
		cmd := childCmd(t, "crash", root, "")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// the delay counts from the child being ready to commit (process
		// start-up under -race alone takes longer than 40 ms)
		lines := bufio.NewReader(out)
		if line, _ := lines.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child: %q", line)
		}
		if i%3 == 2 {
			// Let the child finish a commit first, so this kill lands in a
			// later one: kills then cover the state after complete commits.
			if line, _ := lines.ReadString('\n'); line != "committed\n" {
				t.Fatalf("child: %q", line)
			}
		}
		time.Sleep(time.Duration(rng.Intn(40)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		r2, err := Open(ctx, root)
		if err != nil {
			t.Fatalf("kill %d: Open: %v", i, err)
		}
		repaired += len(r2.Repaired())
		if err := r2.Check(ctx); err != nil {
			t.Fatalf("kill %d: Check: %v", i, err)
		}
		git(t, root, "rev-parse", "HEAD")
		if i%10 == 0 {
			fsckClean(t, root)
		}
		git(t, root, "status", "--porcelain")
		writeFile(t, root, "MEMORY.md", fmt.Sprintf("after kill %d\n", i))
		if h := mustCommit(t, r2, "MEMORY.md"); h == "" {
			t.Fatalf("kill %d: no commit", i)
		}
		done++
		if s := git(t, root, "status", "--porcelain", "MEMORY.md"); s != "" {
			t.Fatalf("kill %d: status %s", i, s)
		}
	}
	fsckClean(t, root)
	n := atoi(t, git(t, root, "rev-list", "--count", "HEAD"))
	t.Logf("%d kills, %d commits (%d by killed children), %d automatic repairs", done, n, n-1-done, repaired)
	if n-1-done == 0 {
		t.Fatalf("no child ever completed a commit; the kill test is not exercising the commit path")
	}
}
