package cmd

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// logTimeEnv, set to 1, starts every line memctl prints with the time
// (RFC 3339, UTC): for output appended to a log file by a job
// (consolidate.log from schedule, hook.log from a hook's background
// extract), whose lines would otherwise carry no time.
const logTimeEnv = "MEMCTL_LOG_TIME"

// timedWriter starts each line written through it with the time.
type timedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	midLine bool
}

func newTimedWriter(w io.Writer, now func() time.Time) *timedWriter {
	return &timedWriter{w: w, now: now}
}

// Write writes p, with the time before each line it starts.
func (t *timedWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for rest := p; len(rest) > 0; {
		if !t.midLine {
			b.WriteString(t.now().UTC().Format(time.RFC3339) + " ")
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			b.Write(rest)
			t.midLine = true
			break
		}
		b.Write(rest[:i+1])
		rest, t.midLine = rest[i+1:], false
	}
	if _, err := t.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
