package tbsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// DefaultReproductionLags is the number of lags per axis of
// VariogramReproduction when none is given.
const DefaultReproductionLags = 10

// ReproductionInput describes realisations on a regular grid whose
// experimental variograms are to be compared with the model.
type ReproductionInput struct {
	// Grid is the grid of the values; Masked, when set, replaces it and the
	// values then cover its active cells only.
	Grid   *grid.Grid
	Masked *grid.Masked
	// Values are the Gaussian realisations: realisation r of cell c at
	// c + r·cells (cells = active cells for a masked grid). NaN = no value.
	Values       []float64
	Realisations int
	// Variogram is the Gaussian-space model the realisations should follow.
	Variogram *geostat.Variogram
	// Discretisation is the support of the values: grid.Point() (or the zero
	// value) for point values, else the block discretisation whose sub-point
	// means the values are.
	Discretisation grid.BlockDiscretisation
	// Lags is the number of lags per axis (0 = DefaultReproductionLags).
	Lags int
	// MaxLag is the longest lag along each axis in world units, major /
	// semi-major / minor; 0 entries default to 1.5 times the range of the
	// longest structure along that axis, capped at half the grid's extent.
	MaxLag [3]float64
}

// ExperimentalVariogram is the experimental variogram of realisations along
// one axis of the variogram's main ellipsoid, with the model at the same
// lattice lags.
type ExperimentalVariogram struct {
	// Axis is "major", "semi_major" or "minor".
	Axis string
	// Direction is the axis' world unit vector.
	Direction [3]float64
	// Lags are the lattice lag vectors in cells along the grid axes: the
	// lattice vectors nearest to k·Δ·Direction, duplicates and zero removed.
	Lags [][3]int
	// Distance is the world length of each lattice lag.
	Distance []float64
	// Gamma holds γ̂_r(h) = 1/(2N) Σ (Y(x+h) − Y(x))², Gamma[r][lag].
	Gamma [][]float64
	// Mean is the average of Gamma over the realisations.
	Mean []float64
	// Pairs is the number of pairs N(h) of the first realisation.
	Pairs []int
	// Model is the point model γ(h) at the actual lattice lag.
	Model []float64
	// Regularised is the block model C̄(V,V) − C̄(V,V_h) for the values'
	// discretisation (equal to Model for point support).
	Regularised []float64
}

// VariogramReproduction computes, for every realisation, experimental
// variograms along the major, semi-major and minor axes of the variogram's
// longest structure (docs/math.md 7.3): for each axis d and step Δ the
// lattice vector nearest to k·Δ·d in cell units is used and the model is
// evaluated at that actual lattice vector. For blocks, the comparison model
// is the regularised variogram with the same discretisation, so the
// comparison is exact in expectation. Pairs with an inactive or NaN end are
// skipped. Work is spread over GOMAXPROCS goroutines; results do not depend
// on their number.
func VariogramReproduction(ctx context.Context, in ReproductionInput) ([3]ExperimentalVariogram, error) {
	var out [3]ExperimentalVariogram
	g := in.Grid
	if in.Masked != nil {
		g = in.Masked.Grid
	}
	if g == nil {
		return out, errors.New("target: a grid is required")
	}
	if in.Variogram == nil || len(in.Variogram.Structures) == 0 {
		return out, errors.New("variogram_model: a variogram is required")
	}
	if in.Realisations < 1 {
		return out, fmt.Errorf("realizations: %d must be at least 1", in.Realisations)
	}
	disc := in.Discretisation
	if disc == (grid.BlockDiscretisation{}) {
		disc = grid.Point()
	}
	if err := disc.Validate(); err != nil {
		return out, err
	}
	nLags := in.Lags
	if nLags == 0 {
		nLags = DefaultReproductionLags
	}
	if nLags < 1 {
		return out, fmt.Errorf("lags: %d must be at least 1", nLags)
	}
	nFull := g.NumCells()
	cells := nFull
	// slot[c] is the value index of full cell c, −1 when inactive.
	var slot []int32
	if in.Masked != nil {
		cells = in.Masked.NumActive()
		slot = make([]int32, nFull)
		for c := range slot {
			slot[c] = -1
		}
		for a, c := range in.Masked.ActiveCells() {
			slot[c] = int32(a)
		}
	}
	if len(in.Values) != cells*in.Realisations {
		return out, fmt.Errorf("values: %d values for %d cells × %d realisations", len(in.Values), cells, in.Realisations)
	}

	v := in.Variogram
	st := &v.Structures[v.LongestStructure()]
	rot := st.Ellipsoid.Rotation.Matrix()
	ranges := [3]float64{st.Ellipsoid.Major, st.Ellipsoid.SemiMajor, st.Ellipsoid.Minor}
	gm := g.Matrix()
	offsets := disc.Offsets(g)
	nsub := disc.Count()
	cbarVV := blockCovariance(v, offsets, nsub, [3]float64{})
	names := [3]string{"major", "semi_major", "minor"}
	for ax := 0; ax < 3; ax++ {
		e := &out[ax]
		e.Axis = names[ax]
		e.Direction = [3]float64{rot[ax], rot[3+ax], rot[6+ax]}
		maxLag := in.MaxLag[ax]
		// Extent of the grid along the axis direction.
		d := e.Direction
		var ext float64
		for a := 0; a < 3; a++ {
			ext += math.Abs(gm[a]*d[0]+gm[3+a]*d[1]+gm[6+a]*d[2]) * float64(g.Size[a]) * g.CellSize[a]
		}
		if maxLag <= 0 {
			maxLag = math.Min(1.5*ranges[ax], ext/2)
		}
		step := maxLag / float64(nLags)
		var last [3]int
		for k := 1; k <= nLags; k++ {
			w := [3]float64{d[0] * step * float64(k), d[1] * step * float64(k), d[2] * step * float64(k)}
			var lag [3]int
			for a := 0; a < 3; a++ {
				local := gm[a]*w[0] + gm[3+a]*w[1] + gm[6+a]*w[2] // Gᵀw along grid axis a
				lag[a] = int(math.Round(local / g.CellSize[a]))
			}
			if lag == ([3]int{}) || lag == last || abs(lag[0]) >= g.Size[0] || abs(lag[1]) >= g.Size[1] || abs(lag[2]) >= g.Size[2] {
				continue
			}
			last = lag
			h := [3]float64{}
			for a := 0; a < 3; a++ {
				s := g.Step(a)
				for b := 0; b < 3; b++ {
					h[b] += float64(lag[a]) * s[b]
				}
			}
			e.Lags = append(e.Lags, lag)
			e.Distance = append(e.Distance, math.Sqrt(h[0]*h[0]+h[1]*h[1]+h[2]*h[2]))
			e.Model = append(e.Model, v.GammaLag(h[0], h[1], h[2]))
			e.Regularised = append(e.Regularised, cbarVV-blockCovariance(v, offsets, nsub, h))
		}
		e.Gamma = make([][]float64, in.Realisations)
		for r := range e.Gamma {
			e.Gamma[r] = make([]float64, len(e.Lags))
		}
		e.Pairs = make([]int, len(e.Lags))
		e.Mean = make([]float64, len(e.Lags))
	}

	// Jobs: (axis, lag, realisation), each a full pass over the grid.
	type job struct{ ax, lag, r int }
	var jobs []job
	for ax := 0; ax < 3; ax++ {
		for l := range out[ax].Lags {
			for r := 0; r < in.Realisations; r++ {
				jobs = append(jobs, job{ax, l, r})
			}
		}
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	var panics geostat.Panics
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < min(geostat.Workers(ctx), len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.Recover(stop)
			for wctx.Err() == nil {
				mu.Lock()
				jb := next
				next++
				mu.Unlock()
				if jb >= len(jobs) {
					return
				}
				j := jobs[jb]
				e := &out[j.ax]
				vals := in.Values[j.r*cells : (j.r+1)*cells]
				gam, n := latticeVariogram(g, slot, vals, e.Lags[j.lag])
				e.Gamma[j.r][j.lag] = gam
				if j.r == 0 {
					e.Pairs[j.lag] = n
				}
			}
		}()
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return out, fmt.Errorf("tbsim: variogram reproduction: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("tbsim: variogram reproduction cancelled: %w", err)
	}
	for ax := 0; ax < 3; ax++ {
		e := &out[ax]
		for l := range e.Lags {
			s := 0.0
			for r := 0; r < in.Realisations; r++ {
				s += e.Gamma[r][l]
			}
			e.Mean[l] = s / float64(in.Realisations)
		}
	}
	return out, nil
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// blockCovariance returns C̄(V, V_h) = (1/n²) Σ_k Σ_l C(x_k − x_l + h) for
// the sub-point offsets of a block (the nugget counts at zero lag only).
func blockCovariance(v *geostat.Variogram, offsets []float64, n int, h [3]float64) float64 {
	s := 0.0
	for k := 0; k < n; k++ {
		for l := 0; l < n; l++ {
			s += v.CovarianceLag(offsets[3*k]-offsets[3*l]+h[0], offsets[3*k+1]-offsets[3*l+1]+h[1], offsets[3*k+2]-offsets[3*l+2]+h[2])
		}
	}
	return s / float64(n*n)
}

// latticeVariogram returns γ̂(h) and N(h) for the integer lag h over the
// grid; slot maps full cells to value indices (nil: identity, −1: inactive).
func latticeVariogram(g *grid.Grid, slot []int32, vals []float64, h [3]int) (float64, int) {
	nx, ny, nz := g.Size[0], g.Size[1], g.Size[2]
	i0, i1 := max(0, -h[0]), min(nx, nx-h[0])
	j0, j1 := max(0, -h[1]), min(ny, ny-h[1])
	k0, k1 := max(0, -h[2]), min(nz, nz-h[2])
	dOff := h[0] + nx*(h[1]+ny*h[2])
	sum := 0.0
	n := 0
	for k := k0; k < k1; k++ {
		for j := j0; j < j1; j++ {
			row := nx * (j + ny*k)
			for i := i0; i < i1; i++ {
				c := row + i
				a, b := c, c+dOff
				if slot != nil {
					sa, sb := slot[a], slot[b]
					if sa < 0 || sb < 0 {
						continue
					}
					a, b = int(sa), int(sb)
				}
				va, vb := vals[a], vals[b]
				if math.IsNaN(va) || math.IsNaN(vb) {
					continue
				}
				d := vb - va
				sum += d * d
				n++
			}
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / (2 * float64(n)), n
}
