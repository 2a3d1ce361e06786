package neighbor

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
)

// bruteIDW is the oracle of Index.IDW: the brute-force neighbours of the
// oracle scan, weights 1/h^power summed directly (Σ w z / Σ w), and the mean
// of the samples at distance 0 when there are some.
func bruteIDW(o *oracle, values []float64, power float64, x, y, z float64) float64 {
	idx, dist := o.search(x, y, z)
	if len(idx) == 0 {
		return math.NaN()
	}
	var zs, zn float64
	for j, i := range idx {
		if dist[j] == 0 {
			zs += values[i]
			zn++
		}
	}
	if zn > 0 {
		return zs / zn
	}
	var num, den float64
	for j, i := range idx {
		w := 1 / math.Pow(dist[j], power)
		num += w * values[i]
		den += w
	}
	return num / den
}

func TestIDWMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	coords, holes := drillholes(rng, 60, 30)
	values := make([]float64, len(holes))
	for i := range values {
		values[i] = 5 + rng.NormFloat64()
		if i%23 == 0 {
			values[i] = math.NaN()
		}
	}
	g, err := grid.New([3]float64{-100, -100, 0}, [3]int{16, 16, 5}, [3]float64{70, 70, 30}, testRotations[1])
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	// Some targets exactly at samples (one of them without a value).
	for k := 0; k < 20; k++ {
		i := (k * 37) % len(holes)
		targets = append(targets, coords[3*i], coords[3*i+1], coords[3*i+2])
	}
	nt := len(targets) / 3
	for _, c := range []struct {
		p     Params
		power float64
	}{
		{Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[2]), MaxSamples: 12, MinSamples: 2}, 2},
		{Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[2]), MaxSamples: 16}, 1},
		{Params{Ellipsoid: ellipsoid(250, 250, 60, testRotations[0]), MaxSamples: 8}, 3.5},
		{Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: 12, MaxPerOctant: 2, MaxPerHole: 3}, 0.7},
	} {
		ix, err := NewIndex(coords, values, holes, c.p)
		require.NoError(t, err)
		o := newOracle(coords, values, holes, c.p, ix.Origin())
		run := func(procs int) []float64 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			out := make([]float64, nt)
			require.NoError(t, ix.IDW(context.Background(), values, c.power, targets, out, nil))
			return out
		}
		out1, out3 := run(1), run(3)
		empty := 0
		for q := 0; q < nt; q++ {
			require.Equal(t, math.Float64bits(out1[q]), math.Float64bits(out3[q]), "target %d", q)
			want := bruteIDW(o, values, c.power, targets[3*q], targets[3*q+1], targets[3*q+2])
			if math.IsNaN(want) {
				require.True(t, math.IsNaN(out1[q]), "target %d: %v, want no value", q, out1[q])
				empty++
				continue
			}
			require.InDelta(t, want, out1[q], 1e-12*math.Abs(want), "target %d", q)
		}
		assert.Less(t, empty, nt)
		// A target at a sample with a value that is among its neighbours
		// reproduces it bit for bit (a single coincident sample).
		for k := 0; k < 20; k++ {
			i := (k * 37) % len(holes)
			q := nt - 20 + k
			if math.IsNaN(values[i]) {
				continue
			}
			idx, _ := o.search(coords[3*i], coords[3*i+1], coords[3*i+2])
			if len(idx) > 0 && int(idx[0]) == i {
				require.Equal(t, values[i], out1[q], "target at sample %d", i)
			}
		}
	}
}

func TestIDWCoincidentSamples(t *testing.T) {
	// Two samples at the origin, one 10 m East: a target at the origin gets
	// the mean of the two coincident ones; a target at (10, 0, 0) reproduces
	// the third exactly.
	coords := []float64{0, 0, 0, 0, 0, 0, 10, 0, 0}
	values := []float64{1, 4, 7.3}
	p := Params{Ellipsoid: ellipsoid(100, 100, 100, testRotations[0]), MaxSamples: 3}
	ix, err := NewIndex(coords, values, nil, p)
	require.NoError(t, err)
	out := make([]float64, 3)
	require.NoError(t, ix.IDW(context.Background(), values, 2, []float64{0, 0, 0, 10, 0, 0, 5, 0, 0}, out, nil))
	assert.Equal(t, 2.5, out[0])
	assert.Equal(t, 7.3, out[1])
	// Midway: distances 5, 5, 5 (in units of the 100 m range) → equal weights.
	assert.InDelta(t, (1+4+7.3)/3, out[2], 1e-15)

	lambda := IDWWeights(nil, []float64{0.5, 0.25, 1}, 2)
	// 1/h²: 4, 16, 1 → 4/21, 16/21, 1/21.
	assert.InDeltaSlice(t, []float64{4.0 / 21, 16.0 / 21, 1.0 / 21}, lambda, 1e-15)
	// Tiny distances do not overflow.
	lambda = IDWWeights(lambda, []float64{1e-200, 2e-200}, 4)
	assert.InDeltaSlice(t, []float64{16.0 / 17, 1.0 / 17}, lambda, 1e-15)
}

func TestIDWErrors(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0}
	values := []float64{1, 2}
	ix, err := NewIndex(coords, values, nil, Params{Ellipsoid: ellipsoid(10, 10, 10, testRotations[0]), MaxSamples: 2})
	require.NoError(t, err)
	out := make([]float64, 1)
	for _, power := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		err := ix.IDW(context.Background(), values, power, []float64{0, 0, 0}, out, nil)
		require.ErrorContains(t, err, "power")
	}
	require.ErrorContains(t, ix.IDW(context.Background(), values[:1], 2, []float64{0, 0, 0}, out, nil), "values")
	require.ErrorContains(t, ix.IDW(context.Background(), values, 2, []float64{0, 0}, out, nil), "targets")
	require.ErrorContains(t, ix.IDW(context.Background(), values, 2, []float64{0, 0, 0, 1, 1, 1}, out, nil), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, ix.IDW(ctx, values, 2, []float64{0, 0, 0}, out, nil), context.Canceled)
}
