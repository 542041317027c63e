package mdmem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDecodeJSONLinesParallelIsTheLoop: the parallel reader gives fn what
// DecodeJSONLines and a prep call give, line by line and in order, over
// batches of valid, invalid, blank, too long and prep-refused lines.
func TestDecodeJSONLinesParallelIsTheLoop(t *testing.T) {
	var b strings.Builder
	b.WriteString("\ufeff")
	for i := range 3000 {
		switch i % 7 {
		case 0:
			b.WriteString("\n")
		case 1:
			fmt.Fprintf(&b, "{\"content\":\"bad %d\",\"category\":\"nope\"}\n", i)
		case 2:
			b.WriteString("{not json\n")
		case 3:
			fmt.Fprintf(&b, "{\"content\":\"%s\",\"category\":\"fact\"}\n", strings.Repeat("x", 300))
		default:
			fmt.Fprintf(&b, "{\"content\":\"Line %d is fine\",\"category\":\"fact\",\"topic\":\"t%d\"}\n", i, i%5)
		}
	}
	input := b.String()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prep := func(c *Candidate) error { return c.Normalize(now, 1000, nil) }
	type got struct {
		line int
		c    string
		err  string
	}
	record := func(out *[]got) func(int, *Candidate, error) error {
		return func(line int, c *Candidate, err error) error {
			g := got{line: line}
			if c != nil {
				g.c = fmt.Sprintf("%+v", *c)
			}
			if err != nil {
				g.err = err.Error()
			}
			*out = append(*out, g)
			return nil
		}
	}
	var want, have []got
	must(t, DecodeJSONLines(strings.NewReader(input), 200, func(line int, c *Candidate, err error) error {
		if err == nil {
			if err = prep(c); err != nil {
				c = nil
			}
		}
		return record(&want)(line, c, err)
	}))
	must(t, DecodeJSONLinesParallel(context.Background(), strings.NewReader(input), 200, prep, record(&have)))
	if len(want) != len(have) {
		t.Fatalf("%d lines from the loop, %d in parallel", len(want), len(have))
	}
	for i := range want {
		if want[i] != have[i] {
			t.Fatalf("line %d: loop %+v, parallel %+v", i, want[i], have[i])
		}
	}
}

// TestInOrderStopsAtUsesError: an error of use ends the pipeline with
// that error, after which next is not called; batches reach use in order.
func TestInOrderStopsAtUsesError(t *testing.T) {
	var calls, done atomic.Int64
	stop := errors.New("stop")
	n := 0
	err := inOrder(context.Background(), func() ([]int, error) {
		calls.Add(1)
		n++
		return []int{n}, nil
	}, func(b []int) { b[0] *= 10 }, func(b []int) error {
		if got := done.Add(1) * 10; int64(b[0]) != got {
			t.Errorf("batch %d arrived as the %d-th", b[0], got/10)
		}
		if b[0] == 500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("inOrder = %v, want the error of use", err)
	}
	after := calls.Load()
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != after {
		t.Errorf("next called after inOrder returned")
	}
}
