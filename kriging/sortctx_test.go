package kriging

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSortContext: uncancelled, sortContext sorts as slices.SortFunc does;
// cancelled, it returns the context's error; a panic of the comparison
// itself is not swallowed.
func TestSortContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := make([]int, 300_000)
	for i := range s {
		s[i] = rng.IntN(1000)
	}
	want := slices.Clone(s)
	slices.Sort(want)
	got := slices.Clone(s)
	require.NoError(t, sortContext(context.Background(), got, cmp.Compare[int]))
	assert.Equal(t, want, got)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = slices.Clone(s)
	assert.ErrorIs(t, sortContext(ctx, got, cmp.Compare[int]), context.Canceled)

	assert.PanicsWithValue(t, "bad comparison", func() {
		_ = sortContext(context.Background(), slices.Clone(s), func(a, b int) int { panic("bad comparison") })
	})
}
