package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// status acquires one slot of key and returns 200 or the refusal's status.
func status(t *testing.T, l *limiter, key string) int {
	t.Helper()
	release, p := l.acquire(t.Context(), key)
	if p != nil {
		require.Nil(t, release)
		return p.Status
	}
	require.NotNil(t, release)
	return http.StatusOK
}

// TestLimiterShares: with 64 slots and 16 per caller, four callers holding
// 16 each do not keep a fifth out: it is admitted up to its share of 12
// (the four hold 16 slots beyond their new shares, so the total may pass
// 64) and the four get 429 until they are back under theirs. A sixth that
// arrives at once is admitted until the hard ceiling of 80, then 503.
func TestLimiterShares(t *testing.T) {
	l := newLimiter(64, 16)
	l.wait = 0
	busy := []string{"a", "b", "c", "d"}
	for _, k := range busy {
		for range 16 {
			require.Equal(t, http.StatusOK, status(t, l, k))
		}
		assert.Equal(t, http.StatusTooManyRequests, status(t, l, k), "over its own limit")
	}
	for i := range 12 {
		require.Equal(t, http.StatusOK, status(t, l, "e"), "the fifth caller's request %d", i)
	}
	assert.Equal(t, 76, l.total)
	assert.Equal(t, http.StatusTooManyRequests, status(t, l, "e"), "the fifth caller at its share")
	for _, k := range busy {
		assert.Equal(t, http.StatusTooManyRequests, status(t, l, k), "a busy caller over its new share")
	}
	for range 4 {
		require.Equal(t, http.StatusOK, status(t, l, "f"))
	}
	assert.Equal(t, l.ceiling, l.total)
	release, p := l.acquire(t.Context(), "f")
	require.Nil(t, release)
	assert.Equal(t, http.StatusServiceUnavailable, p.Status, "at the hard ceiling")
	assert.Contains(t, p.Detail, "in flight")
}

// TestLimiterWaits: a caller at its limit waits for one of its slots to be
// given back and is then admitted; a wait ends with the request's context
// (429) and releasing twice gives back one slot.
func TestLimiterWaits(t *testing.T) {
	l := newLimiter(4, 2)
	l.wait = time.Minute
	var releases []func()
	for range 2 {
		release, p := l.acquire(t.Context(), "a")
		require.Nil(t, p)
		releases = append(releases, release)
	}
	admitted := make(chan func(), 1)
	go func() {
		release, _ := l.acquire(t.Context(), "a")
		admitted <- release
	}()
	// The waiter holds nothing: another caller is served meanwhile.
	assert.Equal(t, http.StatusOK, status(t, l, "b"))
	releases[0]()
	releases[0]() // idempotent
	require.NotNil(t, <-admitted, "admitted once a slot was given back")
	assert.Equal(t, 2, l.inFlight["a"])
	assert.Equal(t, 3, l.total)

	// a holds two again: its next request waits until its context ends.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		_, p := l.acquire(ctx, "a")
		done <- p.Status
	}()
	cancel()
	assert.Equal(t, http.StatusTooManyRequests, <-done)
}
