package mdmem

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// jsonRoundTrip is what the spool gave back when it was JSON Lines.
func jsonRoundTrip(t *testing.T, c *Candidate) *Candidate {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out := &Candidate{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// spoolCandidates are candidates with every field set, with none, and
// random ones, including invalid UTF-8 and instants in other zones.
func spoolCandidates() []*Candidate {
	conf := 0.75
	negZero := 0.0
	negZero = -negZero
	at := time.Date(2026, 12, 4, 23, 5, 6, 123456789, time.FixedZone("", 5*3600+30*60))
	out := []*Candidate{
		{},
		{ID: "q-1", Content: "Everything set <b>&</b> \u2028 é", Category: "note", Source: "bench",
			CreatedAt: at, UpdatedAt: at.UTC(), Scope: Strings{"a", ""}, Confidence: &conf,
			Refs: Strings{"r"}, Topic: "t", Tags: Strings{"x", "y"}, QueuedAt: at.Local(),
			ExpiresAt: at.Add(time.Hour), AllowForgotten: true, Seen: SeenTyped},
		{Content: "bad \xff\xfe utf-8", Scope: Strings{}, Tags: Strings{"\xc3"}, Confidence: &negZero},
		{CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600))}, // IsZero in UTC only
	}
	rng := rand.New(rand.NewPCG(25, 2))
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(4) > 0 {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		return string(b)
	}
	list := func() Strings {
		if rng.IntN(3) == 0 {
			return nil
		}
		l := make(Strings, rng.IntN(4))
		for i := range l {
			l[i] = word()
		}
		return l
	}
	when := func() time.Time {
		if rng.IntN(3) == 0 {
			return time.Time{}
		}
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(time.FixedZone("", (rng.IntN(48)-24)*1800))
	}
	for range 2000 {
		c := &Candidate{ID: word(), Content: word(), Category: word(), Source: word(), CreatedAt: when(),
			UpdatedAt: when(), Scope: list(), Refs: list(), Topic: word(), Tags: list(), QueuedAt: when(),
			ExpiresAt: when(), AllowForgotten: rng.IntN(2) == 0, Seen: word()}
		if rng.IntN(2) == 0 {
			f := rng.NormFloat64()
			c.Confidence = &f
		}
		out = append(out, c)
	}
	return out
}

func TestSpoolGivesBackWhatJSONLinesGaveBack(t *testing.T) {
	// A field the spool does not know would be lost between the passes.
	if n := reflect.TypeOf(Candidate{}).NumField(); n != 15 {
		t.Fatalf("Candidate has %d fields, the spool writes 15: add the new ones to SpoolWriter and SpoolReader", n)
	}
	cs := spoolCandidates()
	var buf bytes.Buffer
	w := NewSpoolWriter(&buf)
	for _, c := range cs {
		if err := w.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := NewSpoolReader(&buf)
	for i, c := range cs {
		got, err := r.Read()
		if err != nil || got == nil {
			t.Fatalf("candidate %d: %v, %v", i, got, err)
		}
		want := jsonRoundTrip(t, c)
		// Instants compare as JSON writes them: the same instant and offset.
		g, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(g, wj) {
			t.Fatalf("candidate %d:\n got %s\nwant %s", i, g, wj)
		}
		for _, p := range [][2]time.Time{{got.CreatedAt, want.CreatedAt}, {got.UpdatedAt, want.UpdatedAt}, {got.QueuedAt, want.QueuedAt}, {got.ExpiresAt, want.ExpiresAt}} {
			if !p[0].Equal(p[1]) || p[0].Location().String() != p[1].Location().String() || p[0].IsZero() != p[1].IsZero() {
				t.Fatalf("candidate %d: instant %v, JSON gave %v", i, p[0], p[1])
			}
		}
		got.CreatedAt, got.UpdatedAt, got.QueuedAt, got.ExpiresAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		want.CreatedAt, want.UpdatedAt, want.QueuedAt, want.ExpiresAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("candidate %d:\n got %#v\nwant %#v", i, got, want)
		}
	}
	if c, err := r.Read(); c != nil || err != nil {
		t.Fatalf("after the last candidate: %v, %v", c, err)
	}
}

func TestSpoolRefusesACutRecord(t *testing.T) {
	var buf bytes.Buffer
	w := NewSpoolWriter(&buf)
	if err := w.Write(spoolCandidates()[1]); err != nil {
		t.Fatal(err)
	}
	_ = w.Flush()
	data := buf.Bytes()
	for cut := 1; cut < len(data); cut++ {
		if c, err := NewSpoolReader(bytes.NewReader(data[:cut])).Read(); err == nil {
			t.Fatalf("a record cut at %d of %d bytes read as %v", cut, len(data), c)
		}
	}
}
