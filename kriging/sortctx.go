package kriging

import (
	"context"
	"slices"
)

// sortCancelled is the value sortContext's comparison panics with to
// abandon a sort.
type sortCancelled struct{}

// sortContext sorts s by cmp as slices.SortFunc does, checking ctx every
// 2¹⁶ comparisons: when ctx is done it abandons the sort (s is left
// permuted) and returns ctx's error, so that sorting a million data stops
// within milliseconds of a cancel.
func sortContext[E any](ctx context.Context, s []E, cmp func(a, b E) int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(sortCancelled); !ok {
				panic(r)
			}
			err = ctx.Err()
		}
	}()
	n := 0
	slices.SortFunc(s, func(a, b E) int {
		if n++; n&(1<<16-1) == 0 && ctx.Err() != nil {
			panic(sortCancelled{})
		}
		return cmp(a, b)
	})
	return nil
}
