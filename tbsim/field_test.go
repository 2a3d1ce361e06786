package tbsim

import (
	"context"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/stretchr/testify/require"
)

func structure(t geostat.StructureType, alpha int, c float64, major, semi, minor float64, rot geostat.Rotation) geostat.Structure {
	return geostat.Structure{Type: t, Contribution: c, Alpha: alpha,
		Ellipsoid: geostat.Ellipsoid{Major: major, SemiMajor: semi, Minor: minor, Rotation: rot}}
}

// allTypesVariogram has one structure of every stationary type.
func allTypesVariogram(t *testing.T, nugget float64) *geostat.Variogram {
	rot := geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}
	v, err := geostat.NewVariogram(nugget,
		structure(geostat.Spherical, 0, 0.2, 30, 20, 10, rot),
		structure(geostat.Exponential, 0, 0.1, 25, 15, 8, rot),
		structure(geostat.Gaussian, 0, 0.1, 40, 30, 12, rot),
		structure(geostat.Cubic, 0, 0.2, 35, 25, 9, rot),
		structure(geostat.Spheroidal, 5, 0.1, 30, 30, 30, rot),
		structure(geostat.GeneralisedCauchy, 3, 0.1, 20, 20, 10, rot),
	)
	require.NoError(t, err)
	return v
}

// TestGridMatchesPoints checks the fast grid path (tables, phasors, affine
// line coordinates) against direct evaluation of every line at the cell
// centres. With UTM-sized coordinates the cell centres themselves carry a
// rounding of ~1e-9 m (ulp of 7e6), which frequencies up to ~100/m turn into
// ~1e-7 of phase, so the tolerance is looser there; the reference point keeps
// the phases themselves small.
func TestGridMatchesPoints(t *testing.T) {
	for _, tc := range []struct {
		origin [3]float64
		tol    float64
	}{{[3]float64{100, -300, 50}, 1e-9}, {[3]float64{500100, 7200300, 150}, 1e-6}} {
		g, err := grid.New(tc.origin, [3]int{37, 11, 5}, [3]float64{2.5, 3, 1.5},
			geostat.Rotation{DipAzimuth: 40, Dip: 10, Pitch: 5})
		require.NoError(t, err)
		gridMatchesPoints(t, g, tc.tol)
	}
}

func gridMatchesPoints(t *testing.T, g *grid.Grid, tol float64) {
	lin, err := geostat.NewVariogram(0, structure(geostat.Linear, 0, 0.3, 50, 50, 20, geostat.Rotation{}))
	require.NoError(t, err)
	// Short ranges: partition lines cross more than one interval per four
	// nodes and take the node-by-node path.
	short, err := geostat.NewVariogram(0,
		structure(geostat.Spherical, 0, 0.5, 4, 3, 2, geostat.Rotation{Dip: 30}),
		structure(geostat.Cubic, 0, 0.5, 5, 4, 3, geostat.Rotation{Dip: 30}))
	require.NoError(t, err)
	for name, v := range map[string]*geostat.Variogram{"all": allTypesVariogram(t, 0.2), "linear": lin, "short": short} {
		t.Run(name, func(t *testing.T) {
			lo, hi := g.BoundingBox()
			f, err := NewField(v, 2, 97, 12345, lo, hi)
			require.NoError(t, err)
			n := g.NumCells()
			centres := g.CellCentres(nil)
			for r := 0; r < 2; r++ {
				fast := make([]float64, n)
				require.NoError(t, f.Grid(context.Background(), r, g, fast))
				direct := make([]float64, n)
				f.Points(r, centres, GridStream, 0, direct)
				maxd := 0.0
				for i := range fast {
					maxd = math.Max(maxd, math.Abs(fast[i]-direct[i]))
				}
				require.Less(t, maxd, tol, "realisation %d", r)
			}
		})
	}
}
