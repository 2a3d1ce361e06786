package declus

import (
	"cmp"
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
	"github.com/geostat-engine/geostat/neighbor"
)

// bruteInfluence is the oracle: for every location, scan all samples, keep
// those within anisotropic distance 1 (geostat.Anisotropy.Norm), sort by
// (distance, index), take MaxSamples, drop the location below MinSamples,
// and add 1/n (KNN) or h^−p/Σh^−p (IDW; equal shares of the samples at
// h = 0) to each; normalise to sum 1.
func bruteInfluence(t *testing.T, coords, locs []float64, p neighbor.Params, power float64) []float64 {
	a, err := p.Ellipsoid.Anisotropy()
	require.NoError(t, err)
	n := len(coords) / 3
	infl := make([]float64, n)
	type cand struct {
		h float64
		i int
	}
	var cs []cand
	for g := 0; g < len(locs)/3; g++ {
		cs = cs[:0]
		for i := 0; i < n; i++ {
			h := a.Norm(coords[3*i]-locs[3*g], coords[3*i+1]-locs[3*g+1], coords[3*i+2]-locs[3*g+2])
			if h <= 1 {
				cs = append(cs, cand{h, i})
			}
		}
		slices.SortFunc(cs, func(x, y cand) int {
			if c := cmp.Compare(x.h, y.h); c != 0 {
				return c
			}
			return x.i - y.i
		})
		cs = cs[:min(len(cs), p.MaxSamples)]
		if len(cs) == 0 || len(cs) < p.MinSamples {
			continue
		}
		if power == 0 {
			for _, c := range cs {
				infl[c.i] += 1 / float64(len(cs))
			}
			continue
		}
		if cs[0].h == 0 {
			m := 0
			for _, c := range cs {
				if c.h == 0 {
					m++
				}
			}
			for _, c := range cs[:m] {
				infl[c.i] += 1 / float64(m)
			}
			continue
		}
		den := 0.0
		for _, c := range cs {
			den += math.Pow(c.h, -power)
		}
		for _, c := range cs {
			infl[c.i] += math.Pow(c.h, -power) / den
		}
	}
	sum := 0.0
	for _, v := range infl {
		sum += v
	}
	for i := range infl {
		infl[i] /= sum
	}
	return infl
}

// clustered returns n samples in a 1000 × 1000 × 100 box, 70 % of them in
// three tight clusters, and the values with a higher mean in the clusters.
func clustered(rng *rand.Rand, n int) (coords, values []float64) {
	centres := [][3]float64{{200, 300, 50}, {700, 650, 40}, {450, 800, 60}}
	for i := 0; i < n; i++ {
		var x, y, z, v float64
		if rng.Float64() < 0.7 {
			c := centres[rng.IntN(3)]
			x, y, z = c[0]+rng.NormFloat64()*30, c[1]+rng.NormFloat64()*30, c[2]+rng.NormFloat64()*10
			v = 3 + rng.NormFloat64()
		} else {
			x, y, z = rng.Float64()*1000, rng.Float64()*1000, rng.Float64()*100
			v = 1 + rng.NormFloat64()*0.5
		}
		coords = append(coords, x, y, z)
		values = append(values, v)
	}
	return coords, values
}

func TestInfluenceMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	coords, _ := clustered(rng, 400)
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{20, 20, 4}, [3]float64{50, 50, 25}, geostat.Rotation{})
	require.NoError(t, err)
	locs := g.CellCentres(nil)
	// A few locations exactly at samples: their unit goes to that sample.
	for k := 0; k < 10; k++ {
		i := 17 * k
		locs = append(locs, coords[3*i], coords[3*i+1], coords[3*i+2])
	}
	for _, c := range []struct {
		p     neighbor.Params
		power float64
	}{
		{neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 40, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}, MaxSamples: 8}, 0},
		{neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 150, SemiMajor: 100, Minor: 40, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}, MaxSamples: 8, MinSamples: 3}, 2},
		{neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 200, SemiMajor: 200, Minor: 60}, MaxSamples: 1}, 0},
		{neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 200, SemiMajor: 200, Minor: 60}, MaxSamples: 16}, 1.3},
	} {
		ix, err := neighbor.NewIndex(coords, nil, nil, c.p)
		require.NoError(t, err)
		want := bruteInfluence(t, coords, locs, c.p, c.power)
		run := func(procs int) *Result {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			var r *Result
			if c.power == 0 {
				r, err = KNN(context.Background(), ix, locs, nil)
			} else {
				r, err = IDW(context.Background(), ix, locs, c.power, nil)
			}
			require.NoError(t, err)
			return r
		}
		r1, r3 := run(1), run(3)
		sum, zeros := 0.0, 0
		for i := range want {
			require.Equal(t, math.Float64bits(r1.Weights[i]), math.Float64bits(r3.Weights[i]), "sample %d", i)
			require.InDelta(t, want[i], r1.Weights[i], 1e-12, "sample %d", i)
			sum += r1.Weights[i]
			if want[i] == 0 {
				zeros++
			}
		}
		assert.InDelta(t, 1, sum, 1e-12)
		assert.Equal(t, zeros, r1.Unreached)
		assert.Positive(t, r1.Locations)
	}
}

func TestInfluenceDeclustersTheMean(t *testing.T) {
	// The clustered samples have the higher values: the weighted mean must
	// fall well below the naive one.
	rng := rand.New(rand.NewPCG(7, 8))
	coords, values := clustered(rng, 300)
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{40, 40, 4}, [3]float64{25, 25, 25}, geostat.Rotation{})
	require.NoError(t, err)
	p := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 300, SemiMajor: 300, Minor: 100}, MaxSamples: 4}
	ix, err := neighbor.NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	last, calls := 0, 0
	progress := func(done, total int) {
		require.Equal(t, g.NumCells(), total)
		require.Greater(t, done, last)
		last = done
		calls++
	}
	r, err := IDW(context.Background(), ix, g.CellCentres(nil), 2, progress)
	require.NoError(t, err)
	assert.Equal(t, g.NumCells(), last)
	assert.Greater(t, calls, 1)
	naive, decl := 0.0, 0.0
	for i, v := range values {
		naive += v / float64(len(values))
		decl += r.Weights[i] * v
	}
	assert.Less(t, decl, naive-0.5, "declustered %v, naive %v", decl, naive)
}

func TestInfluenceErrors(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0}
	ix, err := neighbor.NewIndex(coords, nil, nil, neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 10, Minor: 10}, MaxSamples: 2})
	require.NoError(t, err)
	for _, power := range []float64{0, -2, math.NaN(), math.Inf(1)} {
		_, err := IDW(context.Background(), ix, []float64{0, 0, 0}, power, nil)
		require.ErrorContains(t, err, "power")
	}
	_, err = KNN(context.Background(), ix, []float64{0, 0}, nil)
	require.ErrorContains(t, err, "locations")
	_, err = KNN(context.Background(), ix, []float64{1000, 0, 0}, nil)
	require.ErrorContains(t, err, "no evaluation location found any sample")
	_, err = KNN(context.Background(), ix, nil, nil)
	require.ErrorContains(t, err, "no evaluation location")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = KNN(ctx, ix, []float64{0, 0, 0}, nil)
	require.ErrorIs(t, err, context.Canceled)
}
