package grid

import (
	"fmt"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worked example of docs/objects.md section 1.7.
func TestCellCentreWorkedExample(t *testing.T) {
	g, err := New([3]float64{1000, 2000, 300}, [3]int{4, 5, 3}, [3]float64{10, 20, 5}, geostat.Rotation{DipAzimuth: 90})
	require.NoError(t, err)
	p := g.CellCentre(1, 2, 0)
	assert.InDeltaSlice(t, []float64{1050, 1985, 302.5}, p[:], 1e-9)
	assert.Equal(t, 1+4*2, g.Index(1, 2, 0))
	all := g.CellCentres(nil)
	c := g.Index(1, 2, 0)
	assert.InDeltaSlice(t, []float64{1050, 1985, 302.5}, all[3*c:3*c+3], 1e-9)
}

func TestIndexRoundTrip(t *testing.T) {
	g, err := New([3]float64{}, [3]int{7, 3, 5}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	n := 0
	for k := 0; k < 5; k++ {
		for j := 0; j < 3; j++ {
			for i := 0; i < 7; i++ {
				require.Equal(t, n, g.Index(i, j, k), "x fastest")
				ii, jj, kk := g.IJK(n)
				require.Equal(t, [3]int{i, j, k}, [3]int{ii, jj, kk})
				n++
			}
		}
	}
	assert.Equal(t, 105, g.NumCells())
	assert.True(t, g.Contains(6, 2, 4))
	assert.False(t, g.Contains(7, 0, 0))
}

func TestWorldLocalRoundTripAndBox(t *testing.T) {
	g, err := New([3]float64{500, -20, 7}, [3]int{10, 20, 4}, [3]float64{5, 2.5, 1}, geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10})
	require.NoError(t, err)
	p := g.CellCentre(3, 7, 2)
	l := g.WorldToLocal(p)
	assert.InDeltaSlice(t, []float64{17.5, 18.75, 2.5}, l[:], 1e-9)
	min, max := g.BoundingBox()
	cs := g.CellCentres(nil)
	for i := 0; i < len(cs); i += 3 {
		for a := 0; a < 3; a++ {
			require.True(t, cs[i+a] >= min[a] && cs[i+a] <= max[a])
		}
	}
	// Steps are the rotated cell edges.
	s := g.Step(0)
	q := g.CellCentre(4, 7, 2)
	assert.InDeltaSlice(t, []float64{q[0] - p[0], q[1] - p[1], q[2] - p[2]}, s[:], 1e-9)
	// Unrotated box is exact.
	h, _ := New([3]float64{1, 2, 3}, [3]int{2, 3, 4}, [3]float64{1, 1, 2}, geostat.Rotation{})
	min, max = h.BoundingBox()
	assert.Equal(t, [3]float64{1, 2, 3}, min)
	assert.Equal(t, [3]float64{3, 5, 11}, max)
}

func TestNewErrors(t *testing.T) {
	_, err := New([3]float64{}, [3]int{0, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	assert.ErrorContains(t, err, "size[0]")
	_, err = New([3]float64{}, [3]int{1, 1, 1}, [3]float64{1, -1, 1}, geostat.Rotation{})
	assert.ErrorContains(t, err, "cell_size[1]")
	_, err = New([3]float64{math.NaN(), 0, 0}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	assert.ErrorContains(t, err, "origin[0]")
	_, err = New([3]float64{}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{Dip: 200})
	assert.ErrorContains(t, err, "dip")
}

// TestNewBounds checks the documented geometry bounds: out-of-range
// origins, cell sizes, extents, cell counts and rotations are errors naming
// the member, and the largest accepted values still give finite corners.
func TestNewBounds(t *testing.T) {
	id := geostat.Rotation{}
	cases := []struct {
		origin [3]float64
		size   [3]int
		cell   [3]float64
		rot    geostat.Rotation
		member string
	}{
		{[3]float64{1e308, 1e308, 1e308}, [3]int{10, 10, 10}, [3]float64{1, 1, 1}, id, "origin"},
		{[3]float64{0, -1e9 - 1, 0}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, id, "origin"},
		{[3]float64{math.Inf(-1), 0, 0}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, id, "origin"},
		{[3]float64{}, [3]int{10, 10, 10}, [3]float64{1e300, 1, 1}, id, "cell_size"},
		{[3]float64{}, [3]int{10, 10, 10}, [3]float64{1, 1e19, 1}, id, "cell_size"},
		{[3]float64{}, [3]int{10, 10, 10}, [3]float64{1, 1, 1e9}, id, "cell_size"},
		{[3]float64{}, [3]int{1001, 1, 1}, [3]float64{1e6, 1, 1}, id, "cell_size"},
		{[3]float64{}, [3]int{1, 1, 1}, [3]float64{0, 1, 1}, id, "cell_size"},
		{[3]float64{}, [3]int{-1, 1, 1}, [3]float64{1, 1, 1}, id, "size"},
		{[3]float64{}, [3]int{math.MaxInt32, math.MaxInt32, 1}, [3]float64{1e-9, 1e-9, 1}, id, "size"},
		{[3]float64{}, [3]int{math.MaxInt, math.MaxInt, math.MaxInt}, [3]float64{1e-300, 1e-300, 1e-300}, id, "size"},
		{[3]float64{}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{Pitch: math.NaN()}, "rotation"},
		{[3]float64{}, [3]int{1, 1, 1}, [3]float64{1, 1, 1}, geostat.Rotation{DipAzimuth: -1}, "rotation"},
	}
	for _, c := range cases {
		_, err := New(c.origin, c.size, c.cell, c.rot)
		var ge *GeometryError
		require.ErrorAs(t, err, &ge, "%+v", c)
		assert.Equal(t, c.member, ge.Member, "%+v: %v", c, err)
	}
	// The extremes that are accepted.
	g, err := New([3]float64{-1e9, 1e9, -1e9}, [3]int{1000, 1000, 1000}, [3]float64{1e6, 1e6, 1e6}, geostat.Rotation{DipAzimuth: 45, Dip: 45, Pitch: 45})
	require.NoError(t, err)
	lo, hi := g.BoundingBox()
	for a := 0; a < 3; a++ {
		assert.LessOrEqual(t, math.Abs(lo[a]), (1+math.Sqrt(3))*1e9)
		assert.LessOrEqual(t, math.Abs(hi[a]), (1+math.Sqrt(3))*1e9)
	}
}

func TestMaskedOrdering(t *testing.T) {
	g, err := New([3]float64{}, [3]int{3, 2, 2}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	mask := make([]bool, 12)
	for _, c := range []int{1, 4, 5, 10} {
		mask[c] = true
	}
	m, err := NewMasked(g, mask)
	require.NoError(t, err)
	assert.Equal(t, 4, m.NumActive())
	assert.Equal(t, []int{1, 4, 5, 10}, m.ActiveCells())
	for a, c := range []int{1, 4, 5, 10} {
		assert.Equal(t, c, m.FullIndex(a))
		got, ok := m.ActiveIndex(c)
		assert.True(t, ok)
		assert.Equal(t, a, got)
	}
	_, ok := m.ActiveIndex(0)
	assert.False(t, ok)
	cs := m.ActiveCentres(nil)
	full := g.CellCentres(nil)
	for a, c := range m.ActiveCells() {
		assert.Equal(t, full[3*c:3*c+3], cs[3*a:3*a+3])
	}
	_, err = NewMasked(g, mask[:5])
	assert.ErrorContains(t, err, "mask")
	_, err = NewMasked(g, make([]bool, 12))
	assert.ErrorContains(t, err, "no active cell")
}

func TestBlockDiscretisation(t *testing.T) {
	b := BlockDiscretisation{2, 3, 1}
	require.NoError(t, b.Validate())
	assert.ErrorContains(t, BlockDiscretisation{0, 1, 1}.Validate(), "block_discretization.nx")
	assert.ErrorContains(t, BlockDiscretisation{1, 10, 1}.Validate(), "block_discretization.ny")
	off := b.LocalOffsets([3]float64{10, 30, 4})
	want := []float64{-2.5, -10, 0, 2.5, -10, 0, -2.5, 0, 0, 2.5, 0, 0, -2.5, 10, 0, 2.5, 10, 0}
	assert.InDeltaSlice(t, want, off, 1e-12)
	assert.Equal(t, 2, b.Nearest(), "first of the two sub-points nearest the centre")
	assert.Equal(t, 13, BlockDiscretisation{3, 3, 3}.Nearest())
	assert.Equal(t, 0, Point().Nearest())

	// The fine grid's cell centres are the sub-points of the coarse cells.
	g, err := New([3]float64{5, 6, 7}, [3]int{3, 2, 2}, [3]float64{10, 30, 4}, geostat.Rotation{DipAzimuth: 40, Dip: 10})
	require.NoError(t, err)
	f := b.Fine(g)
	wo := b.Offsets(g)
	c := g.CellCentre(1, 1, 1)
	for s := 0; s < b.Count(); s++ {
		si, sj, sk := s%2, (s/2)%3, s/6
		fp := f.CellCentre(1*2+si, 1*3+sj, 1*1+sk)
		assert.InDeltaSlice(t, []float64{c[0] + wo[3*s], c[1] + wo[3*s+1], c[2] + wo[3*s+2]}, fp[:], 1e-9)
	}
}

// Oracle 8.1.8: block covariance C̄(V,V) of a cube (spherical a = 1, sill 1,
// no nugget) with n³ sub-points at sub-cell centres, to the printed digits.
func TestBlockCovarianceOracle(t *testing.T) {
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1, Ellipsoid: geostat.Ellipsoid{Major: 1, SemiMajor: 1, Minor: 1}})
	require.NoError(t, err)
	want := map[float64]map[int]float64{
		0.25: {2: 0.79169, 3: 0.76928, 5: 0.75981, 9: 0.75650},
		0.5:  {2: 0.59560, 3: 0.55462, 5: 0.53780, 9: 0.53202},
		1.0:  {2: 0.28895, 3: 0.23730, 5: 0.21938, 9: 0.21391},
	}
	for side, row := range want {
		for n, w := range row {
			off := BlockDiscretisation{n, n, n}.LocalOffsets([3]float64{side, side, side})
			m := len(off) / 3
			sum := 0.0
			for a := 0; a < m; a++ {
				for b := 0; b < m; b++ {
					sum += v.CovarianceLag(off[3*a]-off[3*b], off[3*a+1]-off[3*b+1], off[3*a+2]-off[3*b+2])
				}
			}
			assert.InDelta(t, w, sum/float64(m*m), 5e-6, "side %v n %d", side, n)
		}
	}
}

func ExampleGrid_CellCentre() {
	g, err := New([3]float64{1000, 2000, 300}, [3]int{4, 5, 3}, [3]float64{10, 20, 5},
		geostat.Rotation{DipAzimuth: 90})
	if err != nil {
		panic(err)
	}
	p := g.CellCentre(1, 2, 0)
	fmt.Printf("cell %d at (%.1f, %.1f, %.1f)\n", g.Index(1, 2, 0), p[0], p[1], p[2])
	// Output: cell 9 at (1050.0, 1985.0, 302.5)
}
