package tasks

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyedLocks checks that writers of one key take turns, that other keys
// do not wait, that a waiter whose context ends gives up, and that released
// keys are forgotten.
func TestKeyedLocks(t *testing.T) {
	k := newKeyedLocks()
	ctx := context.Background()
	unlockA, err := k.lock(ctx, "a")
	require.NoError(t, err)
	unlockB, err := k.lock(ctx, "b")
	require.NoError(t, err, "another key does not wait")
	unlockB()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = k.lock(cancelled, "a")
	assert.ErrorIs(t, err, context.Canceled)

	// Writers of "a" take turns: each increments a counter it holds alone.
	var inside, maxInside, done int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := k.lock(ctx, "a")
			if err != nil {
				return
			}
			mu.Lock()
			inside++
			maxInside = max(maxInside, inside)
			mu.Unlock()
			mu.Lock()
			inside--
			done++
			mu.Unlock()
			unlock()
		}()
	}
	unlockA() // the goroutines start once the first holder leaves
	wg.Wait()
	assert.Equal(t, 8, done)
	assert.Equal(t, 1, maxInside)
	k.mu.Lock()
	assert.Empty(t, k.held, "released keys are forgotten")
	k.mu.Unlock()

	var none *keyedLocks
	unlock, err := none.lock(ctx, "x")
	require.NoError(t, err, "a nil lock set does not lock")
	unlock()
}
