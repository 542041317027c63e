package inject

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLogRotation: the log rotates at maxLogBytes into inject.log.1, stays
// bounded, and ReadLog still returns the records of both files in order.
func TestLogRotation(t *testing.T) {
	dir := t.TempDir()
	defer func(old int64) { maxLogBytes = old }(maxLogBytes)
	maxLogBytes = 1000
	for i := 0; i < 60; i++ {
		if err := AppendLog(dir, LogRecord{Kind: "used", Time: time.Unix(int64(i), 0).UTC(), IDs: []string{fmt.Sprintf("dec-%03d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, filepath.FromSlash(LogFile))
	for _, name := range []string{p, p + ".1"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxLogBytes+200 {
			t.Errorf("%s is %d bytes, over the rotation size", name, fi.Size())
		}
	}
	recs, bad, err := ReadLog(dir)
	if err != nil || bad != 0 || len(recs) == 0 || len(recs) >= 60 {
		t.Fatalf("ReadLog: %d records, %d bad, %v", len(recs), bad, err)
	}
	if last := recs[len(recs)-1]; last.IDs[0] != "dec-059" {
		t.Errorf("last record %v", last.IDs)
	}
	for i := 1; i < len(recs); i++ {
		if !recs[i].Time.After(recs[i-1].Time) {
			t.Fatalf("records out of order at %d", i)
		}
	}
}
