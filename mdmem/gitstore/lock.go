package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/memctl/memctl/mdmem/atomicfile"
)

// ErrLocked is matched (errors.Is) by the *LockedError Lock returns when
// another process holds memctl's repository lock.
var ErrLocked = errors.New("memory repository is locked")

// LockedError reports who holds memctl's repository lock. Fields are zero
// when the holder could not be identified.
type LockedError struct {
	PID   int
	Host  string
	Since time.Time
}

// Error implements error.
func (e *LockedError) Error() string {
	if e.PID == 0 {
		return "memory repository is locked by another process"
	}
	return fmt.Sprintf("memory repository is locked by pid %d on %s since %s",
		e.PID, e.Host, e.Since.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

type lockInfo struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

func (r *Repo) lockPath() string     { return filepath.Join(r.gitDir, "memctl.lock") }
func (r *Repo) lockInfoPath() string { return filepath.Join(r.gitDir, "memctl.lock.info") }

// Lock takes memctl's repository-wide exclusive lock (an flock on
// <gitdir>/memctl.lock, which is never deleted; the kernel releases it when
// the holder dies). It waits up to wait (0 = try once) with backoff,
// honouring ctx. On failure it returns a *LockedError (errors.Is ErrLocked)
// describing the holder. The returned unlock function releases the lock; it
// is safe to call more than once.
func (r *Repo) Lock(ctx context.Context, wait time.Duration) (unlock func() error, err error) {
	if r.held.Load() != nil {
		return nil, errors.New("git: Lock called twice on the same Repo")
	}
	fl := flock.New(r.lockPath())
	deadline := time.Now().Add(wait)
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("git: lock %s: %w", fl.Path(), err)
		}
		if ok {
			break
		}
		if !time.Now().Before(deadline) {
			_ = fl.Close()
			return nil, r.lockedError()
		}
		// short, jittered polls: flock has no wait queue, so long sleeps
		// would let other waiters starve this one
		d := time.Duration(2+mrand.IntN(8)+min(i, 10)*2) * time.Millisecond
		if rem := time.Until(deadline); d > rem {
			d = rem
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = fl.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	host, _ := os.Hostname()
	info, _ := json.Marshal(lockInfo{PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	// Best effort: the info only improves the waiter's error message.
	_ = atomicfile.WriteFile(ctx, r.lockInfoPath(), info, 0o600)
	r.held.Store(fl)
	released := false
	return func() error {
		if released {
			return nil
		}
		released = true
		r.held.Store(nil)
		err := fl.Unlock()
		if cerr := fl.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

func (r *Repo) lockedError() error {
	e := &LockedError{}
	b, err := os.ReadFile(r.lockInfoPath())
	if err == nil {
		var li lockInfo
		if json.Unmarshal(b, &li) == nil {
			e.PID, e.Host, e.Since = li.PID, li.Host, li.Since
		}
	}
	return e
}

// withLock runs fn holding memctl's lock, taking it (waiting up to wait)
// unless this Repo already holds it.
func (r *Repo) withLock(ctx context.Context, wait time.Duration, fn func() error) error {
	if r.held.Load() != nil {
		return fn()
	}
	unlock, err := r.Lock(ctx, wait)
	if err != nil {
		return err
	}
	err = fn()
	if uerr := unlock(); err == nil {
		err = uerr
	}
	return err
}
