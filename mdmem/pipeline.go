package mdmem

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// inOrder runs a pipeline: next yields batches on a goroutine of its own
// (an empty batch or an error ends them), work runs on each batch on one
// of up to GOMAXPROCS goroutines, and use gets each worked batch on the
// caller's goroutine, in the order next yielded them. At most a few
// batches are in flight, so memory stays bounded. It returns the first
// error of next or use (work reports errors through the items); every
// goroutine has ended when it returns, so next is not called after.
// The result is what a loop of next, work and use gives: only the
// calls of work overlap.
func inOrder[T any](ctx context.Context, next func() ([]T, error), work func([]T), use func([]T) error) error {
	type job struct {
		items []T
		err   error
		done  chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel (deferred calls run last first)
	defer cancel()
	todo := make(chan *job, workers)
	order := make(chan *job, 2*workers)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(todo)
		defer close(order)
		for {
			items, err := next()
			j := &job{items: items, err: err, done: make(chan struct{})}
			last := err != nil || len(items) == 0
			if last {
				close(j.done)
			}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			if last {
				return
			}
			select {
			case todo <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range todo {
				work(j.items)
				close(j.done)
			}
		}()
	}
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if j.err != nil {
			return j.err
		}
		if len(j.items) == 0 {
			return nil
		}
		if err := use(j.items); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("mdmem: pipeline ended early")
}
