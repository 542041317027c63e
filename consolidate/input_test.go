package consolidate

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFutureDateDoesNotPin: an entry written by hand with a date
// in the future counts as dated now, so a later update supersedes it
// instead of being archived as "older".
func TestFutureDateDoesNotPin(t *testing.T) {
	for _, date := range []string{"9999-01-01", "2026-02-02", "2026-01-05"} {
		t.Run(date, func(t *testing.T) {
			mem := strings.Replace(baseMemory, "(user · 2026-01-05)", "(user · "+date+")", 1)
			m := loadMem(t, map[string]string{"MEMORY.md": mem})
			p := compute(t, m, cand("Example code uses Python 3.12; no Python 2 syntax", "preference", testNow.Add(-time.Hour)))
			main := string(p.Files["MEMORY.md"])
			if !strings.Contains(main, "superseded by pref-002") {
				t.Fatalf("the update did not supersede pref-001 (dated %s):\nops %v\n%s", date, p.Ops, main)
			}
			if i := strings.Index(main, "[pref-002]"); i < 0 || i > strings.Index(main, "# Archive") {
				t.Errorf("pref-002 is not live:\n%s", main)
			}
		})
	}
}

// TestQueuedFutureDateHeld: a queue file dated beyond now + 1
// day (written by hand, or by an older memctl) is held as invalid, never
// applied.
func TestQueuedFutureDateHeld(t *testing.T) {
	for _, d := range []time.Time{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), testNow.Add(49 * time.Hour)} {
		m := loadMem(t, map[string]string{"MEMORY.md": baseMemory})
		p := compute(t, m, cand("The report API has high P99 latency", "fact", d))
		if len(p.Files) != 0 || len(p.Consumed) != 0 || len(p.Held) != 1 || p.Held[0].Kind != HoldInvalid || !strings.Contains(p.Held[0].Reason, "created_at") {
			t.Errorf("%v: files %d consumed %v held %+v", d, len(p.Files), p.Consumed, p.Held)
		}
	}
}

// TestRejectReasonLimit: a reason over 1000 bytes is refused
// before anything is written; a multi-line one is kept on one line.
func TestRejectReasonLimit(t *testing.T) {
	mem := strings.Replace(baseMemory, "## Pending confirmation\n", "## Pending confirmation\n- [note-900] Pending note (test · 2026-01-05 · pending user confirmation)\n", 1)
	dir := newRepo(t, mem, "")
	h := head(t, dir)
	before := readFile(t, dir, "MEMORY.md")
	for _, reason := range []string{strings.Repeat("x", 1001), strings.Repeat("€", 400), "bad\x00byte"} {
		if _, err := Reject(context.Background(), open(t, dir), "note-900", reason, testNow); err == nil {
			t.Errorf("reason of %d bytes accepted", len(reason))
		}
	}
	if readFile(t, dir, "MEMORY.md") != before || head(t, dir) != h {
		t.Fatal("a refused reject changed the memory")
	}
	if _, err := Reject(context.Background(), open(t, dir), "note-900", "line one\nline two", testNow); err != nil {
		t.Fatal(err)
	}
	if main := readFile(t, dir, "MEMORY.md"); !strings.Contains(main, "rejected 2026-02-01: line one line two") {
		t.Fatalf("%s", main)
	}
}
