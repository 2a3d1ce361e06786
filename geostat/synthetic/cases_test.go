package synthetic

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bitsEqual(t *testing.T, name string, a, b []float64) {
	t.Helper()
	require.Equal(t, len(a), len(b), name)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v != %v", name, i, a[i], b[i])
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, spec := range []Spec{Kriging(Small, 7), KNN(Small, 7)} {
		a, err := New(spec)
		require.NoError(t, err)
		b, err := New(spec)
		require.NoError(t, err)
		bitsEqual(t, "coords", a.Coords, b.Coords)
		bitsEqual(t, "grades", a.Grades, b.Grades)
		bitsEqual(t, "normal", a.Normal, b.Normal)
		assert.Equal(t, a.Holes, b.Holes)
		if a.Intervals != nil {
			bitsEqual(t, "from", a.Intervals.From, b.Intervals.From)
			bitsEqual(t, "start", a.Intervals.Start, b.Intervals.Start)
			bitsEqual(t, "end", a.Intervals.End, b.Intervals.End)
		}
		ma, err := a.Masked()
		require.NoError(t, err)
		mb, err := b.Masked()
		require.NoError(t, err)
		assert.Equal(t, ma.ActiveCells(), mb.ActiveCells())

		// Another seed gives another case.
		spec.Seed++
		c, err := New(spec)
		require.NoError(t, err)
		assert.NotEqual(t, a.Coords[:30], c.Coords[:30])
		assert.NotEqual(t, a.Grades[:10], c.Grades[:10])
	}
}

func TestSpecSizes(t *testing.T) {
	// The sizes named by the algorithm issues.
	cells := func(s Spec) int { return s.GridSize[0] * s.GridSize[1] * s.GridSize[2] }
	assert.Equal(t, 50000, KNN(Medium, 1).Samples)
	assert.Equal(t, 1000000, cells(KNN(Medium, 1)))
	assert.Equal(t, [3]int{200, 200, 25}, KNN(Medium, 1).GridSize)
	assert.Equal(t, 2000, Kriging(Medium, 1).Samples)
	assert.Equal(t, [3]int{100, 100, 20}, Kriging(Medium, 1).GridSize)
	assert.Equal(t, 2000, Simulation(Medium, 1).Samples)
	assert.Equal(t, [3]int{200, 200, 25}, Simulation(Medium, 1).GridSize)
	for _, f := range []func(Size, uint64) Spec{KNN, Kriging, Simulation} {
		m, l := f(Medium, 1), f(Large, 1)
		assert.Equal(t, 10*m.Samples, l.Samples)
		assert.Equal(t, 10*cells(m), cells(l))
		assert.Less(t, f(Small, 1).Samples, m.Samples)
		// Large keeps the medium cell size.
		gm, err := m.Box.Grid(m.GridSize)
		require.NoError(t, err)
		gl, err := l.Box.Grid(l.GridSize)
		require.NoError(t, err)
		assert.Equal(t, gm.CellSize, gl.CellSize)
	}
	g, err := Kriging(Medium, 1).Box.Grid(Kriging(Medium, 1).GridSize)
	require.NoError(t, err)
	assert.Equal(t, [3]float64{10, 10, 10}, g.CellSize)
}

func TestMediumCaseProperties(t *testing.T) {
	c, err := New(Kriging(Medium, DefaultSeed))
	require.NoError(t, err)
	n := c.Spec.Samples
	require.Len(t, c.Coords, 3*n)
	require.Len(t, c.Grades, n)
	require.Len(t, c.Holes, n)
	assert.Equal(t, 200000, c.Grid.NumCells())
	d := c.Intervals
	assert.Equal(t, n, d.Len())
	assert.Equal(t, 56, d.NumHoles()) // 36 samples of 5 m per hole (90 % of 200 m)
	for i := 0; i < n; i++ {
		x, y, z := c.Coords[3*i], c.Coords[3*i+1], c.Coords[3*i+2]
		require.True(t, c.Spec.Box.Contains(x, y, z), "sample %d (%v, %v, %v) outside the box", i, x, y, z)
		require.InDelta(t, 5, d.To[i]-d.From[i], 1e-12)
		for a := 0; a < 3; a++ {
			require.InDelta(t, 0.5*(d.Start[3*i+a]+d.End[3*i+a]), d.Mid[3*i+a], 1e-9)
		}
		require.True(t, c.Spec.Box.Contains(d.End[3*i], d.End[3*i+1], d.End[3*i+2]))
		if i > 0 {
			require.GreaterOrEqual(t, d.Holes[i], d.Holes[i-1])
			if d.Holes[i] == d.Holes[i-1] {
				require.Equal(t, d.To[i-1], d.From[i])
			}
		}
		require.Greater(t, c.Grades[i], 0.0)
	}
	for h := 0; h < d.NumHoles(); h++ {
		dx, dy, dz := d.Directions[3*h], d.Directions[3*h+1], d.Directions[3*h+2]
		require.InDelta(t, 1, dx*dx+dy*dy+dz*dz, 1e-12)
		dip := math.Asin(-dz) * 180 / math.Pi
		require.True(t, dip >= 55-1e-9 && dip <= 90+1e-9, "dip %v", dip)
	}

	// Skewed: lognormal-like, positive skewness well above zero, mean above
	// the median.
	mean, sd, skew := moments(c.Grades)
	assert.Greater(t, skew, 1.0)
	assert.Greater(t, mean, c.Distribution.Quantile(0.5))
	assert.Greater(t, sd, 0.0)

	// Normal scores: mean 0, variance close to 1 (mid-step probabilities).
	m, s, sk := moments(c.Normal)
	assert.InDelta(t, 0, m, 1e-9)
	assert.InDelta(t, 1, s, 0.02)
	assert.InDelta(t, 0, sk, 0.01)

	// Distribution tails: 0 below, 1.5 × max above.
	assert.Equal(t, 0.0, c.Distribution.Min())
	assert.InDelta(t, UpperTailScale*maxOf(c.Grades), c.Distribution.Max(), 1e-12)
}

// Spatial correlation: log-grades of neighbouring samples along a hole
// (5 m apart) are strongly correlated, far pairs are not. The expected
// correlation at 5 m is about 0.85 (a 0.1 nugget and two gaussian-shaped
// structures); at reduced lags beyond 2 (longest structure) it is below 1e-5.
func TestSpatialCorrelation(t *testing.T) {
	c, err := New(Kriging(Medium, DefaultSeed))
	require.NoError(t, err)
	lg := make([]float64, len(c.Grades))
	for i, g := range c.Grades {
		lg[i] = math.Log(g)
	}
	var nearA, nearB, farA, farB []float64
	for i := 1; i < len(lg); i++ {
		if c.Holes[i] == c.Holes[i-1] {
			nearA, nearB = append(nearA, lg[i-1]), append(nearB, lg[i])
		}
	}
	long := c.Variogram.Structures[c.Variogram.LongestStructure()]
	r := rand.New(rand.NewPCG(1, 2))
	for len(farA) < 5000 {
		i, j := r.IntN(len(lg)), r.IntN(len(lg))
		if long.Reduced(c.Coords[3*j]-c.Coords[3*i], c.Coords[3*j+1]-c.Coords[3*i+1], c.Coords[3*j+2]-c.Coords[3*i+2]) > 2 {
			farA, farB = append(farA, lg[i]), append(farB, lg[j])
		}
	}
	near, far := correlation(nearA, nearB), correlation(farA, farB)
	t.Logf("log-grade correlation: 5 m along holes %.3f (%d pairs), far %.3f (%d pairs)", near, len(nearA), far, len(farA))
	assert.Greater(t, near, 0.6)
	assert.Less(t, math.Abs(far), 0.2)
}

// The field's covariance, averaged over the random waves, is the closed form
// Σ_s c_s exp(−3 |A_s h|²) (see Field).
func TestFieldCovarianceOracle(t *testing.T) {
	v := Variogram()
	lags := [][3]float64{{0, 0, 0}, {20, 0, 0}, {0, 60, 0}, {0, 0, 10}, {80, -40, 5}}
	const seeds, points = 300, 64
	sum := make([]float64, len(lags))
	r := rand.New(rand.NewPCG(3, 4))
	for s := 0; s < seeds; s++ {
		f, err := NewField(uint64(s), v, FieldWaves)
		require.NoError(t, err)
		for p := 0; p < points; p++ {
			x, y, z := 1000*r.Float64(), 1000*r.Float64(), 200*r.Float64()
			f0 := f.At(x, y, z)
			for l, h := range lags {
				sum[l] += f0 * f.At(x+h[0], y+h[1], z+h[2])
			}
		}
	}
	for l, h := range lags {
		var want float64
		for _, st := range v.Structures {
			rr := st.Reduced(h[0], h[1], h[2])
			want += st.Contribution * math.Exp(-3*rr*rr)
		}
		got := sum[l] / (seeds * points)
		assert.InDelta(t, want, got, 0.05, "lag %v", h)
	}
}

func TestMaskedGrid(t *testing.T) {
	c, err := New(Simulation(Small, DefaultSeed))
	require.NoError(t, err)
	m, err := c.Masked()
	require.NoError(t, err)
	frac := float64(m.NumActive()) / float64(c.Grid.NumCells())
	assert.Greater(t, frac, 0.05)
	assert.Less(t, frac, 0.6)
	// The centre of the box at the ellipsoid's centre depth is inside; the
	// corners are not.
	g := c.Grid
	ctr, ok := m.ActiveIndex(g.Index(g.Size[0]/2, g.Size[1]/2, g.Size[2]/2-1))
	assert.True(t, ok, "centre cell %d", ctr)
	_, ok = m.ActiveIndex(g.Index(0, 0, 0))
	assert.False(t, ok)
	_, ok = m.ActiveIndex(g.Index(g.Size[0]-1, g.Size[1]-1, g.Size[2]-1))
	assert.False(t, ok)
}

func TestValidation(t *testing.T) {
	s := Kriging(Small, 1)
	s.Samples = 1
	_, err := New(s)
	assert.ErrorContains(t, err, "samples")
	s = Kriging(Small, 1)
	s.GridSize[2] = 0
	_, err = New(s)
	assert.ErrorContains(t, err, "grid_size[2]")
	d := Kriging(Small, 1).DrillholeSpec()
	d.MinDip = 0
	_, err = NewDrillholes(d)
	assert.ErrorContains(t, err, "min_dip")
	d = Kriging(Small, 1).DrillholeSpec()
	d.Box.Max[0] = 50 // a shallow hole's horizontal run does not fit
	_, err = NewDrillholes(d)
	assert.ErrorContains(t, err, "min_dip")
	d = Kriging(Small, 1).DrillholeSpec()
	d.Spacing = 0
	_, err = NewDrillholes(d)
	assert.ErrorContains(t, err, "spacing")
	_, err = ParseSize("huge")
	assert.ErrorContains(t, err, "huge")
	for _, z := range Sizes {
		got, err := ParseSize(z.String())
		require.NoError(t, err)
		assert.Equal(t, z, got)
	}
}

func moments(x []float64) (mean, sd, skew float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var m2, m3 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
	}
	m2 /= n
	m3 /= n
	return mean, math.Sqrt(m2), m3 / math.Pow(m2, 1.5)
}

func correlation(a, b []float64) float64 {
	ma, sa, _ := moments(a)
	mb, sb, _ := moments(b)
	var c float64
	for i := range a {
		c += (a[i] - ma) * (b[i] - mb)
	}
	return c / float64(len(a)) / (sa * sb)
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

func TestGradesAtAndRoundSome(t *testing.T) {
	c, err := New(Simulation(Small, DefaultSeed))
	require.NoError(t, err)
	centres := c.Grid.CellCentres(nil)
	g := c.GradesAt(centres)
	require.Len(t, g, c.Grid.NumCells())
	bitsEqual(t, "grades at cells", g, c.GradesAt(centres))
	_, _, skew := moments(g)
	assert.Greater(t, skew, 0.5)

	r, idx := RoundSome(1, g, 0.3, 0.1)
	frac := float64(len(idx)) / float64(len(g))
	assert.InDelta(t, 0.3, frac, 0.03)
	counts := map[float64]int{}
	for _, v := range r {
		counts[v]++
	}
	tied := 0
	for i, v := range r {
		if counts[v] > 1 {
			tied++
		}
		if !slices.Contains(idx, i) {
			require.Equal(t, g[i], v)
		}
	}
	// Every rounded value shares its value with others (coarse steps), the
	// rest are distinct: about 30 % of the values are tied.
	assert.InDelta(t, frac, float64(tied)/float64(len(r)), 0.01)
}

func TestEnsemble(t *testing.T) {
	c, err := New(Simulation(Small, DefaultSeed))
	require.NoError(t, err)
	e := c.Ensemble(1000, 3)
	require.Len(t, e, 3)
	for j, col := range e {
		require.Len(t, col, 1000)
		for _, v := range col {
			require.True(t, v >= c.Distribution.Min() && v <= c.Distribution.Max())
		}
		if j > 0 {
			assert.NotEqual(t, e[0][:10], col[:10])
		}
	}
	bitsEqual(t, "ensemble", e[2], c.Ensemble(1000, 3)[2])
	// Back-transformed normals follow the distribution: median near F⁻¹(½).
	s := slices.Clone(e[0])
	slices.Sort(s)
	assert.InDelta(t, 0.5, c.Distribution.CDF(s[500]), 0.05)
}
