package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportSpoolNeverThroughALinkedCache: memctl never writes
// through a .memctl/cache that is a link out of the memory directory
// (SafeDir, checkWriteDirs), but import's spool, which holds every valid
// candidate of the input (after redaction), is created in the cache
// directory before the lock checks it: through the link, outside the
// memory directory.
func TestImportSpoolNeverThroughALinkedCache(t *testing.T) {
	mem := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mem, ".memctl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mem, ".memctl", "cache")); err != nil {
		t.Fatal(err)
	}
	fh, err := newSpool(mem)
	if err != nil {
		t.Logf("refused: %v", err) // what SafeDir would do
		return
	}
	defer fh.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fh.Fd()))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	if strings.HasPrefix(real, outside) {
		t.Errorf("import spool created outside the memory directory, through the .memctl/cache link: %s", real)
	}
}
