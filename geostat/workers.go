package geostat

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

type workersKey struct{}

// WithWorkers returns a context that bounds the goroutines a library call
// computes with to n (n ≤ 0 removes the bound). The worker uses it for its
// -threads flag; results never depend on the number of goroutines.
func WithWorkers(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, workersKey{}, n)
}

// Workers returns the number of goroutines a parallel computation under ctx
// may use: runtime.GOMAXPROCS(0), lowered to the bound of WithWorkers.
func Workers(ctx context.Context) int {
	w := runtime.GOMAXPROCS(0)
	if ctx != nil {
		if n, ok := ctx.Value(workersKey{}).(int); ok && n > 0 && n < w {
			w = n
		}
	}
	return w
}

// ForChunks runs a computation over the items 0..total−1 split into chunks
// of chunk items (chunk ≥ 1), which workers goroutines (workers ≥ 1, e.g.
// min(Workers(ctx), chunks)) claim in turn through an atomic counter.
// Goroutine w (0 ≤ w < workers) first calls start(w) for its work function,
// so that it owns its state (a searcher, buffers, accumulators), then calls
// it on each chunk [lo, hi) it claims, until no chunk is left or ctx is
// cancelled. The chunks do not depend on workers, so a computation whose
// chunks are independent gives the same result on any number of goroutines.
// progress, when not nil, gets the items done and total after each chunk,
// from one goroutine at a time.
//
// It returns when every goroutine has returned: the number of items done
// and, when ctx stopped it before every chunk was done, ctx.Err(). A panic
// in a goroutine (in start, work or progress) does not crash the process:
// the other goroutines stop claiming chunks and ForChunks returns a
// *PanicError holding the first panic's value and stack. It panics if the
// goroutines end without covering every item while ctx is not cancelled (a
// bug, never a user error).
func ForChunks(ctx context.Context, total, workers, chunk int, progress func(done, total int), start func(w int) func(lo, hi int)) (int, error) {
	var next, finished atomic.Int64
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	var panics Panics
	var stopped atomic.Bool
	stop := func() { stopped.Store(true) }
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.Recover(stop)
			work := start(w)
			for ctx.Err() == nil && !stopped.Load() {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= total {
					return
				}
				hi := min(lo+chunk, total)
				work(lo, hi)
				finished.Add(int64(hi - lo))
				if progress != nil {
					func() {
						mu.Lock()
						defer mu.Unlock() // also when progress panics
						done += hi - lo
						progress(done, total)
					}()
				}
			}
		}()
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return int(finished.Load()), fmt.Errorf("geostat: a parallel computation panicked: %w", err)
	}
	if n := int(finished.Load()); n != total {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		panic("geostat: workers finished without covering every item")
	}
	return total, nil
}
