package kriging

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

// TestCorrelationKernels checks the inlined kernels and rho2 against
// geostat.Correlation for every structure type on a dense grid of reduced
// distances (1e-15 absolute; the kernels take r² instead of r).
func TestCorrelationKernels(t *testing.T) {
	types := []struct {
		typ   geostat.StructureType
		alpha int
	}{
		{geostat.Spherical, 0}, {geostat.Exponential, 0}, {geostat.Gaussian, 0}, {geostat.Cubic, 0},
		{geostat.Spheroidal, 3}, {geostat.Spheroidal, 9}, {geostat.GeneralisedCauchy, 5}, {geostat.Linear, 0},
	}
	for _, c := range types {
		st := structure{typ: c.typ, alpha: c.alpha, c: 1, data: [][3]float64{{0, 0, 0}}}
		for k := 0; k <= 3000; k++ {
			r := float64(k) / 1000
			want := geostat.Correlation(c.typ, c.alpha, r)
			require.InDelta(t, want, st.rho2(r*r), 1e-15, "%v r=%v", c.typ, r)
			row := []float64{0}
			st.addRow(row, []int32{0}, r, 0, 0, make([]float64, 1))
			require.Equal(t, st.rho2(r*r), row[0], "%v r=%v: addRow and rho2 differ", c.typ, r)
		}
	}
}
