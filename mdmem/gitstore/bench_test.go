package gitstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
	benchSeq  int // makes every benchmarked change unique across b.N rounds
)

// benchRepo builds (once per test binary run) a repository with 5,000
// tracked files and 10,000 commits of history, using git fast-import.
func benchRepo(b *testing.B) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gitstore-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
			benchErr = fmt.Errorf("%v %s", err, out)
			return
		}
		cmd := exec.Command("git", "fast-import", "--quiet")
		cmd.Dir = dir
		in, _ := cmd.StdinPipe()
		if err := cmd.Start(); err != nil {
			benchErr = err
			return
		}
		w := bufio.NewWriterSize(in, 1<<20)
		const files, commits = 5000, 10000
		for c := 0; c < commits; c++ {
			fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter memctl <memctl@localhost> %d +0000\ndata 8\nhistory\n", c+1, 1700000000+c)
			if c > 0 {
				fmt.Fprintf(w, "from :%d\n", c)
			}
			if c == 0 {
				for f := 0; f < files; f++ {
					content := fmt.Sprintf("file %d\n", f)
					fmt.Fprintf(w, "M 100644 inline topics/d%02d/f%04d.md\ndata %d\n%s\n", f%50, f, len(content), content)
				}
			} else {
				f := c % files
				content := fmt.Sprintf("file %d rev %d\n", f, c)
				fmt.Fprintf(w, "M 100644 inline topics/d%02d/f%04d.md\ndata %d\n%s\n", f%50, f, len(content), content)
			}
		}
		w.Flush()
		in.Close()
		if err := cmd.Wait(); err != nil {
			benchErr = err
			return
		}
		if out, err := exec.Command("git", "-C", dir, "reset", "-q", "--hard").CombinedOutput(); err != nil {
			benchErr = fmt.Errorf("%v %s", err, out)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// BenchmarkCommit measures one memctl commit changing one file in a
// 5,000-file repository with 10,000 commits of history.
func BenchmarkCommit(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	unlock, err := r.Lock(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	name := "topics/d07/f0007.md"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		benchSeq++
		writeFile(b, dir, name, fmt.Sprintf("ours %d\n", benchSeq))
		b.StartTimer()
		h, err := r.Commit(ctx, CommitRequest{Paths: []string{name}, Message: "bench"})
		if err != nil || h == "" {
			b.Fatal(h, err)
		}
	}
}

// BenchmarkGitCLICommitOnly is the reference: `git commit --only` of the
// same change through the git CLI.
func BenchmarkGitCLICommitOnly(b *testing.B) {
	dir := benchRepo(b)
	name := "topics/d07/f0007.md"
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		benchSeq++
		writeFile(b, dir, name, fmt.Sprintf("cli %d\n", benchSeq))
		b.StartTimer()
		cmd := exec.Command("git", "-c", "user.name=memctl", "-c", "user.email=memctl@localhost",
			"commit", "-q", "--no-verify", "--only", "-m", "x", "--", name)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
}
