package neighbor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/kyroy/kdtree"
	"github.com/kyroy/kdtree/points"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

func ellipsoid(major, semi, minor float64, rot geostat.Rotation) geostat.Ellipsoid {
	return geostat.Ellipsoid{Major: major, SemiMajor: semi, Minor: minor, Rotation: rot}
}

var testRotations = []geostat.Rotation{
	{},
	{DipAzimuth: 30, Dip: 20, Pitch: 10},
	{DipAzimuth: 124, Dip: 63.5, Pitch: 22.1},
	{DipAzimuth: 270, Dip: 135, Pitch: 300},
}

// checkAgainstOracle compares Search with the brute-force oracle on every
// target, exactly (indices and distances), and returns how many targets had
// no, some, and MaxSamples neighbours so callers can check the case was
// exercised.
func checkAgainstOracle(t *testing.T, coords, values []float64, holes []int32, p Params, targets []float64) (empty, partial, full int) {
	t.Helper()
	ix, err := NewIndex(coords, values, holes, p)
	require.NoError(t, err)
	o := newOracle(coords, values, holes, p, ix.Origin())
	s := ix.NewSearcher()
	for q := 0; q < len(targets)/3; q++ {
		x, y, z := targets[3*q], targets[3*q+1], targets[3*q+2]
		wantIdx, wantDist := o.search(x, y, z)
		idx, dist := s.Search(x, y, z)
		if len(wantIdx) == 0 {
			require.Empty(t, idx, "target %d", q)
			empty++
			continue
		}
		require.Equal(t, wantIdx, idx, "target %d", q)
		require.Equal(t, wantDist, dist, "target %d", q)
		if len(idx) == p.MaxSamples {
			full++
		} else {
			partial++
		}
	}
	return empty, partial, full
}

func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	size := [3]float64{1000, 1000, 1000}
	coords := uniformCloud(rng, 10000, size)
	// Targets in a box larger than the cloud, so some have no neighbours.
	targets := uniformCloud(rng, 1000, [3]float64{1400, 1400, 1400})
	for i := range targets {
		targets[i] -= 200
	}
	for _, rot := range testRotations {
		for _, k := range []int{1, 16, 60} {
			p := Params{Ellipsoid: ellipsoid(300, 200, 50, rot), MaxSamples: k}
			t.Run(fmt.Sprintf("rot%v/k%d", rot, k), func(t *testing.T) {
				empty, partial, full := checkAgainstOracle(t, coords, nil, nil, p, targets)
				assert.Positive(t, empty)
				assert.Positive(t, full)
				if k == 60 {
					assert.Positive(t, partial)
				}
			})
		}
	}
}

func TestStrongAnisotropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	coords := uniformCloud(rng, 10000, [3]float64{1000, 1000, 20})
	targets := uniformCloud(rng, 1000, [3]float64{1000, 1000, 20})
	for _, rot := range testRotations[:3] {
		p := Params{Ellipsoid: ellipsoid(500, 50, 5, rot), MaxSamples: 16}
		empty, partial, full := checkAgainstOracle(t, coords, nil, nil, p, targets)
		assert.Positive(t, full, "rotation %v", rot)
		t.Logf("rotation %v: %d empty, %d partial, %d full", rot, empty, partial, full)
	}
}

func TestDuplicateSources(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	unique := uniformCloud(rng, 500, [3]float64{100, 100, 100})
	// 20 copies of each point, at shuffled indices.
	n := 20 * 500
	perm := rng.Perm(n)
	coords := make([]float64, 3*n)
	for i, pi := range perm {
		copy(coords[3*pi:3*pi+3], unique[3*(i%500):3*(i%500)+3])
	}
	targets := make([]float64, 0, 3000)
	for q := 0; q < 500; q++ { // on duplicated points: 20 ties at distance 0
		targets = append(targets, unique[3*q:3*q+3]...)
	}
	targets = append(targets, uniformCloud(rng, 500, [3]float64{100, 100, 100})...)
	for _, rot := range testRotations[:3] {
		p := Params{Ellipsoid: ellipsoid(30, 20, 10, rot), MaxSamples: 16}
		_, _, full := checkAgainstOracle(t, coords, nil, nil, p, targets)
		assert.Positive(t, full)
	}
	// Constrained: ties at distance 0 all fall in octant 0, and copies share
	// a hole only when their indices agree modulo 7.
	holes := make([]int32, n)
	for i := range holes {
		holes[i] = int32(i % 7)
	}
	for _, p := range []Params{
		{Ellipsoid: ellipsoid(30, 20, 10, testRotations[1]), MaxSamples: 16, MaxPerOctant: 3},
		{Ellipsoid: ellipsoid(30, 20, 10, testRotations[2]), MaxSamples: 16, MaxPerOctant: 4, MaxPerHole: 3},
	} {
		_, _, full := checkAgainstOracle(t, coords, nil, holes, p, targets)
		assert.Positive(t, full)
	}
	// The 16 returned for a target on a duplicated point are its copies with
	// the lowest indices, at distance 0.
	ix, err := NewIndex(coords, nil, nil, Params{Ellipsoid: ellipsoid(30, 20, 10, geostat.Rotation{}), MaxSamples: 16})
	require.NoError(t, err)
	idx, dist := ix.NewSearcher().Search(unique[0], unique[1], unique[2])
	var copies []int32
	for i, pi := range perm {
		if i%500 == 0 {
			copies = append(copies, int32(pi))
		}
	}
	sort.Slice(copies, func(a, b int) bool { return copies[a] < copies[b] })
	assert.Equal(t, copies[:16], idx)
	assert.Equal(t, make([]float64, 16), dist)
}

func TestBoundaryIncluded(t *testing.T) {
	t.Run("exact", func(t *testing.T) {
		// Power-of-two ranges along the world axes: the six points are at
		// anisotropic distance exactly 1 and tie; the order is by index.
		coords := []float64{0, 0, 8, 2, 0, 0, 0, -4, 0, -2, 0, 0, 0, 4, 0, 0, 0, -8, 2, 0, 1e-4}
		p := Params{Ellipsoid: ellipsoid(2, 4, 8, geostat.Rotation{}), MaxSamples: 10}
		ix, err := NewIndex(coords, nil, nil, p)
		require.NoError(t, err)
		require.Equal(t, [3]float64{0, 0, 0}, ix.Origin())
		idx, dist := ix.NewSearcher().Search(0, 0, 0)
		assert.Equal(t, []int32{0, 1, 2, 3, 4, 5}, idx)
		assert.Equal(t, []float64{1, 1, 1, 1, 1, 1}, dist)
		p.MaxSamples = 3
		ix, err = NewIndex(coords, nil, nil, p)
		require.NoError(t, err)
		idx, _ = ix.NewSearcher().Search(0, 0, 0)
		assert.Equal(t, []int32{0, 1, 2}, idx)
	})
	t.Run("utm", func(t *testing.T) {
		// Projected coordinates: the six points at the ranges along the axes
		// of an unrotated ellipsoid are inside, points 1 mm farther are not.
		c := [3]float64{512345, 7012345, 1234}
		ranges := [3]float64{300, 200, 50}
		var coords []float64
		for d := 0; d < 3; d++ {
			for _, sign := range []float64{1, -1} {
				for _, extra := range []float64{0, 0.001} {
					pt := c
					pt[d] += sign * (ranges[d] + extra)
					coords = append(coords, pt[:]...)
				}
			}
		}
		p := Params{Ellipsoid: ellipsoid(300, 200, 50, geostat.Rotation{}), MaxSamples: 20}
		ix, err := NewIndex(coords, nil, nil, p)
		require.NoError(t, err)
		idx, dist := ix.NewSearcher().Search(c[0], c[1], c[2])
		assert.ElementsMatch(t, []int32{0, 2, 4, 6, 8, 10}, idx)
		for _, d := range dist {
			assert.InDelta(t, 1, d, 1e-12)
		}
		rng := rand.New(rand.NewPCG(70, 80))
		cloud := uniformCloud(rng, 5000, [3]float64{1000, 1000, 200})
		targets := uniformCloud(rng, 500, [3]float64{1000, 1000, 200})
		for i := range cloud {
			cloud[i] += c[i%3]
		}
		for i := range targets {
			targets[i] += c[i%3]
		}
		p.Ellipsoid.Rotation = testRotations[2]
		_, _, full := checkAgainstOracle(t, cloud, nil, nil, p, targets)
		assert.Positive(t, full)
	})
	for _, rot := range testRotations {
		t.Run(fmt.Sprintf("rot%v", rot), func(t *testing.T) {
			// Sources placed on the rotated ellipsoid (world = t + R·D·u for
			// unit u), just inside and just outside it, plus a random cloud.
			rng := rand.New(rand.NewPCG(7, 8))
			e := ellipsoid(300, 200, 50, rot)
			r := rot.Matrix()
			ranges := [3]float64{300, 200, 50}
			centre := [3]float64{510.5, 487.25, 95.125}
			coords := uniformCloud(rng, 2000, [3]float64{1000, 1000, 200})
			var on, in, out []int32
			place := func(u [3]float64, scale float64) int32 {
				var l [3]float64
				for d := 0; d < 3; d++ {
					l[d] = u[d] * ranges[d] * scale
				}
				wx, wy, wz := r.Apply(l[0], l[1], l[2])
				coords = append(coords, centre[0]+wx, centre[1]+wy, centre[2]+wz)
				return int32(len(coords)/3 - 1)
			}
			dirs := [][3]float64{{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}
			for len(dirs) < 40 {
				u := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
				nu := math.Sqrt(u[0]*u[0] + u[1]*u[1] + u[2]*u[2])
				dirs = append(dirs, [3]float64{u[0] / nu, u[1] / nu, u[2] / nu})
			}
			for _, u := range dirs {
				on = append(on, place(u, 1))
				in = append(in, place(u, 1-1e-9))
				out = append(out, place(u, 1+1e-9))
			}
			p := Params{Ellipsoid: e, MaxSamples: 5000}
			targets := append([]float64{centre[0], centre[1], centre[2]}, uniformCloud(rng, 200, [3]float64{1000, 1000, 200})...)
			checkAgainstOracle(t, coords, nil, nil, p, targets)

			ix, err := NewIndex(coords, nil, nil, p)
			require.NoError(t, err)
			idx, dist := ix.NewSearcher().Search(centre[0], centre[1], centre[2])
			got := map[int32]float64{}
			for i, j := range idx {
				got[j] = dist[i]
			}
			for _, j := range on {
				require.Contains(t, got, j, "point on the boundary")
				assert.InDelta(t, 1, got[j], 1e-12)
			}
			for _, j := range in {
				require.Contains(t, got, j, "point inside the boundary")
			}
			for _, j := range out {
				require.NotContains(t, got, j, "point outside the boundary")
			}
		})
	}
}

func TestMoreSamplesThanSources(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 5, 5, 5}
	p := Params{Ellipsoid: ellipsoid(10, 10, 10, geostat.Rotation{}), MaxSamples: 16}
	targets := []float64{0.1, 0.2, 0.3, 3, 3, 3, 100, 0, 0}
	_, partial, _ := checkAgainstOracle(t, coords, nil, nil, p, targets)
	assert.Equal(t, 2, partial)
	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	idx, _ := ix.NewSearcher().Search(0.1, 0.2, 0.3)
	assert.ElementsMatch(t, []int32{0, 1, 2, 3, 4}, idx)

	p.MinSamples = 5
	ix, err = NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	idx, _ = ix.NewSearcher().Search(0.1, 0.2, 0.3)
	assert.Len(t, idx, 5)
	p.MinSamples = 6
	ix, err = NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	idx, dist := ix.NewSearcher().Search(0.1, 0.2, 0.3)
	assert.Empty(t, idx)
	assert.Empty(t, dist)
}

func TestEmptyNeighbourhoods(t *testing.T) {
	coords := []float64{0, 0, 0, 10, 0, 0}
	p := Params{Ellipsoid: ellipsoid(5, 5, 5, geostat.Rotation{}), MaxSamples: 4}
	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	s := ix.NewSearcher()
	idx, _ := s.Search(5.5, 0, 0) // between the two, 5.5 and 4.5 away
	assert.Equal(t, []int32{1}, idx)
	idx, _ = s.Search(5, 4, 0) // both farther than 5
	assert.Empty(t, idx)
	idx, _ = s.Search(math.NaN(), 0, 0)
	assert.Empty(t, idx)
	idx, _ = s.Search(math.Inf(1), 0, 0)
	assert.Empty(t, idx)

	// No sources at all, and only NaN values.
	for _, c := range [][2][]float64{{nil, nil}, {coords, {math.NaN(), math.NaN()}}} {
		ix, err := NewIndex(c[0], c[1], nil, p)
		require.NoError(t, err)
		assert.Equal(t, 0, ix.Indexed())
		idx, _ := ix.NewSearcher().Search(0, 0, 0)
		assert.Empty(t, idx)
		nb, err := ix.SearchAll(context.Background(), []float64{0, 0, 0, 1, 1, 1}, nil)
		require.NoError(t, err)
		assert.Equal(t, []int32{0, 0}, nb.Count)
	}
}

func TestNaNValuesNotIndexed(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	coords := uniformCloud(rng, 10000, [3]float64{1000, 1000, 1000})
	values := make([]float64, 10000)
	nan := 0
	for i := range values {
		values[i] = rng.Float64()
		if rng.IntN(10) < 3 {
			values[i] = math.NaN()
			nan++
		}
	}
	targets := uniformCloud(rng, 1000, [3]float64{1000, 1000, 1000})
	p := Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: 16}
	_, _, full := checkAgainstOracle(t, coords, values, nil, p, targets)
	assert.Positive(t, full)
	ix, err := NewIndex(coords, values, nil, p)
	require.NoError(t, err)
	assert.Equal(t, 10000-nan, ix.Indexed())
	assert.Equal(t, 10000, ix.Len())
	// Searching at every NaN-valued source never returns it.
	s := ix.NewSearcher()
	for i, v := range values {
		if math.IsNaN(v) {
			idx, _ := s.Search(coords[3*i], coords[3*i+1], coords[3*i+2])
			require.NotContains(t, idx, int32(i))
		}
	}
}

// drillholes returns nh vertical holes of ns samples each (1 m apart) at
// random collars in a 1000 × 1000 area, with hole ids 100+h.
func drillholes(rng *rand.Rand, nh, ns int) ([]float64, []int32) {
	coords := make([]float64, 0, 3*nh*ns)
	holes := make([]int32, 0, nh*ns)
	for h := 0; h < nh; h++ {
		x, y, top := rng.Float64()*1000, rng.Float64()*1000, 100+rng.Float64()*50
		for s := 0; s < ns; s++ {
			coords = append(coords, x, y, top-float64(s))
			holes = append(holes, int32(100+h))
		}
	}
	return coords, holes
}

func TestConstraints(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dhCoords, dhHoles := drillholes(rng, 200, 50)
	cloud := uniformCloud(rng, 10000, [3]float64{1000, 1000, 200})
	cloudHoles := make([]int32, 10000)
	for i := range cloudHoles {
		cloudHoles[i] = int32(rng.IntN(300)) - 150
	}
	targets := uniformCloud(rng, 1000, [3]float64{1000, 1000, 150})
	// Targets exactly on sources: offsets with zero components.
	for q := 0; q < 100; q++ {
		copy(targets[3*q:3*q+3], dhCoords[3*50*q:3*50*q+3])
		copy(targets[3*(q+100):3*(q+100)+3], cloud[3*q:3*q+3])
	}
	cases := []struct {
		name string
		p    Params
	}{
		{"octant", Params{MaxSamples: 16, MaxPerOctant: 2}},
		{"octant-min", Params{MaxSamples: 24, MaxPerOctant: 3, MinSamples: 12}},
		{"hole", Params{MaxSamples: 20, MaxPerHole: 3}},
		{"hole-min", Params{MaxSamples: 20, MaxPerHole: 4, MinSamples: 8}},
		{"both", Params{MaxSamples: 16, MaxPerOctant: 4, MaxPerHole: 2, MinSamples: 3}},
	}
	for ci, c := range cases {
		rots := testRotations[ci%3 : ci%3+1]
		if c.name == "both" {
			rots = testRotations[:3]
		}
		for _, rot := range rots {
			p := c.p
			p.Ellipsoid = ellipsoid(150, 100, 25, rot)
			t.Run(fmt.Sprintf("%s/rot%v", c.name, rot), func(t *testing.T) {
				e1, p1, f1 := checkAgainstOracle(t, dhCoords, nil, dhHoles, p, targets)
				e2, p2, f2 := checkAgainstOracle(t, cloud, nil, cloudHoles, p, targets)
				assert.Positive(t, f1+f2)
				assert.Positive(t, p1+p2)
				if p.MinSamples > 0 {
					assert.Positive(t, e1+e2)
				}
			})
		}
	}
	// Direct check of the octant rule on a hand-made case: a target at the
	// origin, world-aligned ellipsoid, two sources per octant at distances
	// 1..16 and a source at the target itself (octant 0).
	var coords []float64
	for o := 0; o < 8; o++ {
		for j := 0; j < 2; j++ {
			r := float64(1+o+8*j) / 20
			s := [3]float64{r, r, r}
			for d := 0; d < 3; d++ {
				if o&(1<<d) != 0 {
					s[d] = -r
				}
			}
			coords = append(coords, s[0]/math.Sqrt(3), s[1]/math.Sqrt(3), s[2]/math.Sqrt(3))
		}
	}
	coords = append(coords, 0, 0, 0)
	p := Params{Ellipsoid: ellipsoid(1, 1, 1, geostat.Rotation{}), MaxSamples: 16, MaxPerOctant: 1}
	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	// Origin is not at the target: give the query in world coordinates.
	idx, _ := ix.NewSearcher().Search(0, 0, 0)
	// Octant 0 is taken by the source at the target; octants 1..7 by their
	// nearer source (index 2·o).
	assert.Equal(t, []int32{16, 2, 4, 6, 8, 10, 12, 14}, idx)
}

func TestSeedingDoesNotChangeResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	coords := uniformCloud(rng, 20000, [3]float64{1000, 1000, 200})
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{40, 40, 5}, [3]float64{25, 25, 40}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	for _, k := range []int{1, 16, 40} {
		p := Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: k}
		ix, err := NewIndex(coords, nil, nil, p)
		require.NoError(t, err)
		seeded, plain := ix.NewSearcher(), ix.NewSearcher()
		plain.seed = false
		for q := 0; q < len(targets)/3; q++ {
			a, da := seeded.Search(targets[3*q], targets[3*q+1], targets[3*q+2])
			b, db := plain.Search(targets[3*q], targets[3*q+1], targets[3*q+2])
			require.Equal(t, b, a)
			require.Equal(t, db, da)
		}
	}
}

func TestCrossCheckKyroy(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	coords := uniformCloud(rng, 10000, [3]float64{1000, 1000, 200})
	targets := uniformCloud(rng, 1000, [3]float64{1000, 1000, 200})
	for _, rot := range testRotations[1:3] {
		p := Params{Ellipsoid: ellipsoid(300, 200, 50, rot), MaxSamples: 16}
		ix, err := NewIndex(coords, nil, nil, p)
		require.NoError(t, err)
		pts := make([]kdtree.Point, 10000)
		for i := range pts {
			x, y, z := ix.IsotropicPoint(coords[3*i], coords[3*i+1], coords[3*i+2])
			pts[i] = points.NewPoint([]float64{x, y, z}, int32(i))
		}
		tree := kdtree.New(pts)
		s := ix.NewSearcher()
		for q := 0; q < 1000; q++ {
			x, y, z := targets[3*q], targets[3*q+1], targets[3*q+2]
			qx, qy, qz := ix.IsotropicPoint(x, y, z)
			var want []int32
			for _, nb := range tree.KNN(points.NewPoint([]float64{qx, qy, qz}, nil), 16) {
				dx, dy, dz := nb.Dimension(0)-qx, nb.Dimension(1)-qy, nb.Dimension(2)-qz
				if dx*dx+dy*dy+dz*dz <= 1+RadiusTolerance {
					want = append(want, nb.(*points.Point).Data.(int32))
				}
			}
			idx, _ := s.Search(x, y, z)
			require.ElementsMatch(t, want, idx, "target %d", q)
		}
	}
}

func TestSearchAllAndMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	coords, holes := drillholes(rng, 100, 40)
	values := make([]float64, len(holes))
	for i := range values {
		values[i] = rng.NormFloat64()
		if i%17 == 0 {
			values[i] = math.NaN()
		}
	}
	g, err := grid.New([3]float64{-100, -100, 0}, [3]int{20, 20, 6}, [3]float64{60, 60, 25}, testRotations[1])
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	nt := g.NumCells()
	for _, p := range []Params{
		{Ellipsoid: ellipsoid(300, 200, 50, testRotations[2]), MaxSamples: 12, MinSamples: 2},
		{Ellipsoid: ellipsoid(300, 200, 50, testRotations[2]), MaxSamples: 12, MaxPerOctant: 2, MaxPerHole: 3},
	} {
		ix, err := NewIndex(coords, values, holes, p)
		require.NoError(t, err)
		o := newOracle(coords, values, holes, p, ix.Origin())
		run := func(procs int) (*Neighborhoods, []float64) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			nb, err := ix.SearchAll(context.Background(), targets, nil)
			require.NoError(t, err)
			mean := make([]float64, nt)
			require.NoError(t, ix.Mean(context.Background(), values, targets, mean, nil))
			return nb, mean
		}
		nb1, mean1 := run(1)
		nb2, mean2 := run(2)
		nb4, mean4 := run(4)
		sameNeighborhoods(t, nb1, nb2)
		sameNeighborhoods(t, nb1, nb4)
		for q := range mean1 {
			require.Equal(t, math.Float64bits(mean1[q]), math.Float64bits(mean2[q]))
			require.Equal(t, math.Float64bits(mean1[q]), math.Float64bits(mean4[q]))
		}
		empty := 0
		for q := 0; q < nt; q++ {
			wantIdx, wantDist := o.search(targets[3*q], targets[3*q+1], targets[3*q+2])
			idx, dist := nb1.Neighbors(q)
			if len(wantIdx) == 0 {
				require.Empty(t, idx)
				require.True(t, math.IsNaN(mean1[q]))
				empty++
			} else {
				require.Equal(t, wantIdx, idx)
				require.Equal(t, wantDist, dist)
				sum := 0.0
				for _, i := range wantIdx {
					sum += values[i]
				}
				require.InDelta(t, sum/float64(len(wantIdx)), mean1[q], 1e-12)
			}
			for j := int(nb1.Count[q]); j < nb1.Stride; j++ {
				require.Equal(t, int32(-1), nb1.Idx[q*nb1.Stride+j])
				require.True(t, math.IsNaN(nb1.Dist[q*nb1.Stride+j]))
			}
		}
		assert.Positive(t, empty)
		assert.Less(t, empty, nt)
	}
}

func TestProgressAndCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	coords := uniformCloud(rng, 5000, [3]float64{1000, 1000, 200})
	targets := uniformCloud(rng, 50000, [3]float64{1000, 1000, 200})
	p := Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: 8}
	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)

	last, calls := 0, 0
	_, err = ix.SearchAll(context.Background(), targets, func(done, total int) {
		assert.Equal(t, 50000, total)
		assert.Greater(t, done, last)
		last = done
		calls++
	})
	require.NoError(t, err)
	assert.Equal(t, 50000, last)
	assert.Greater(t, calls, 1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ix.SearchAll(ctx, targets, nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled))

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	last = 0
	out := make([]float64, 50000)
	err = ix.Mean(ctx, make([]float64, 5000), targets, out, func(done, total int) {
		last = done
		cancel()
	})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Less(t, last, 50000)
}

func TestZeroAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	coords, holes := drillholes(rng, 200, 50)
	targets := uniformCloud(rng, 100, [3]float64{1000, 1000, 150})
	for _, p := range []Params{
		{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: 16},
		{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: 16, MaxPerOctant: 2, MaxPerHole: 2},
	} {
		ix, err := NewIndex(coords, nil, holes, p)
		require.NoError(t, err)
		s := ix.NewSearcher()
		for q := 0; q < 100; q++ { // warm up: constrained scratch grows
			s.Search(targets[3*q], targets[3*q+1], targets[3*q+2])
		}
		q := 0
		allocs := testing.AllocsPerRun(200, func() {
			s.Search(targets[3*q], targets[3*q+1], targets[3*q+2])
			q = (q + 1) % 100
		})
		assert.Zero(t, allocs, "params %+v", p)
	}
}

func TestValidate(t *testing.T) {
	good := Params{Ellipsoid: ellipsoid(3, 2, 1, geostat.Rotation{}), MaxSamples: 8, MinSamples: 2, MaxPerOctant: 1, MaxPerHole: 2}
	require.NoError(t, good.Validate())
	cases := []struct {
		field string
		edit  func(*Params)
	}{
		{"ellipsoid", func(p *Params) { p.Ellipsoid.Minor = 0 }},
		{"ellipsoid", func(p *Params) { p.Ellipsoid.Rotation.Dip = 200 }},
		{"max_samples", func(p *Params) { p.MaxSamples = 0 }},
		{"min_samples", func(p *Params) { p.MinSamples = -1 }},
		{"min_samples", func(p *Params) { p.MinSamples = 9 }},
		{"min_samples", func(p *Params) { p.MaxSamples, p.MinSamples = 20, 9 }}, // > 8 octants × 1
		{"max_per_octant", func(p *Params) { p.MaxPerOctant = -1 }},
		{"max_per_hole", func(p *Params) { p.MaxPerHole = -2 }},
	}
	for _, c := range cases {
		p := good
		c.edit(&p)
		err := p.Validate()
		require.Error(t, err, c.field)
		assert.Contains(t, err.Error(), c.field)
	}
}

func TestNewIndexErrors(t *testing.T) {
	p := Params{Ellipsoid: ellipsoid(3, 2, 1, geostat.Rotation{}), MaxSamples: 8}
	coords := []float64{0, 0, 0, 1, 1, 1}
	cases := []struct {
		field          string
		coords, values []float64
		holes          []int32
		p              Params
	}{
		{"coords", []float64{0, 0}, nil, nil, p},
		{"coords", []float64{0, math.NaN(), 0}, nil, nil, p},
		{"values", coords, []float64{1}, nil, p},
		{"holes", coords, nil, []int32{1}, p},
		{"holes", coords, nil, nil, Params{Ellipsoid: p.Ellipsoid, MaxSamples: 8, MaxPerHole: 1}},
		{"max_samples", coords, nil, nil, Params{Ellipsoid: p.Ellipsoid}},
	}
	for _, c := range cases {
		_, err := NewIndex(c.coords, c.values, c.holes, c.p)
		require.Error(t, err, c.field)
		assert.Contains(t, err.Error(), c.field)
	}
	// A NaN coordinate of a source whose value is NaN is fine: it is not
	// indexed.
	_, err := NewIndex([]float64{0, math.NaN(), 0, 1, 1, 1}, []float64{math.NaN(), 1}, nil, p)
	require.NoError(t, err)

	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	assert.Error(t, ix.Mean(context.Background(), []float64{1}, []float64{0, 0, 0}, make([]float64, 1), nil))
	assert.Error(t, ix.Mean(context.Background(), []float64{1, 2}, []float64{0, 0, 0}, make([]float64, 2), nil))
	_, err = ix.SearchAll(context.Background(), []float64{0, 0}, nil)
	assert.Error(t, err)
}

// sameNeighborhoods requires a and b to be bit-identical (NaN padding
// included).
func sameNeighborhoods(t *testing.T, a, b *Neighborhoods) {
	t.Helper()
	require.Equal(t, a.Stride, b.Stride)
	require.True(t, slices.Equal(a.Idx, b.Idx), "Idx differ")
	require.True(t, slices.Equal(a.Count, b.Count), "Count differ")
	require.Equal(t, len(a.Dist), len(b.Dist))
	for i := range a.Dist {
		require.Equal(t, math.Float64bits(a.Dist[i]), math.Float64bits(b.Dist[i]), "Dist[%d]", i)
	}
}

func TestMaskedGridTargets(t *testing.T) {
	// The active centres of a masked grid give the same estimates as the
	// corresponding cells of the full grid.
	rng := rand.New(rand.NewPCG(23, 24))
	coords := uniformCloud(rng, 3000, [3]float64{500, 500, 100})
	values := make([]float64, 3000)
	for i := range values {
		values[i] = rng.Float64()
	}
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{25, 25, 5}, [3]float64{20, 20, 20}, testRotations[1])
	require.NoError(t, err)
	mask := make([]bool, g.NumCells())
	for i := range mask {
		mask[i] = rng.IntN(3) == 0
	}
	m, err := grid.NewMasked(g, mask)
	require.NoError(t, err)
	p := Params{Ellipsoid: ellipsoid(100, 80, 30, testRotations[2]), MaxSamples: 8, MinSamples: 3}
	ix, err := NewIndex(coords, values, nil, p)
	require.NoError(t, err)
	full := make([]float64, g.NumCells())
	require.NoError(t, ix.Mean(context.Background(), values, g.CellCentres(nil), full, nil))
	active := make([]float64, m.NumActive())
	require.NoError(t, ix.Mean(context.Background(), values, m.ActiveCentres(nil), active, nil))
	for a, v := range active {
		require.Equal(t, math.Float64bits(full[m.FullIndex(a)]), math.Float64bits(v), "active cell %d", a)
	}
}

// SearchSet returns Search's neighbours in another order: sources on a
// lattice (many exact distance ties at the k-th place), targets along grid
// rows (tight seed bounds) and in random order (loose ones, which overflow
// the candidate buffer), k from 1 to past the buffered range.
func TestSearchSetMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	lattice := tieLattice()
	g, err := grid.New([3]float64{-200, -200, -50}, [3]int{70, 35, 6}, [3]float64{25, 50, 50}, geostat.Rotation{})
	require.NoError(t, err)
	rows := g.CellCentres(nil)
	shuffled := slices.Clone(rows)
	for i, p := range rng.Perm(len(rows) / 3) {
		copy(shuffled[3*i:3*i+3], rows[3*p:3*p+3])
	}
	for _, coords := range [][]float64{lattice, uniformCloud(rng, 5000, [3]float64{1000, 1000, 200})} {
		for _, k := range []int{1, 8, 32, 40} {
			ix, err := NewIndex(coords, nil, nil, Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: k})
			require.NoError(t, err)
			sorted, set := ix.NewSearcher(), ix.NewSearcher()
			for _, targets := range [][]float64{rows, shuffled} {
				for q := 0; q < len(targets)/3; q++ {
					x, y, z := targets[3*q], targets[3*q+1], targets[3*q+2]
					a, da := sorted.Search(x, y, z)
					b, db := set.SearchSet(x, y, z)
					require.Equal(t, byIndex(a, da), byIndex(b, db), "k=%d target %d", k, q)
				}
			}
		}
	}
}

// tieLattice returns 20 × 20 × 5 sources on a lattice of 50 × 50 × 40 m:
// many exact distance ties at the k-th place.
func tieLattice() []float64 {
	var lattice []float64
	for i := 0; i < 20; i++ {
		for j := 0; j < 20; j++ {
			for l := 0; l < 5; l++ {
				lattice = append(lattice, 50*float64(i), 50*float64(j), 40*float64(l))
			}
		}
	}
	return lattice
}

// byIndex returns the (index, distance) pairs sorted by index.
func byIndex(idx []int32, dist []float64) [][2]float64 {
	out := make([][2]float64, len(idx))
	for i := range idx {
		out[i] = [2]float64{float64(idx[i]), dist[i]}
	}
	slices.SortFunc(out, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	return out
}
