package mdmem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCandidateIDsKeepInputOrder: the candidates of one batch
// share a microsecond timestamp; the sequence in their ids makes the
// queue return them in input order. An id of the old format (no
// sequence) is still read, ordered by its time.
func TestCandidateIDsKeepInputOrder(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.UTC)
	var cands []*Candidate
	for i := 0; i < 40; i++ {
		c := &Candidate{Content: fmt.Sprintf("ordered note number %03d", i), Category: "note"}
		if err := c.Normalize(now, 4096, nil); err != nil {
			t.Fatal(err)
		}
		cands = append(cands, c)
	}
	ids, err := Enqueue(context.Background(), dir, cands, now)
	if err != nil {
		t.Fatal(err)
	}
	old := "c20260304T050607.000000-abcd1234" // before the batch, old format
	data := fmt.Sprintf(`{"id":%q,"content":"old format","category":"note"}`+"\n", old)
	if err := os.WriteFile(filepath.Join(dir, QueueDir, old+".json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadQueue(context.Background(), dir)
	if err != nil || len(bad) != 0 {
		t.Fatalf("err %v bad %v", err, bad)
	}
	if len(got) != len(ids)+1 || got[0].ID != old {
		t.Fatalf("got %d candidates, first %q", len(got), got[0].ID)
	}
	for i, c := range got[1:] {
		if c.ID != ids[i] || c.Content != fmt.Sprintf("ordered note number %03d", i) {
			t.Errorf("position %d: %s %q", i, c.ID, c.Content)
		}
	}
	for _, id := range []string{old, ids[0], NewCandidateID(now, maxBatch-1)} {
		if !validCandidateID(id) {
			t.Errorf("%q not valid", id)
		}
	}
}
