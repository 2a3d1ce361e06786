package ties_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

// dataset is a random point set with heavily tied integer values (0..9),
// a few NaN, and an anisotropic rotated search.
func dataset(n int, seed uint64) (values, coords []float64, p *neighbor.Params) {
	rng := rand.New(rand.NewPCG(seed, 7))
	values = make([]float64, n)
	coords = make([]float64, 3*n)
	for i := range values {
		x, y, z := rng.Float64()*100, rng.Float64()*100, rng.Float64()*20
		coords[3*i], coords[3*i+1], coords[3*i+2] = x, y, z
		// A trend so that local means carry information, rounded to ties.
		values[i] = math.Floor(x/10 + rng.Float64()*2)
		if i%97 == 0 {
			values[i] = math.NaN()
		}
	}
	values[5] = 0.25 // a few untied values
	values[6] = 3.75
	p = &neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 30, SemiMajor: 15, Minor: 8, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10, Pitch: 20}},
		MaxSamples: 8,
		MinSamples: 2,
	}
	return values, coords, p
}

// bruteMeans is the oracle of the local means: for each datum, the mean of
// the values of the up-to-MaxSamples nearest other non-NaN data inside the
// ellipsoid by direct distance computation to every datum, in (distance,
// original index) order; the datum's value when fewer than max(1, MinSamples).
func bruteMeans(t *testing.T, values, coords []float64, p *neighbor.Params, id []int64) []float64 {
	a, err := p.Ellipsoid.Anisotropy()
	require.NoError(t, err)
	n := len(values)
	means := make([]float64, n)
	type cand struct {
		r  float64
		id int64
		v  float64
	}
	var cs []cand
	for i := range n {
		if math.IsNaN(values[i]) {
			means[i] = math.NaN()
			continue
		}
		cs = cs[:0]
		for j := range n {
			if j == i || math.IsNaN(values[j]) {
				continue
			}
			r := a.Norm(coords[3*j]-coords[3*i], coords[3*j+1]-coords[3*i+1], coords[3*j+2]-coords[3*i+2])
			if r*r <= 1+neighbor.RadiusTolerance {
				cs = append(cs, cand{r, id[j], values[j]})
			}
		}
		slices.SortFunc(cs, func(x, y cand) int {
			if c := cmp.Compare(x.r, y.r); c != 0 {
				return c
			}
			return cmp.Compare(x.id, y.id)
		})
		cs = cs[:min(len(cs), p.MaxSamples)]
		if len(cs) < max(1, p.MinSamples) {
			means[i] = values[i]
			continue
		}
		s := 0.0
		for _, c := range cs {
			s += c.v
		}
		means[i] = s / float64(len(cs))
	}
	return means
}

func identity(n int) []int64 {
	id := make([]int64, n)
	for i := range id {
		id[i] = int64(i)
	}
	return id
}

// oracleOrder returns the finite positions sorted by (value, local mean,
// key, original index): the order the output must be strictly increasing in.
func oracleOrder(values, means []float64, id []int64, seed uint64) []int {
	var pos []int
	for i, v := range values {
		if !math.IsNaN(v) {
			pos = append(pos, i)
		}
	}
	slices.SortFunc(pos, func(a, b int) int {
		if c := cmp.Compare(values[a], values[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(means[a], means[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(ties.Key(seed, id[a]), ties.Key(seed, id[b])); c != 0 {
			return c
		}
		return cmp.Compare(id[a], id[b])
	})
	return pos
}

// Oracle 8.1.10: the output is strictly increasing along the (value, local
// mean, key, index) order, each group is spaced exactly as section 6 step 5
// says, and its mean is the tied value.
func TestBreakOracle(t *testing.T) {
	values, coords, p := dataset(3000, 1)
	const seed = 38239342
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: seed})
	require.NoError(t, err)

	id := identity(len(values))
	means := bruteMeans(t, values, coords, p, id)
	order := oracleOrder(values, means, id, seed)
	for q := 1; q < len(order); q++ {
		require.Less(t, out[order[q-1]], out[order[q]], "not strictly increasing at sorted rank %d", q)
	}

	// Distinct tied values 0..9 (+ the two untied ones): the spacing formula.
	distinct := []float64{}
	for _, i := range order {
		if len(distinct) == 0 || distinct[len(distinct)-1] != values[i] {
			distinct = append(distinct, values[i])
		}
	}
	for g, v := range distinct {
		var members []int
		for _, i := range order {
			if values[i] == v {
				members = append(members, i)
			}
		}
		k := len(members)
		if k == 1 {
			assert.Equal(t, math.Float64bits(v), math.Float64bits(out[members[0]]), "untied value %g changed", v)
			continue
		}
		delta := math.Inf(1)
		if g > 0 {
			delta = v - distinct[g-1]
		}
		if g < len(distinct)-1 {
			delta = math.Min(delta, distinct[g+1]-v)
		}
		d := 0.5 * delta / float64(k)
		sum := 0.0
		for q, i := range members {
			want := v + (float64(q+1)-float64(k+1)/2)*d
			require.InDelta(t, want, out[i], 1e-12, "group %g member %d", v, q)
			require.Greater(t, out[i], v-delta/4)
			require.Less(t, out[i], v+delta/4)
			sum += out[i]
		}
		assert.InDelta(t, v, sum/float64(k), 1e-12, "mean of group %g", v)
	}
	for i, v := range values {
		if math.IsNaN(v) {
			assert.True(t, math.IsNaN(out[i]), "NaN at %d", i)
		}
	}
}

// Without a neighbourhood the members of a group are ordered by the random
// key, then the index.
func TestBreakRandomOnly(t *testing.T) {
	values := []float64{2, 1, 2, 2, 3, 1, 2, math.NaN(), 5}
	const seed = 11
	out, err := ties.Break(context.Background(), values, nil, nil, ties.Options{Seed: seed})
	require.NoError(t, err)
	id := identity(len(values))
	order := oracleOrder(values, values, id, seed) // neutral means
	for q := 1; q < len(order); q++ {
		require.Less(t, out[order[q-1]], out[order[q]])
	}
	assert.True(t, math.IsNaN(out[7]))
	assert.Equal(t, 5.0, out[8])
	// Group 2 (k = 4, Δ = 1): 2 ± 1.5δ, ±0.5δ with δ = 0.125.
	got := []float64{out[0], out[2], out[3], out[6]}
	slices.Sort(got)
	assert.InDeltaSlice(t, []float64{2 - 0.1875, 2 - 0.0625, 2 + 0.0625, 2 + 0.1875}, got, 1e-15)
}

// Local means decide the order where they differ: a hand-built line of data
// where the tied zeros sit next to neighbours of known values.
func TestBreakLocalMeansDecide(t *testing.T) {
	// x positions; search radius 1.5 along x, 1 neighbour.
	//   i:      0    1    2    3    4    5
	//   x:      0   10   20   30   40   50
	//   value:  7    1    1    1    3    9     (1 is tied three times)
	// Nearest other datum at distance 10 ≤ range 15: ambiguous ones take the
	// lower index (distance ties): datum 1's neighbours are 0 (7) and 2 (1)
	// at equal distance → 0 → m = 7; datum 2: 1 and 3 → 1 → m = 1;
	// datum 3: 2 and 4 → 2 → m = 1.  With MaxSamples 2: means 4, 1, 2.
	values := []float64{7, 1, 1, 1, 3, 9}
	coords := make([]float64, 18)
	for i := range 6 {
		coords[3*i] = 10 * float64(i)
	}
	p := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 15, SemiMajor: 15, Minor: 15}, MaxSamples: 2}
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		out, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: seed})
		require.NoError(t, err)
		// m = (4, 1, 2) for data 1, 2, 3 → order 2 < 3 < 1 whatever the seed.
		assert.Less(t, out[2], out[3], "seed %d", seed)
		assert.Less(t, out[3], out[1], "seed %d", seed)
		// Δ = min(1 − (−∞), 3 − 1) = 2, δ = 0.5·2/3.
		d := 1.0 / 3
		assert.InDelta(t, 1-d, out[2], 1e-15)
		assert.InDelta(t, 1, out[3], 1e-15)
		assert.InDelta(t, 1+d, out[1], 1e-15)
		assert.Equal(t, []float64{7, 3, 9}, []float64{out[0], out[4], out[5]})
	}

	// With min_samples 3 no datum finds enough neighbours: means are neutral
	// and the order is the random key's.
	p.MinSamples = 2
	p.Ellipsoid = geostat.Ellipsoid{Major: 5, SemiMajor: 5, Minor: 5}
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: 9})
	require.NoError(t, err)
	order := oracleOrder(values, values, identity(6), 9)
	for q := 1; q < len(order); q++ {
		require.Less(t, out[order[q-1]], out[order[q]])
	}
}

// A duplicate location is another datum: it is a neighbour at distance 0,
// and the datum itself is excluded by index, not by distance.
func TestBreakDuplicateLocation(t *testing.T) {
	values := []float64{5, 5, 0, 10}
	coords := []float64{0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}
	// Datum 0 at x=0 has datum 3 (10) at distance 0; datum 1 at x=1 has
	// datum 2 (0) at distance 0. One neighbour each.
	p := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 5, SemiMajor: 5, Minor: 5}, MaxSamples: 1}
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{})
	require.NoError(t, err)
	assert.Less(t, out[1], out[0])
}

func TestBreakTieFreeUnchanged(t *testing.T) {
	values := []float64{3, -0.0, math.NaN(), 1e-300, -7.5, math.Inf(1), 2.5, math.Inf(-1), 42}
	coords := make([]float64, 3*len(values))
	for i := range values {
		coords[3*i] = float64(i)
	}
	p := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 5, SemiMajor: 5, Minor: 5}, MaxSamples: 4}
	for _, pp := range []*neighbor.Params{nil, p} {
		out, err := ties.Break(context.Background(), values, coords, pp, ties.Options{Seed: 3})
		require.NoError(t, err)
		for i := range values {
			assert.Equal(t, math.Float64bits(values[i]), math.Float64bits(out[i]), "value %d", i)
		}
	}
}

// Infinite values are never spread; tied finite values next to them use the
// finite side only.
func TestBreakInfinities(t *testing.T) {
	values := []float64{math.Inf(1), math.Inf(1), 4, 4, 2}
	out, err := ties.Break(context.Background(), values, nil, nil, ties.Options{})
	require.NoError(t, err)
	assert.True(t, math.IsInf(out[0], 1) && math.IsInf(out[1], 1))
	// Δ = 4 − 2 = 2, δ = 0.5: 4 ± 0.25.
	got := []float64{out[2], out[3]}
	slices.Sort(got)
	assert.Equal(t, []float64{3.75, 4.25}, got)
}

// All data equal: Δ = max(|v|, 1)·1e-6.
func TestBreakAllEqual(t *testing.T) {
	values := []float64{100, 100, 100}
	out, err := ties.Break(context.Background(), values, nil, nil, ties.Options{})
	require.NoError(t, err)
	got := slices.Clone(out)
	slices.Sort(got)
	d := 0.5 * 100e-6 / 3
	assert.InDeltaSlice(t, []float64{100 - d, 100, 100 + d}, got, 1e-12)
}

func TestBreakOneSided(t *testing.T) {
	zero := 0.0
	values := []float64{0, 0, 0, 0, 0.4, 0.4, 1}
	out, err := ties.Break(context.Background(), values, nil, nil, ties.Options{Seed: 5, LowerBound: &zero})
	require.NoError(t, err)
	zeros := []float64{out[0], out[1], out[2], out[3]}
	slices.Sort(zeros)
	// z_q = 0 + (q − 1)·0.5·0.4/4 = 0, 0.05, 0.1, 0.15.
	assert.InDeltaSlice(t, []float64{0, 0.05, 0.1, 0.15}, zeros, 1e-15)
	assert.Equal(t, 0.0, zeros[0])
	// The next group is two-sided: Δ = min(0.4, 0.6) = 0.4, δ = 0.1.
	pair := []float64{out[4], out[5]}
	slices.Sort(pair)
	assert.InDeltaSlice(t, []float64{0.35, 0.45}, pair, 1e-15)

	// A global minimum above the bound keeps the symmetric spacing when it fits.
	values = []float64{1, 1, 3}
	out, err = ties.Break(context.Background(), values, nil, nil, ties.Options{LowerBound: &zero})
	require.NoError(t, err)
	pair = []float64{out[0], out[1]}
	slices.Sort(pair)
	assert.InDeltaSlice(t, []float64{0.75, 1.25}, pair, 1e-15)

	// ... and the one-sided one when it does not (bound 0.9 > 0.75).
	b := 0.9
	out, err = ties.Break(context.Background(), values, nil, nil, ties.Options{LowerBound: &b})
	require.NoError(t, err)
	pair = []float64{out[0], out[1]}
	slices.Sort(pair)
	assert.InDeltaSlice(t, []float64{1, 1.5}, pair, 1e-15)

	// Values below the bound are rejected.
	_, err = ties.Break(context.Background(), []float64{-1, 0}, nil, nil, ties.Options{LowerBound: &zero})
	require.ErrorContains(t, err, "lower bound")
}

// The order of distinct values never changes, on a large mixed data set.
func TestBreakKeepsOrderOfDistinctValues(t *testing.T) {
	values, coords, p := dataset(5000, 2)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range values {
		if i%3 == 0 {
			values[i] += rng.Float64() * 1e-6 // near-ties that are not ties
		}
	}
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{Seed: 1})
	require.NoError(t, err)
	pos := make([]int, 0, len(values))
	for i, v := range values {
		if !math.IsNaN(v) {
			pos = append(pos, i)
		}
	}
	slices.SortFunc(pos, func(a, b int) int { return cmp.Compare(values[a], values[b]) })
	// Every output of a value is below every output of the next distinct value.
	prevMax := math.Inf(-1)
	for lo := 0; lo < len(pos); {
		hi := lo
		gMin, gMax := math.Inf(1), math.Inf(-1)
		for hi < len(pos) && values[pos[hi]] == values[pos[lo]] {
			gMin, gMax = math.Min(gMin, out[pos[hi]]), math.Max(gMax, out[pos[hi]])
			hi++
		}
		require.Less(t, prevMax, gMin, "value %g", values[pos[lo]])
		prevMax = gMax
		lo = hi
	}
}

// Identical output for GOMAXPROCS 1, 2 and 16, and for any permutation of the
// (value, coordinates, original index) triples.
func TestBreakDeterministic(t *testing.T) {
	values, coords, p := dataset(6000, 4) // > 2 chunks of tied data
	opts := ties.Options{Seed: 77}
	prev := runtime.GOMAXPROCS(1)
	out1, err := ties.Break(context.Background(), values, coords, p, opts)
	require.NoError(t, err)
	for _, procs := range []int{2, 16} {
		runtime.GOMAXPROCS(procs)
		out, err := ties.Break(context.Background(), values, coords, p, opts)
		require.NoError(t, err)
		requireBits(t, out1, out)
	}
	runtime.GOMAXPROCS(prev)

	// Permute the triples; the original index travels with its datum.
	n := len(values)
	perm := rand.New(rand.NewPCG(5, 5)).Perm(n)
	pv := make([]float64, n)
	pc := make([]float64, 3*n)
	pid := make([]int64, n)
	for k, i := range perm {
		pv[k] = values[i]
		copy(pc[3*k:3*k+3], coords[3*i:3*i+3])
		pid[k] = int64(i)
	}
	popts := opts
	popts.OriginalIndex = pid
	outp, err := ties.Break(context.Background(), pv, pc, p, popts)
	require.NoError(t, err)
	back := make([]float64, n)
	for k, i := range perm {
		back[i] = outp[k]
	}
	requireBits(t, out1, back)

	// Without a neighbourhood too.
	r1, err := ties.Break(context.Background(), values, nil, nil, opts)
	require.NoError(t, err)
	rp, err := ties.Break(context.Background(), pv, nil, nil, popts)
	require.NoError(t, err)
	for k, i := range perm {
		back[i] = rp[k]
	}
	requireBits(t, r1, back)
}

func requireBits(t *testing.T, want, got []float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "value %d: %v vs %v", i, want[i], got[i])
	}
}

// The same seed gives identical output; another seed reorders ties that
// local means leave equal.
func TestBreakSeed(t *testing.T) {
	values := make([]float64, 200)
	for i := range values {
		values[i] = float64(i % 4)
	}
	a, err := ties.Break(context.Background(), values, nil, nil, ties.Options{Seed: 1})
	require.NoError(t, err)
	b, err := ties.Break(context.Background(), values, nil, nil, ties.Options{Seed: 1})
	require.NoError(t, err)
	requireBits(t, a, b)
	c, err := ties.Break(context.Background(), values, nil, nil, ties.Options{Seed: 2})
	require.NoError(t, err)
	moved := 0
	for i := range a {
		if a[i] != c[i] {
			moved++
		}
	}
	// 200 values in 4 groups of 50: a new random order leaves almost none in place.
	assert.Greater(t, moved, 150)
	// The set of values of each group is the same, only the order changed.
	sa, sc := slices.Clone(a), slices.Clone(c)
	slices.Sort(sa)
	slices.Sort(sc)
	requireBits(t, sa, sc)
}

func TestKeyBijective(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range int64(100000) {
		k := ties.Key(123, i)
		require.False(t, seen[k])
		seen[k] = true
	}
	assert.NotEqual(t, ties.Key(1, 0), ties.Key(2, 0))
}

func TestSpreadULPGuard(t *testing.T) {
	// A gap of 4 ulps: δ = 0.5·4ulp/3 is below one ulp; consecutive floats are used.
	v := 1.0
	hi := v
	for range 4 {
		hi = math.Nextafter(hi, 2)
	}
	lo := math.Nextafter(v, 0)
	lo = math.Nextafter(lo, 0)
	lo = math.Nextafter(lo, 0)
	z := make([]float64, 3)
	require.NoError(t, ties.Spread(z, v, lo, hi, math.Inf(-1)))
	assert.Equal(t, []float64{math.Nextafter(v, 0), v, math.Nextafter(v, 2)}, z)

	// Five values between adjacent floats cannot be separated.
	z = make([]float64, 5)
	err := ties.Spread(z, v, math.Nextafter(v, 0), math.Nextafter(v, 2), math.Inf(-1))
	require.Error(t, err)

	// The group of a Break that cannot be separated is reported.
	vals := []float64{1, 1, 1, 1, 1, math.Nextafter(1, 2)}
	_, err = ties.Break(context.Background(), vals, nil, nil, ties.Options{})
	require.ErrorContains(t, err, "ties: values")
}

func TestBreakErrors(t *testing.T) {
	ctx := context.Background()
	p := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 5, SemiMajor: 5, Minor: 5}, MaxSamples: 4}
	_, err := ties.Break(ctx, []float64{1, 1}, []float64{0, 0, 0}, p, ties.Options{})
	require.ErrorContains(t, err, "coords")
	_, err = ties.Break(ctx, []float64{1, 1}, []float64{0, 0, 0, math.NaN(), 0, 0}, p, ties.Options{})
	require.ErrorContains(t, err, "coords")
	bad := *p
	bad.MaxSamples = 0
	_, err = ties.Break(ctx, []float64{1, 1}, make([]float64, 6), &bad, ties.Options{})
	require.ErrorContains(t, err, "max_samples")
	_, err = ties.Break(ctx, []float64{1, 1}, nil, nil, ties.Options{OriginalIndex: []int64{3, 3}})
	require.ErrorContains(t, err, "original_index")
	_, err = ties.Break(ctx, []float64{1, 1}, nil, nil, ties.Options{OriginalIndex: []int64{3}})
	require.ErrorContains(t, err, "original_index")
	holes := *p
	holes.MaxPerHole = 1
	_, err = ties.Break(ctx, []float64{1, 1}, make([]float64, 6), &holes, ties.Options{})
	require.ErrorContains(t, err, "holes")
	inf := math.Inf(-1)
	_, err = ties.Break(ctx, []float64{1, 1}, nil, nil, ties.Options{LowerBound: &inf})
	require.ErrorContains(t, err, "lower_bound")
}

// NaN data are neither tied nor neighbours (the index leaves them out); a
// NaN position's coordinates are not checked.
func TestBreakNaNNotNeighbour(t *testing.T) {
	values := []float64{1, 1, math.NaN(), 0, 2}
	coords := []float64{0, 0, 0, 10, 0, 0, math.NaN(), 0, 0, 1, 0, 0, 11, 0, 0}
	p := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 1.5, SemiMajor: 1.5, Minor: 1.5}, MaxSamples: 3}
	out, err := ties.Break(context.Background(), values, coords, p, ties.Options{})
	require.NoError(t, err)
	assert.True(t, math.IsNaN(out[2]))
	assert.Less(t, out[0], out[1]) // m = 0 vs m = 2
}

func TestBreakProgressAndCancel(t *testing.T) {
	values, coords, p := dataset(5000, 6)
	last, calls := 0, 0
	_, err := ties.Break(context.Background(), values, coords, p, ties.Options{Progress: func(done, total int) {
		require.GreaterOrEqual(t, done, last)
		require.LessOrEqual(t, done, total)
		last = done
		calls++
	}})
	require.NoError(t, err)
	assert.Positive(t, calls)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ties.Break(ctx, values, coords, p, ties.Options{})
	require.True(t, errors.Is(err, context.Canceled), "err = %v", err)
}
