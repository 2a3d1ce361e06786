package kriging

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
)

// nextSet returns the neighbour set of trial in a sequence over data
// 0..99: by turns a fresh random set, the previous set prev with a few
// data swapped out, and prev shuffled.
func nextSet(rng *rand.Rand, trial int, prev []int32) []int32 {
	var set []int32
	switch trial % 3 {
	case 0: // fresh random set
		for _, i := range rng.Perm(100)[:rng.IntN(17)] {
			set = append(set, int32(i))
		}
	case 1: // the previous set with a few swapped out
		set = slices.Clone(prev)
		for k := 0; k < 3 && len(set) > 0; k++ {
			j := rng.IntN(len(set))
			c := int32(rng.IntN(100))
			if !slices.Contains(set, c) {
				set[j] = c
			}
		}
	case 2: // the previous set, shuffled
		set = slices.Clone(prev)
		rng.Shuffle(len(set), func(a, b int) { set[a], set[b] = set[b], set[a] })
	}
	return set
}

// TestCanonical checks the merge-based ordering of neighbour sets against a
// plain sort, over sequences of random, overlapping and repeated sets.
func TestCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	coords := randomPoints(rng, 100, 10, 10, 10)
	s := mustKriger(t, coords, nil, Params{Variogram: spherical(t, 0, 1, 5), Search: wide(5, 16)}).NewSolver()
	prev := []int32{}
	for trial := 0; trial < 2000; trial++ {
		set := nextSet(rng, trial, prev)
		s.canonical(set)
		want := append([]int32{}, set...)
		slices.Sort(want)
		require.Equal(t, want, append([]int32{}, s.nb...), "trial %d", trial)
		prev = set
	}
}

// TestTrack checks the marks and fresh lists of Estimate's slider (track)
// against set arithmetic over the same kind of sequences as TestCanonical,
// also across the wrap of the generation counter and after an empty set.
func TestTrack(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	coords := randomPoints(rng, 100, 10, 10, 10)
	k := mustKriger(t, coords, nil, Params{Variogram: spherical(t, 0, 1, 5), Search: wide(5, 16)})
	s := k.newSlider()
	prev := []int32{}
	wrapped := false
	for trial := 0; trial < 3000; trial++ {
		set := nextSet(rng, trial, prev)
		wrap := !wrapped && trial > 1000 && trial%3 == 2 && len(prev) >= 5
		if wrap {
			// As if the counter had run up to the wrap, which this call
			// meets: the previous set carries the previous call's marks.
			wrapped = true
			s.gen = math.MaxUint32 - 5
			for _, i := range prev {
				s.mark[i] = s.gen + 1
			}
		}
		h, same := s.track(set)
		if wrap {
			require.Less(t, s.gen, uint32(4), "the counter restarted")
		}
		var fresh []int32
		var hash uint64
		for _, i := range set {
			hash += k.setKeys[i]
			if !slices.Contains(prev, i) {
				fresh = append(fresh, i)
			}
		}
		require.Equal(t, hash, h, "trial %d", trial)
		require.Equal(t, len(fresh) == 0 && len(set) == len(prev), same, "trial %d", trial)
		require.Equal(t, fresh, append([]int32(nil), s.fresh...), "trial %d", trial)
		for i := int32(0); i < 100; i++ {
			in := slices.Contains(set, i)
			require.Equal(t, in && slices.Contains(prev, i), s.mark[i] == s.gen+1, "trial %d datum %d", trial, i)
			require.Equal(t, in && !slices.Contains(prev, i), s.mark[i] == s.gen+2, "trial %d datum %d", trial, i)
		}
		require.True(t, allMarked(set, s.mark, s.gen+1))
		prev = set
		if trial%500 == 499 { // as locate does for a target without neighbours
			s.nb = s.nb[:0]
			s.track(nil)
			prev = nil
		}
	}
}

// TestReuse checks that a repeated neighbour set reuses the factorisation
// with identical results, and the counters.
func TestReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	coords := randomPoints(rng, 50, 100, 100, 20)
	for _, m := range []Method{Simple, Ordinary} {
		k := mustKriger(t, coords, nil, Params{Variogram: twoStructure(t, 0.05), Method: m, Search: wide(1000, 10)})
		s := k.NewSolver()
		a, ok := s.Solve(50, 50, 10)
		require.True(t, ok)
		require.False(t, a.Reused)
		w := slices.Clone(a.Weights)
		v, mu := a.Variance, a.Lagrange
		b, ok := s.Solve(50, 50, 10)
		require.True(t, ok)
		require.True(t, b.Reused)
		require.Equal(t, w, b.Weights)
		require.Equal(t, v, b.Variance)
		require.Equal(t, mu, b.Lagrange)
		s.Flush()
		st := k.Stats()
		require.Equal(t, int64(2), st.Systems)
		require.Equal(t, int64(1), st.Reused)
		require.Equal(t, 0.5, st.ReuseRate())
	}
}

// TestNoAllocations checks that solving does not allocate in steady state.
func TestNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	coords := randomPoints(rng, 300, 100, 100, 20)
	values := make([]float64, 300)
	p := Params{Variogram: twoStructure(t, 0.05), Method: Ordinary, Search: wide(60, 16),
		Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, CellSize: [3]float64{5, 5, 2}}
	k := mustKriger(t, coords, values, p)
	s, e := k.NewSolver(), k.newSlider()
	targets := randomPoints(rng, 200, 100, 100, 20)
	out := Output{Estimate: make([]float64, 200), Variance: make([]float64, 200), Slope: make([]float64, 200)}
	for q := 0; q < 200; q++ { // warm up
		s.Solve(targets[3*q], targets[3*q+1], targets[3*q+2])
		e.estimateOne(targets, q, 200, &out)
	}
	q := 0
	allocs := testing.AllocsPerRun(400, func() {
		s.Solve(targets[3*q], targets[3*q+1], targets[3*q+2])
		e.estimateOne(targets, q, 200, &out)
		q = (q + 1) % 200
	})
	require.Zero(t, allocs)
}
