package report

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/geostat-engine/geostat/geostat"
)

// tracker reports the progress of all phases of Compute as one count.
type tracker struct {
	mu       sync.Mutex
	done     int
	total    int
	progress func(done, total int)
}

func (t *tracker) step() {
	if t.progress == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock() // also when progress panics
	t.done++
	t.progress(t.done, t.total)
}

// parallelFor runs work(i) for i in [0, n) on geostat.Workers(ctx) goroutines. Each
// unit writes its own results by index, so the output does not depend on the
// number of goroutines or the order of completion. It stops early and
// returns the context's error when the context is cancelled, and a
// *geostat.PanicError when a unit panicked (the others stop).
func parallelFor(ctx context.Context, n int, t *tracker, work func(i int)) error {
	workers := min(geostat.Workers(ctx), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var panics geostat.Panics
	var stopped atomic.Bool
	for range workers {
		wg.Go(func() {
			defer panics.Recover(func() { stopped.Store(true) })
			for ctx.Err() == nil && !stopped.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				work(i)
				t.step()
			}
		})
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return ctx.Err()
}
