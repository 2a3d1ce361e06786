package tbsim

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/stretchr/testify/require"
)

// assemblePart copies the tiles of StreamPart(part) into full-size outputs
// (NaN-initialised; realisation r of cell c at c + r·cells) and returns how
// many values it wrote.
func assemblePart(t *testing.T, in Input, p Params, part Part, out [4][]float64, cells int) int {
	written := 0
	_, err := StreamPart(context.Background(), in, p, part, func(tl Tile) error {
		require.Equal(t, part.R1-part.R0, tl.Realisations)
		m := tl.Hi - tl.Lo
		for i, src := range [][]float64{tl.Block, tl.BlockGaussian, tl.Point, tl.PointGaussian} {
			for r := 0; r < tl.Realisations; r++ {
				copy(out[i][tl.Lo+(part.R0+r)*cells:tl.Hi+(part.R0+r)*cells], src[r*m:(r+1)*m])
				written += m
			}
		}
		return nil
	})
	require.NoError(t, err)
	return written
}

// Parts of a simulation (realisation ranges × runs of coarse rows, in any
// order, one computed twice) reproduce Run bit for bit, on a masked,
// filtered grid with a nugget and on a grid with a linear structure (whose
// line tables depend on the total number of realisations).
func TestPartsMatchRun(t *testing.T) {
	cases := map[string]func(t *testing.T) (Input, Params){
		"masked": func(t *testing.T) (Input, Params) {
			in, p := smallCase(t)
			p.Realisations = 5
			return in, p
		},
		"linear": func(t *testing.T) (Input, Params) {
			g, err := grid.New([3]float64{0, 0, 0}, [3]int{12, 9, 4}, [3]float64{10, 10, 5}, geostat.Rotation{DipAzimuth: 15})
			require.NoError(t, err)
			v, err := geostat.NewVariogram(0, structure(geostat.Linear, 0, 1, 50, 50, 20, geostat.Rotation{}),
				structure(geostat.Spherical, 0, 0.5, 40, 40, 20, geostat.Rotation{}))
			require.NoError(t, err)
			coords, values, _ := dataAtCentres(g, 5, 19, func(c int) float64 { return math.Sin(float64(c)) })
			p := DefaultParams()
			p.Method = kriging.Ordinary
			p.Realisations = 4
			p.Lines = 60
			p.SaveGaussian = true
			return Input{Grid: g, Coords: coords, Values: values, Variogram: v}, p
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			in, p := mk(t)
			ref, err := Run(context.Background(), in, p)
			require.NoError(t, err)
			starts, err := RowStarts(in)
			require.NoError(t, err)
			rows := len(starts) - 1
			require.Equal(t, ref.Cells, starts[rows])
			R := p.Realisations
			for _, split := range []struct{ rr, rows int }{{1, 1}, {2, 5}, {3, 7}, {R, rows}} {
				var parts []Part
				for r0 := 0; r0 < R; r0 += split.rr {
					for q := 0; q < rows; q += split.rows {
						parts = append(parts, Part{R0: r0, R1: min(R, r0+split.rr), Row0: q, Row1: min(rows, q+split.rows)})
					}
				}
				// Reverse order, and the first part once more at the end.
				for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
					parts[i], parts[j] = parts[j], parts[i]
				}
				parts = append(parts, parts[0])
				var out [4][]float64
				for i := range out {
					out[i] = make([]float64, ref.Cells*R)
					for k := range out[i] {
						out[i][k] = math.Inf(1) // never a simulated value nor NaN
					}
				}
				for _, part := range parts {
					assemblePart(t, in, p, part, out, ref.Cells)
				}
				for i, want := range [][]float64{ref.Block, ref.BlockGaussian, ref.Point, ref.PointGaussian} {
					for k := range want {
						a, b := want[k], out[i][k]
						if !(math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)) {
							t.Fatalf("split %+v output %d index %d: %v from parts, %v from Run", split, i, k, b, a)
						}
					}
				}
			}
		})
	}
}

// Invalid parts are rejected with the range named.
func TestPartValidation(t *testing.T) {
	in, p := smallCase(t)
	for _, part := range []Part{{R0: 0, R1: 4, Row0: 0, Row1: 1}, {R0: 1, R1: 1, Row0: 0, Row1: 1}, {R0: 0, R1: 1, Row0: 0, Row1: 103}, {R0: 0, R1: 1, Row0: 2, Row1: 2}} {
		_, err := StreamPart(context.Background(), in, p, part, func(Tile) error { return nil })
		require.ErrorContains(t, err, "tbsim: part")
	}
}

// A Prepared realisation range streams its runs of rows (in any order, two
// at a time, one run twice) bit-identical to Run, and its Stream validates
// the rows.
func TestPreparedMatchesRun(t *testing.T) {
	in, p := smallCase(t)
	p.Realisations = 5
	p.SaveGaussian = true
	ref, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	starts, err := RowStarts(in)
	require.NoError(t, err)
	rows, cells, R := len(starts)-1, ref.Cells, p.Realisations
	var mu sync.Mutex
	var out [4][]float64
	for i := range out {
		out[i] = make([]float64, cells*R)
		for k := range out[i] {
			out[i][k] = math.Inf(1)
		}
	}
	for _, rr := range [][2]int{{3, 5}, {0, 3}} {
		pr, err := Prepare(context.Background(), in, p, rr[0], rr[1])
		require.NoError(t, err)
		require.Equal(t, rows, pr.Rows())
		runs := [][2]int{{rows - 4, rows}, {0, 1}, {1, rows - 4}, {0, 1}}
		errs := make(chan error, len(runs))
		for _, q := range runs {
			go func() {
				var last int
				_, err := pr.Stream(context.Background(), q[0], q[1], func(done, total int) {
					last = done
					if total != starts[q[1]]-starts[q[0]] {
						t.Errorf("progress total %d for rows %v", total, q)
					}
				}, func(tl Tile) error {
					m := tl.Hi - tl.Lo
					if tl.Realisations != rr[1]-rr[0] || tl.Lo < starts[q[0]] || tl.Hi > starts[q[1]] {
						t.Errorf("tile [%d, %d) × %d outside rows %v", tl.Lo, tl.Hi, tl.Realisations, q)
						return nil
					}
					mu.Lock() // the run done twice writes the same values
					defer mu.Unlock()
					for i, src := range [][]float64{tl.Block, tl.BlockGaussian, tl.Point, tl.PointGaussian} {
						for r := 0; r < tl.Realisations; r++ {
							copy(out[i][tl.Lo+(rr[0]+r)*cells:tl.Hi+(rr[0]+r)*cells], src[r*m:(r+1)*m])
						}
					}
					return nil
				})
				if err == nil && last != starts[q[1]]-starts[q[0]] {
					t.Errorf("progress ended at %d for rows %v", last, q)
				}
				errs <- err
			}()
		}
		for range runs {
			require.NoError(t, <-errs)
		}
		for _, q := range [][2]int{{-1, 1}, {2, 2}, {0, rows + 1}} {
			_, err := pr.Stream(context.Background(), q[0], q[1], nil, func(Tile) error { return nil })
			require.ErrorContains(t, err, "tbsim: part rows")
		}
	}
	for i, want := range [][]float64{ref.Block, ref.BlockGaussian, ref.Point, ref.PointGaussian} {
		for k := range want {
			a, b := want[k], out[i][k]
			if !(math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("output %d index %d: %v from Prepared, %v from Run", i, k, b, a)
			}
		}
	}
}
