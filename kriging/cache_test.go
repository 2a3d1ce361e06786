package kriging

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/internal/linalg"
)

// TestFactorCacheMatchesFresh checks that a Solver reusing cached
// factorisations returns bit for bit what a fresh Solver (empty cache)
// returns for the same target, over grid rows visited twice, for simple and
// ordinary kriging, points and blocks, an intrinsic model and systems that
// need a ridge; and that the cache finds sets met one row earlier.
func TestFactorCacheMatchesFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	data := randomPoints(rng, 150, 200, 200, 40)
	// A Gaussian model without nugget on a dense vertical string of data
	// makes near-singular systems (regularised).
	for i := 0; i < 30; i++ {
		data = append(data, 100, 100, float64(i)*0.5)
	}
	linear := mustVariogram(t, 0, geostat.Structure{Type: geostat.Linear, Contribution: 0.01, Ellipsoid: iso(1)})
	gauss := mustVariogram(t, 0, geostat.Structure{Type: geostat.Gaussian, Contribution: 1, Ellipsoid: iso(60)})
	g, err := grid.New([3]float64{40, 40, 0}, [3]int{12, 12, 2}, [3]float64{10, 10, 10}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	targets = append(targets, targets...) // every set again, much later
	cases := []struct {
		name  string
		p     Params
		ridge bool
	}{
		{"simple", Params{Variogram: twoStructure(t, 0.05), Search: wide(80, 12)}, false},
		{"ordinary", Params{Variogram: twoStructure(t, 0.05), Method: Ordinary, Search: wide(80, 12)}, false},
		{"block", Params{Variogram: twoStructure(t, 0.05), Method: Ordinary, Search: wide(80, 12),
			Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, CellSize: g.CellSize}, false},
		{"intrinsic", Params{Variogram: linear, Method: Ordinary, Search: wide(80, 12)}, false},
		{"ridge", Params{Variogram: gauss, Search: wide(80, 12)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := mustKriger(t, data, nil, c.p)
			s := k.NewSolver()
			reusedNotLast := 0
			var last []int32
			for q := 0; q < len(targets)/3; q++ {
				x, y, z := targets[3*q], targets[3*q+1], targets[3*q+2]
				got, ok := s.Solve(x, y, z)
				want, okFresh := k.NewSolver().Solve(x, y, z)
				require.Equal(t, okFresh, ok)
				require.False(t, want.Reused)
				require.Equal(t, want.Neighbors, got.Neighbors)
				for i := range want.SubWeights {
					require.Equal(t, math.Float64bits(want.SubWeights[i]), math.Float64bits(got.SubWeights[i]), "target %d", q)
				}
				for i := range want.Weights {
					require.Equal(t, math.Float64bits(want.Weights[i]), math.Float64bits(got.Weights[i]), "target %d", q)
				}
				require.Equal(t, math.Float64bits(want.Variance), math.Float64bits(got.Variance))
				require.Equal(t, math.Float64bits(want.Lagrange), math.Float64bits(got.Lagrange))
				if got.Reused && !slices.Equal(last, got.Neighbors) {
					reusedNotLast++
				}
				last = append(last[:0], got.Neighbors...)
			}
			s.Flush()
			// The second pass finds the first pass's sets in the cache.
			assert.Greater(t, reusedNotLast, 0)
			if c.ridge {
				assert.Greater(t, k.Stats().Regularised, int64(0))
			}
		})
	}
}

// TestFactorCacheReplacement checks the cache itself: lookups find exactly
// the resident sets through collisions and replacements, at most capacity
// sets are resident, and a set hit since the clock hand passed gets a second
// chance.
func TestFactorCacheReplacement(t *testing.T) {
	const capacity = 5
	c := newFactorCache(capacity, func(f *cholFactor) {
		f.nb = make([]int32, 0, 4)
		f.l = make([]float64, linalg.PackedLen(4))
	})
	require.Len(t, c.slots, capacity)
	put := func(nb []int32) {
		v, f := c.victim()
		f.nb = append(f.nb[:0], nb...)
		f.l[0] = float64(nb[0]) // a recognisable payload
		c.insert(v, hashSet(nb))
	}
	get := func(nb []int32) *cholFactor {
		_, f := c.lookup(hashSet(nb), func(f *cholFactor) bool { return slices.Equal(f.nb, nb) })
		return f
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var recent [][]int32
	for trial := 0; trial < 2000; trial++ {
		nb := []int32{int32(rng.IntN(12)), int32(12 + rng.IntN(3))}
		if f := get(nb); f != nil {
			require.Equal(t, nb, f.nb)
			require.Equal(t, float64(nb[0]), f.l[0])
			continue
		}
		put(nb)
		recent = append(recent, nb)
		// Every used slot is found by its set, and only used slots are.
		used := 0
		for i := range c.slots {
			if s := &c.slots[i]; s.used {
				used++
				require.Same(t, &s.f, get(s.f.nb))
			}
		}
		require.LessOrEqual(t, used, capacity)
		require.Same(t, get(nb), get(slices.Clone(nb)))
	}
	// Hash chains: with more sets than buckets, some chains hold several.
	require.Less(t, len(c.heads), len(recent))

	// Second chance: A, B, C, D, E fill the cache; a hit on A spares it
	// when F needs a slot, B goes instead.
	c.reset()
	sets := [][]int32{{1}, {2}, {3}, {4}, {5}}
	for _, s := range sets {
		put(s)
	}
	require.NotNil(t, get(sets[0]))
	put([]int32{6})
	assert.NotNil(t, get(sets[0]))
	assert.Nil(t, get(sets[1]))
	assert.NotNil(t, get([]int32{6}))
	// reset forgets everything.
	c.reset()
	for _, s := range sets {
		assert.Nil(t, get(s))
	}
}

// TestFactorCacheBudget fills every entry of the caches of a Solver and of
// Estimate's slider for 400-neighbour systems, asked for 1000 entries, and
// measures the bytes the runtime allocated for them: at most the 8 MiB
// budget (plus 1 % for the allocator's size classes), and more than half of
// it (the budget, not the request, bounds the cache). Small systems get the
// entries asked for.
func TestFactorCacheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const m = 400
	data := randomPoints(rng, m, 100, 100, 100)
	values := make([]float64, m)
	p := Params{Variogram: spherical(t, 0, 1, 50), Method: Ordinary, Search: wide(1000, m), FactorCache: 1000}
	k := mustKriger(t, data, values, p)
	allocated := func(fill func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fill()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	s, e := k.NewSolver(), k.newSlider()
	for name, fill := range map[string]func(){
		"solver": func() {
			for range s.cache.slots {
				s.cache.victim()
			}
		},
		"slider": func() {
			for range e.cache.slots {
				e.cache.victim()
			}
		},
	} {
		bytes := allocated(fill)
		assert.LessOrEqual(t, bytes, uint64(factorCacheBudget*101/100), name)
		assert.Greater(t, bytes, uint64(factorCacheBudget/2), name)
	}
	small := mustKriger(t, data[:3*40], values[:40], Params{Variogram: spherical(t, 0, 1, 50), Search: wide(1000, 32)})
	assert.Len(t, small.NewSolver().cache.slots, DefaultFactorCache)
	assert.Len(t, small.newSlider().cache.slots, DefaultFactorCache)
	_, err := New(randomPoints(rng, 10, 1, 1, 1), nil, Params{Variogram: spherical(t, 0, 1, 5), Search: wide(5, 4), FactorCache: -1})
	require.ErrorContains(t, err, "factor_cache")
}

// TestSpatialOrder checks that the merged data are put in an order that
// keeps runs of consecutive data spatially compact (a permutation of the
// input, mapped by MergedIndex), and that data listed along drill holes
// keep their input order.
func TestSpatialOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	data := randomPoints(rng, 1000, 1000, 1000, 1000)
	k := mustKriger(t, data, nil, Params{Variogram: spherical(t, 0, 1, 100), Search: wide(100, 8)})
	merged := k.MergedIndex()
	order := make([]int32, len(merged)) // merged position → input datum
	seen := make([]bool, len(merged))
	coords, _ := k.Data()
	for i, m := range merged {
		require.False(t, seen[m], "merged index %d used twice", m)
		seen[m] = true
		order[m] = int32(i)
		require.Equal(t, data[3*i:3*i+3], coords[3*m:3*m+3])
	}
	// Runs of 8 consecutive points are compact: their mean extent is far
	// below that of runs in input (random) order.
	extent := func(order []int32) float64 {
		sum := 0.0
		for l := 0; l+8 <= len(order); l++ {
			for a := 0; a < 3; a++ {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, i := range order[l : l+8] {
					lo, hi = math.Min(lo, data[3*int(i)+a]), math.Max(hi, data[3*int(i)+a])
				}
				sum += hi - lo
			}
		}
		return sum
	}
	identity := make([]int32, len(order))
	for i := range identity {
		identity[i] = int32(i)
	}
	assert.Less(t, extent(order), 0.5*extent(identity))

	// Data already listed along lines (drill holes) keep their order.
	var holes []float64
	for h := 0; h < 20; h++ {
		x, y := rng.Float64()*1000, rng.Float64()*1000
		for s := 0; s < 30; s++ {
			holes = append(holes, x, y, 300-10*float64(s))
		}
	}
	k = mustKriger(t, holes, nil, Params{Variogram: spherical(t, 0, 1, 100), Search: wide(100, 8)})
	order, err := k.cov.spatialOrder(context.Background())
	require.NoError(t, err)
	assert.Nil(t, order)
	for i, m := range k.MergedIndex() {
		require.Equal(t, int32(i), m)
	}
	assert.True(t, k.Stats().Table)
}
