package geostat

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkers(t *testing.T) {
	ctx := context.Background()
	all := runtime.GOMAXPROCS(0)
	assert.Equal(t, all, Workers(ctx))
	assert.Equal(t, 1, Workers(WithWorkers(ctx, 1)))
	assert.Equal(t, all, Workers(WithWorkers(ctx, all+5)), "never above GOMAXPROCS")
	assert.Equal(t, all, Workers(WithWorkers(ctx, 0)))
}

// TestForChunks checks against a count per item that every item is done
// exactly once in chunks that do not depend on the number of goroutines,
// that progress ends at the total, and that a cancelled context stops the
// run with its error.
func TestForChunks(t *testing.T) {
	ctx := context.Background()
	const total, chunk = 1003, 10
	for _, workers := range []int{1, 3, 8} {
		hits := make([]int, total)
		var bounds [][2]int
		var mu sync.Mutex
		last := 0
		n, err := ForChunks(ctx, total, workers, chunk, func(done, all int) {
			assert.Equal(t, total, all)
			assert.Greater(t, done, last)
			last = done
		}, func(w int) func(lo, hi int) {
			assert.Less(t, w, workers)
			return func(lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i]++
				}
				mu.Lock()
				bounds = append(bounds, [2]int{lo, hi})
				mu.Unlock()
			}
		})
		require.NoError(t, err)
		assert.Equal(t, total, n)
		assert.Equal(t, total, last)
		for i, h := range hits {
			require.Equal(t, 1, h, "item %d with %d workers", i, workers)
		}
		require.Len(t, bounds, (total+chunk-1)/chunk)
		for _, b := range bounds {
			assert.Zero(t, b[0]%chunk, "chunk start %d", b[0])
			assert.Equal(t, min(b[0]+chunk, total), b[1])
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	n, err := ForChunks(cancelled, total, 2, chunk, nil, func(int) func(lo, hi int) {
		return func(lo, hi int) {}
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, n, total)
}

// TestForChunksPanic checks that a panic in a chunk, in start or in
// progress comes back from ForChunks as a *PanicError with the value and
// the stack of the panicking goroutine instead of crashing the process, and
// that the other goroutines stop claiming chunks.
// slowChunk makes a chunk take 1 ms, so that the goroutines that did not
// panic cannot claim all 10,000 chunks (at least 3 s on three goroutines)
// before the panic stops them, however late the scheduler runs the
// goroutine that panics.
func slowChunk() { time.Sleep(time.Millisecond) }

func TestForChunksPanic(t *testing.T) {
	ctx := context.Background()
	const total = 10000
	for name, c := range map[string]struct {
		start    func(w int) func(lo, hi int)
		progress func(done, total int)
	}{
		"chunk": {start: func(int) func(lo, hi int) {
			return func(lo, hi int) {
				if lo == 40 {
					var s []int
					_ = s[lo] // index out of range
				}
				slowChunk()
			}
		}},
		"start": {start: func(w int) func(lo, hi int) {
			if w == 1 {
				panic("start failed")
			}
			return func(lo, hi int) { slowChunk() }
		}},
		"progress": {start: func(int) func(lo, hi int) { return func(lo, hi int) {} },
			progress: func(done, total int) { panic("progress failed") }},
	} {
		t.Run(name, func(t *testing.T) {
			var n int
			var err error
			require.NotPanics(t, func() { n, err = ForChunks(ctx, total, 4, 1, c.progress, c.start) })
			require.Error(t, err)
			var pe *PanicError
			require.ErrorAs(t, err, &pe)
			assert.NotNil(t, pe.Value)
			assert.Contains(t, string(pe.Stack), "geostat.ForChunks", "the stack of the goroutine that panicked")
			assert.NotContains(t, err.Error(), "goroutine", "the message leaves the stack out")
			assert.Less(t, n, total, "the other goroutines stopped claiming chunks")
		})
	}
}
