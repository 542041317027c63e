package mdmem

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUsageLogRotation: the log rotates at maxUsageLogBytes into
// inject.log.1, stays bounded, and ReadUsageLog still returns the records
// of both files in order.
func TestUsageLogRotation(t *testing.T) {
	dir := t.TempDir()
	defer func(old int64) { maxUsageLogBytes = old }(maxUsageLogBytes)
	maxUsageLogBytes = 1000
	for i := 0; i < 60; i++ {
		if err := AppendUsageLog(dir, UsageRecord{Kind: UsageUsed, Time: time.Unix(int64(i), 0).UTC(), IDs: []string{fmt.Sprintf("dec-%03d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, filepath.FromSlash(InjectLogPath))
	for _, name := range []string{p, p + ".1"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxUsageLogBytes+200 {
			t.Errorf("%s is %d bytes, over the rotation size", name, fi.Size())
		}
	}
	recs, bad, err := ReadUsageLog(dir)
	if err != nil || bad != 0 || len(recs) == 0 || len(recs) >= 60 {
		t.Fatalf("ReadUsageLog: %d records, %d bad, %v", len(recs), bad, err)
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
