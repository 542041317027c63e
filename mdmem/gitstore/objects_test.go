package gitstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBlobLooseAndPacked: ReadBlob reads a blob git wrote, loose (by
// memctl's own reader) or packed (through go-git), of any size, byte for
// byte.
func TestReadBlobLooseAndPacked(t *testing.T) {
	r, root := newRepo(t)
	ctx := context.Background()
	contents := []string{"", "x", strings.Repeat("line of a topic file\n", 5000), strings.Repeat("ü\r\n", 100000)}
	var hashes []string
	for i, c := range contents {
		writeFile(t, root, "f", c)
		hashes = append(hashes, git(t, root, "hash-object", "-w", "f"))
		if got, err := r.ReadBlob(ctx, hashes[i]); err != nil || !bytes.Equal(got, []byte(c)) {
			t.Fatalf("loose blob %d: %d bytes, %v; want %d bytes", i, len(got), err, len(c))
		}
	}
	writeFile(t, root, "f", "")
	git(t, root, "add", "f")
	git(t, root, "commit", "-q", "-m", "x")
	for _, h := range hashes { // tags keep the blobs through gc
		git(t, root, "tag", "t"+h[:8], h)
	}
	git(t, root, "gc", "-q", "--prune=now")
	for i, h := range hashes {
		if _, err := os.Stat(filepath.Join(root, ".git", "objects", h[:2], h[2:])); err == nil {
			t.Fatalf("blob %d still loose after gc", i)
		}
		if got, err := r.ReadBlob(ctx, h); err != nil || !bytes.Equal(got, []byte(contents[i])) {
			t.Fatalf("packed blob %d: %d bytes, %v; want %d bytes", i, len(got), err, len(contents[i]))
		}
	}
}
