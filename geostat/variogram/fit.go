package variogram

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/optimize"

	"github.com/geostat-engine/geostat/geostat"
)

// Series is one directional experimental variogram to fit: a direction and
// its lags.
type Series struct {
	Direction Direction
	Lags      []Lag
}

// Series returns the directions of e as fitting series, in table order.
func (e *Experimental) Series() []Series {
	out := make([]Series, len(e.Directions))
	for i, d := range e.Directions {
		out[i] = Series{Direction: d.Direction, Lags: e.DirectionLags(i)}
	}
	return out
}

// Weighting selects the least-squares weight of a lag.
type Weighting string

// The weightings.
const (
	// WeightCressie is N(h)/γ̂(h)², with the experimental γ̂ (Cressie's
	// weights with the model value replaced by the experimental one, so
	// that they do not move during the fit). Lags with γ̂ = 0 are left out.
	WeightCressie Weighting = "cressie"
	// WeightPairs is N(h).
	WeightPairs Weighting = "pairs"
	// WeightPairsOverDistance is N(h)/h², h the lag's centroid.
	WeightPairsOverDistance Weighting = "pairs_over_distance_squared"
)

// SillConstraint constrains the total sill (nugget plus contributions).
type SillConstraint string

// The sill constraints.
const (
	// SillFree fits every sill independently.
	SillFree SillConstraint = "free"
	// SillDataVariance fixes the total sill to FitParams.DataVariance.
	SillDataVariance SillConstraint = "data_variance"
	// SillUnit fixes the total sill to 1 (normal scores).
	SillUnit SillConstraint = "unit"
)

// AnisotropyMode says how the structures' rotation is obtained.
type AnisotropyMode string

// The anisotropy modes.
const (
	// AnisotropyIsotropic fits one range per structure (every series,
	// whatever its direction, is a function of |h| only). It is the only
	// mode for omnidirectional series.
	AnisotropyIsotropic AnisotropyMode = "isotropic"
	// AnisotropyGiven takes the axes from the directions of the series named
	// by FitParams.Axes and fits the three ranges of every structure.
	AnisotropyGiven AnisotropyMode = "given"
	// AnisotropyFitted also fits the rotation (dip azimuth, dip, pitch),
	// common to all structures, starting from FitParams.Axes when given.
	AnisotropyFitted AnisotropyMode = "fitted"
)

// StructureSpec is a structure to fit: its type and, for the spheroidal and
// generalised Cauchy types, its shape factor alpha (not fitted).
type StructureSpec struct {
	Type  geostat.StructureType
	Alpha int
}

// FitParams are the model choices of Fit.
type FitParams struct {
	// Structures are 1 to 3 nested structures.
	Structures []StructureSpec
	// NoNugget fixes the nugget to 0; otherwise it is fitted (≥ 0).
	NoNugget bool
	// Anisotropy is the anisotropy mode ("" means AnisotropyIsotropic).
	Anisotropy AnisotropyMode
	// Axes are the indexes of the series whose directions are the major,
	// semi-major and minor axes; −1 for an axis not given. Two of them are
	// required for AnisotropyGiven (the third axis completes a right-handed
	// frame, the second is made orthogonal to the first); for
	// AnisotropyFitted they are the first start (all −1: no such start).
	Axes [3]int
	// Weighting is the least-squares weighting ("" means WeightCressie).
	Weighting Weighting
	// Sill is the total-sill constraint ("" means SillFree).
	Sill SillConstraint
	// DataVariance is the total sill under SillDataVariance.
	DataVariance float64
	// MinPairs leaves out lags with fewer pairs (0 means 1).
	MinPairs int
	// RangeMin and RangeMax bound every range; 0 means half the smallest
	// centroid and the largest lag end of the lags used.
	RangeMin, RangeMax float64
	// Starts is the number of starting points (0 means 8).
	Starts int
	// Seed drives the random starting points after the first.
	Seed uint64
}

// FitResult is the fitted model and the quality of the fit.
type FitResult struct {
	// Variogram is the fitted model. Its Sill is its total sill and its
	// DataVariance FitParams.DataVariance (0 when not given).
	Variogram *geostat.Variogram
	// Residual is the weighted mean squared residual
	// Σ w_k (γ̂_k − γ(h_k))² / Σ w_k over the lags used.
	Residual float64
	// Lags is the number of lags used; Parameters the number of free
	// parameters.
	Lags, Parameters int
	// Model holds, per series, the model at each lag's centroid along the
	// series' direction (NaN for a lag without pairs).
	Model [][]float64
	// Warnings are findings a user should see (a structure that vanished).
	Warnings []string
}

// fitLag is one lag used by the fit.
type fitLag struct {
	series int
	u      [3]float64 // direction (zero for omnidirectional)
	h      float64
	gamma  float64
	weight float64
}

// problem is the parametrised model.
type problem struct {
	p      FitParams
	nS     int
	lags   []fitLag
	sill   float64 // fixed total sill, or the scale of free sills
	fixed  bool
	rmin   float64
	rmax   float64
	aniso  AnisotropyMode
	rot0   geostat.Matrix3 // given rotation (local → world)
	tie    [3]int          // axis whose range an unconstrained axis takes
	nRange int             // ranges per structure: 1 (isotropic) or 3
	nPar   int
}

// Fit fits a nested model to the series by weighted least squares. The
// sills enter the model linearly, so for given ranges and rotation they are
// solved exactly (non-negative, and summing to the fixed total sill under a
// sill constraint, by trying every support set of the at most four
// coefficients); gonum's Nelder–Mead minimises the resulting residual over
// the ranges and the rotation only, from several starts, each restarted
// once from its end point. Ranges are a logistic map of their logarithm
// between RangeMin and RangeMax, so the bounds always hold; the rotation
// angles are free and reduced to the rotation object's ranges at the end. A range along an axis that no series has a component of at
// least 0.1 along is tied to the range of the previous axis. Errors name the
// parameter at fault.
func Fit(ctx context.Context, series []Series, p FitParams) (*FitResult, error) {
	pr, err := newProblem(series, p)
	if err != nil {
		return nil, err
	}
	starts := p.Starts
	if starts == 0 {
		starts = 8
	}
	if starts < 1 || starts > 1000 {
		return nil, fmt.Errorf("starts: %d must be between 1 and 1000", p.Starts)
	}
	x0 := pr.starts(starts, p.Seed)
	if pr.nRange == 3 {
		// The first start combines separate isotropic fits of each series.
		if x, ok := pr.seriesStart(len(series)); ok {
			x0[0] = x
		}
	}
	type run struct {
		x []float64
		f float64
	}
	runs := make([]run, len(x0))
	workers := max(1, min(geostat.Workers(ctx), len(x0)))
	_, err = geostat.ForChunks(ctx, len(x0), workers, 1, nil, func(int) func(lo, hi int) {
		return func(i, _ int) {
			x, f := pr.minimise(x0[i])
			x, f = pr.minimise(x) // a restart rebuilds a collapsed simplex
			runs[i] = run{x, f}
		}
	})
	if err == nil {
		err = ctx.Err() // cancelled after the last start: still an error
	}
	if err != nil {
		return nil, fmt.Errorf("variogram fit: %w", err)
	}
	best := 0
	for i := range runs {
		if runs[i].f < runs[best].f {
			best = i
		}
	}
	v, warnings, err := pr.variogram(runs[best].x)
	if err != nil {
		return nil, fmt.Errorf("variogram fit: %w", err)
	}
	res := &FitResult{Variogram: v, Residual: runs[best].f, Lags: len(pr.lags), Parameters: pr.nPar, Warnings: warnings}
	for _, s := range series {
		m := make([]float64, len(s.Lags))
		u := seriesVector(s.Direction)
		for k, l := range s.Lags {
			m[k] = math.NaN()
			if l.Pairs > 0 && !math.IsNaN(l.Centroid) {
				if s.Direction.Type == Omnidirectional {
					m[k] = isoGamma(v, l.Centroid)
				} else {
					m[k] = v.GammaLag(l.Centroid*u[0], l.Centroid*u[1], l.Centroid*u[2])
				}
			}
		}
		res.Model = append(res.Model, m)
	}
	return res, nil
}

func seriesVector(d Direction) [3]float64 {
	if d.Type == Omnidirectional {
		return [3]float64{}
	}
	return d.Vector()
}

// isoGamma evaluates an isotropic model at distance h.
func isoGamma(v *geostat.Variogram, h float64) float64 {
	return v.GammaLag(h, 0, 0)
}

func newProblem(series []Series, p FitParams) (*problem, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("series: at least one experimental variogram is required")
	}
	if len(p.Structures) < 1 || len(p.Structures) > 3 {
		return nil, fmt.Errorf("structures: %d structures; 1 to 3 are supported", len(p.Structures))
	}
	for i, s := range p.Structures {
		if s.Type < geostat.Spherical || s.Type > geostat.Linear {
			return nil, fmt.Errorf("structures[%d].variogram_type: unknown type %d", i, int(s.Type))
		}
		if s.Type.HasAlpha() {
			if _, ok := geostat.CauchyScaling(s.Alpha); !ok {
				return nil, fmt.Errorf("structures[%d].alpha: %d must be 3, 5, 7 or 9 for a %s structure", i, s.Alpha, s.Type)
			}
		} else if s.Alpha != 0 {
			return nil, fmt.Errorf("structures[%d].alpha: a %s structure takes no alpha", i, s.Type)
		}
	}
	pr := &problem{p: p, nS: len(p.Structures), aniso: p.Anisotropy}
	if pr.aniso == "" {
		pr.aniso = AnisotropyIsotropic
	}
	switch pr.aniso {
	case AnisotropyIsotropic, AnisotropyGiven, AnisotropyFitted:
	default:
		return nil, fmt.Errorf("anisotropy: %q is not %q, %q or %q", p.Anisotropy, AnisotropyIsotropic, AnisotropyGiven, AnisotropyFitted)
	}
	omni := 0
	for _, s := range series {
		if s.Direction.Type == Omnidirectional {
			omni++
		}
	}
	if omni > 0 && pr.aniso != AnisotropyIsotropic {
		return nil, fmt.Errorf("anisotropy: an omnidirectional series can only be fitted with an isotropic model")
	}
	w := p.Weighting
	if w == "" {
		w = WeightCressie
	}
	if w != WeightCressie && w != WeightPairs && w != WeightPairsOverDistance {
		return nil, fmt.Errorf("weighting: %q is not %q, %q or %q", p.Weighting, WeightCressie, WeightPairs, WeightPairsOverDistance)
	}
	minPairs := p.MinPairs
	if minPairs < 0 {
		return nil, fmt.Errorf("min_pairs: %d must be ≥ 0", p.MinPairs)
	}
	minPairs = max(minPairs, 1)
	dmin, dmax := math.Inf(1), 0.0
	maxG := 0.0
	for si, s := range series {
		u := seriesVector(s.Direction)
		for _, l := range s.Lags {
			if l.Pairs < uint64(minPairs) || math.IsNaN(l.Value) || !(l.Centroid > 0) {
				continue
			}
			fl := fitLag{series: si, u: u, h: l.Centroid, gamma: l.Value}
			switch w {
			case WeightCressie:
				if l.Value <= 0 {
					continue
				}
				fl.weight = float64(l.Pairs) / (l.Value * l.Value)
			case WeightPairs:
				fl.weight = float64(l.Pairs)
			case WeightPairsOverDistance:
				fl.weight = float64(l.Pairs) / (l.Centroid * l.Centroid)
			}
			pr.lags = append(pr.lags, fl)
			dmin = math.Min(dmin, l.Centroid)
			dmax = math.Max(dmax, math.Max(l.End, l.Centroid))
			maxG = math.Max(maxG, l.Value)
		}
	}
	// Normalise the weights to sum 1.
	sw := 0.0
	for _, l := range pr.lags {
		sw += l.weight
	}
	for i := range pr.lags {
		pr.lags[i].weight /= sw
	}

	switch p.Sill {
	case "", SillFree:
		pr.sill = maxG
	case SillDataVariance:
		if !(p.DataVariance > 0) || math.IsInf(p.DataVariance, 0) {
			return nil, fmt.Errorf("data_variance: %v must be a positive finite number to constrain the sill to it", p.DataVariance)
		}
		pr.sill, pr.fixed = p.DataVariance, true
	case SillUnit:
		pr.sill, pr.fixed = 1, true
	default:
		return nil, fmt.Errorf("sill: %q is not %q, %q or %q", p.Sill, SillFree, SillDataVariance, SillUnit)
	}

	pr.rmin, pr.rmax = p.RangeMin, p.RangeMax
	if pr.rmin == 0 {
		pr.rmin = dmin / 2
	}
	if pr.rmax == 0 {
		pr.rmax = dmax
	}
	if len(pr.lags) > 0 && (!(pr.rmin > 0) || !(pr.rmax > pr.rmin) || math.IsInf(pr.rmax, 0)) {
		return nil, fmt.Errorf("range_min, range_max: [%v, %v] must satisfy 0 < range_min < range_max < ∞", pr.rmin, pr.rmax)
	}

	// Parameters: sills (nugget unless NoNugget, one per structure), ranges,
	// rotation.
	nSill := pr.nS
	if !p.NoNugget {
		nSill++
	}
	pr.nRange = 1
	if pr.aniso != AnisotropyIsotropic {
		pr.nRange = 3
		pr.tie = [3]int{0, 1, 2}
	}
	if pr.aniso == AnisotropyGiven || (pr.aniso == AnisotropyFitted && (p.Axes[0] >= 0 || p.Axes[1] >= 0 || p.Axes[2] >= 0)) {
		m, err := axesRotation(series, p.Axes)
		if err != nil {
			return nil, err
		}
		pr.rot0 = m
	} else {
		pr.rot0 = geostat.Matrix3{1, 0, 0, 0, 1, 0, 0, 0, 1}
	}
	if pr.aniso == AnisotropyGiven {
		// Tie the ranges of axes no series looks along.
		for a := 1; a < 3; a++ {
			seen := 0.0
			for _, l := range pr.lags {
				c := pr.rot0[a]*l.u[0] + pr.rot0[3+a]*l.u[1] + pr.rot0[6+a]*l.u[2]
				seen = math.Max(seen, math.Abs(c))
			}
			if seen < 0.1 {
				pr.tie[a] = pr.tie[a-1]
			}
		}
	}
	free := nSill
	if pr.fixed {
		free-- // shares of a fixed total
	}
	free += pr.nS * pr.nRange
	if pr.aniso == AnisotropyGiven {
		for a := 1; a < 3; a++ {
			if pr.tie[a] != a {
				free -= pr.nS
			}
		}
	}
	if pr.aniso == AnisotropyFitted {
		free += 3
	}
	pr.nPar = free
	if len(pr.lags) <= free {
		return nil, fmt.Errorf("min_pairs: %d lags have at least %d pairs (and a usable value); fitting %d parameters needs at least %d", len(pr.lags), minPairs, free, free+1)
	}
	return pr, nil
}

// axesRotation returns the local-to-world matrix whose columns are the axes
// named by the series indexes axes (−1: not given).
func axesRotation(series []Series, axes [3]int) (geostat.Matrix3, error) {
	var e [3][3]float64
	var have [3]bool
	names := [3]string{"major", "semi_major", "minor"}
	for a, i := range axes {
		if i < 0 {
			continue
		}
		if i >= len(series) {
			return geostat.Matrix3{}, fmt.Errorf("axes.%s: series %d does not exist (%d series)", names[a], i, len(series))
		}
		if series[i].Direction.Type == Omnidirectional {
			return geostat.Matrix3{}, fmt.Errorf("axes.%s: series %d is omnidirectional", names[a], i)
		}
		e[a] = series[i].Direction.Vector()
		have[a] = true
	}
	var first, second int
	switch {
	case have[0] && have[1]:
		first, second = 0, 1
	case have[0] && have[2]:
		first, second = 0, 2
	case have[1] && have[2]:
		first, second = 1, 2
	default:
		return geostat.Matrix3{}, fmt.Errorf("axes: two of major, semi_major and minor are required")
	}
	// Gram–Schmidt: the second is made orthogonal to the first.
	d := dot(e[first], e[second])
	for c := range 3 {
		e[second][c] -= d * e[first][c]
	}
	n := math.Sqrt(dot(e[second], e[second]))
	if n < 0.2 {
		return geostat.Matrix3{}, fmt.Errorf("axes: the %s and %s directions are nearly parallel", names[first], names[second])
	}
	for c := range 3 {
		e[second][c] /= n
	}
	third := 3 - first - second
	// Right-handed: e2 = e0 × e1 cyclically.
	e[third] = cross(e[(third+1)%3], e[(third+2)%3])
	if e[2][2] < 0 { // keep the dip ≤ 90°: flip the semi-major and minor axes
		for c := range 3 {
			e[1][c], e[2][c] = -e[1][c], -e[2][c]
		}
	}
	var m geostat.Matrix3
	for a := range 3 {
		for c := range 3 {
			m[3*c+a] = e[a][c]
		}
	}
	return m, nil
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// RotationOf returns the (dip azimuth, dip, pitch) angles of a proper
// rotation matrix (local → world, columns the major, semi-major and minor
// axes), with dip azimuth and pitch in [0, 360) and dip in [0, 180]: the
// inverse of geostat.Rotation.Matrix.
func RotationOf(m geostat.Matrix3) geostat.Rotation {
	// R = Rz(a)·Rx(d)·Rz(p): column 3 = (sa·sd, ca·sd, cd), row 3 =
	// (sd·sp, −sd·cp, cd).
	cd := math.Max(-1, math.Min(1, m[8]))
	dip := math.Acos(cd)
	var az, pitch float64
	if math.Sin(dip) > 1e-12 {
		az = math.Atan2(m[2], m[5])
		pitch = math.Atan2(m[6], -m[7])
	} else {
		// Dip 0 or 180: only az ± pitch is defined; take pitch = 0.
		// Row 1 = (ca, ...), row 2 = (−sa·..., ...) with cd = ±1.
		az = math.Atan2(-m[3], m[0])
		if cd < 0 {
			az = math.Atan2(m[3], m[0])
		}
	}
	deg := func(r float64) float64 {
		d := r * 180 / math.Pi
		d = math.Mod(d, 360)
		if d < 0 {
			d += 360
		}
		if d >= 360 {
			d = 0
		}
		return d
	}
	return geostat.Rotation{DipAzimuth: deg(az), Dip: dip * 180 / math.Pi, Pitch: deg(pitch)}
}

// rotationMatrix is geostat.Rotation.Matrix for arbitrary angles (degrees).
func rotationMatrix(a, d, p float64) geostat.Matrix3 {
	sa, ca := math.Sincos(a * math.Pi / 180)
	sd, cd := math.Sincos(d * math.Pi / 180)
	sp, cp := math.Sincos(p * math.Pi / 180)
	return geostat.Matrix3{
		ca*cp - sa*cd*sp, ca*sp + sa*cd*cp, sa * sd,
		-sa*cp - ca*cd*sp, -sa*sp + ca*cd*cp, ca * sd,
		sd * sp, -sd * cp, cd,
	}
}

// model is a decoded parameter vector with its sills.
type model struct {
	nugget float64
	sills  [3]float64
	ranges [3][3]float64
	rot    geostat.Matrix3
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

// decode maps the unconstrained vector x to ranges and rotation.
func (pr *problem) decode(x []float64) model {
	var m model
	k := 0
	lmin, lmax := math.Log(pr.rmin), math.Log(pr.rmax)
	for s := 0; s < pr.nS; s++ {
		for a := 0; a < pr.nRange; a++ {
			if pr.nRange == 3 && pr.tie[a] != a {
				m.ranges[s][a] = m.ranges[s][pr.tie[a]]
				continue
			}
			m.ranges[s][a] = math.Exp(lmin + (lmax-lmin)*logistic(x[k]))
			k++
		}
		if pr.nRange == 1 {
			m.ranges[s][1], m.ranges[s][2] = m.ranges[s][0], m.ranges[s][0]
		}
	}
	m.rot = pr.rot0
	if pr.aniso == AnisotropyFitted {
		// Angles in radians, so that the simplex steps are commensurate
		// with those of the ranges' logits.
		r := rotationMatrix(x[k]*180/math.Pi, x[k+1]*180/math.Pi, x[k+2]*180/math.Pi)
		m.rot = pr.rot0.Mul(&r)
	}
	return m
}

// maxCols is the largest number of sill coefficients: nugget + 3 structures.
const maxCols = 4

// columns fills the design row of every lag for the ranges and rotation of
// m: column 0 the nugget (1 at every lag, absent with NoNugget), then each
// structure's unit-sill variogram (1 − ρ(r), or r for a linear structure).
// It returns the number of columns.
func (pr *problem) columns(m *model, rows [][maxCols]float64) int {
	off := 1
	if pr.p.NoNugget {
		off = 0
	}
	var loc [3]float64
	for i := range pr.lags {
		l := &pr.lags[i]
		if off == 1 {
			rows[i][0] = 1
		}
		if pr.nRange == 3 {
			// Local components of the direction: Rᵀ u.
			for a := range 3 {
				loc[a] = m.rot[a]*l.u[0] + m.rot[3+a]*l.u[1] + m.rot[6+a]*l.u[2]
			}
		}
		for s := 0; s < pr.nS; s++ {
			var r float64
			if pr.nRange == 1 {
				r = l.h / m.ranges[s][0]
			} else {
				q0, q1, q2 := loc[0]/m.ranges[s][0], loc[1]/m.ranges[s][1], loc[2]/m.ranges[s][2]
				r = l.h * math.Sqrt(q0*q0+q1*q1+q2*q2)
			}
			st := pr.p.Structures[s]
			if st.Type == geostat.Linear {
				rows[i][off+s] = r
			} else {
				rows[i][off+s] = 1 - geostat.Correlation(st.Type, st.Alpha, r)
			}
		}
	}
	return off + pr.nS
}

// sills returns the non-negative coefficients that minimise the weighted
// residual for the design rows (subject to Σ c = sill when the sill is
// fixed), and that residual. The problem is tiny (at most 4 coefficients),
// so every support set is tried: the optimum of the convex problem is the
// unconstrained (or equality-constrained) optimum on its own support.
func (pr *problem) sills(rows [][maxCols]float64, nc int) ([maxCols]float64, float64) {
	var g [maxCols][maxCols]float64
	var b [maxCols]float64
	for i := range pr.lags {
		l := &pr.lags[i]
		for p := 0; p < nc; p++ {
			b[p] += l.weight * rows[i][p] * l.gamma
			for q := 0; q < nc; q++ {
				g[p][q] += l.weight * rows[i][p] * rows[i][q]
			}
		}
	}
	best, bestSS := [maxCols]float64{}, math.Inf(1)
	for mask := 0; mask < 1<<nc; mask++ {
		var idx []int
		for p := 0; p < nc; p++ {
			if mask&(1<<p) != 0 {
				idx = append(idx, p)
			}
		}
		var c [maxCols]float64
		if len(idx) > 0 {
			n := len(idx)
			dim := n
			if pr.fixed {
				dim++
			}
			var a [maxCols + 1][maxCols + 2]float64
			for i, p := range idx {
				for j, q := range idx {
					a[i][j] = g[p][q]
				}
				a[i][dim] = b[p]
				if pr.fixed {
					a[i][n] = 1
					a[n][i] = 1
				}
			}
			if pr.fixed {
				a[n][dim] = pr.sill
			}
			sol, ok := solveSmall(&a, dim)
			if !ok {
				continue
			}
			feasible := true
			for i, p := range idx {
				if sol[i] < 0 {
					feasible = false
				}
				c[p] = sol[i]
			}
			if !feasible {
				continue
			}
		} else if pr.fixed {
			continue
		}
		ss := 0.0
		for i := range pr.lags {
			l := &pr.lags[i]
			y := 0.0
			for p := 0; p < nc; p++ {
				y += c[p] * rows[i][p]
			}
			d := l.gamma - y
			ss += l.weight * d * d
		}
		if ss < bestSS {
			best, bestSS = c, ss
		}
	}
	return best, bestSS
}

// solveSmall solves the dim × dim system in a (augmented with its right-hand
// side in column dim) by Gaussian elimination with partial pivoting.
func solveSmall(a *[maxCols + 1][maxCols + 2]float64, dim int) ([maxCols + 1]float64, bool) {
	var x [maxCols + 1]float64
	scale := 0.0
	for i := 0; i < dim; i++ {
		for j := 0; j < dim; j++ {
			scale = math.Max(scale, math.Abs(a[i][j]))
		}
	}
	for col := 0; col < dim; col++ {
		p := col
		for r := col + 1; r < dim; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		if math.Abs(a[p][col]) <= 1e-13*scale {
			return x, false
		}
		a[col], a[p] = a[p], a[col]
		for r := col + 1; r < dim; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c <= dim; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	for r := dim - 1; r >= 0; r-- {
		s := a[r][dim]
		for c := r + 1; c < dim; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

// evaluate returns the model of x with its optimal sills and the weighted
// residual.
func (pr *problem) evaluate(x []float64, rows [][maxCols]float64) (model, float64) {
	m := pr.decode(x)
	nc := pr.columns(&m, rows)
	c, ss := pr.sills(rows, nc)
	k := 0
	if !pr.p.NoNugget {
		m.nugget = c[0]
		k = 1
	}
	for s := 0; s < pr.nS; s++ {
		m.sills[s] = c[k+s]
	}
	return m, ss
}

// starts returns n starting vectors of ranges (and angles): ranges spread
// over the log range interval, then random ones from the seed.
func (pr *problem) starts(n int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7661726966))
	out := make([][]float64, 0, n)
	toX := func(t float64) float64 { return logit(math.Min(math.Max(t, 0.02), 0.98)) }
	for i := 0; i < n; i++ {
		var x []float64
		for s := 0; s < pr.nS; s++ {
			// The first start puts structure s at the (s+1)/(nS+1) point of
			// the log range interval on every axis.
			for a := 0; a < pr.nRange; a++ {
				if pr.nRange == 3 && pr.tie[a] != a {
					continue
				}
				t := float64(s+1) / float64(pr.nS+1)
				if i > 0 {
					t = rng.Float64()
				}
				x = append(x, toX(t))
			}
		}
		if pr.aniso == AnisotropyFitted {
			if i == 0 {
				x = append(x, 0, 0, 0)
			} else {
				x = append(x, 2*math.Pi*rng.Float64(), math.Pi*(rng.Float64()-0.5), 2*math.Pi*rng.Float64())
			}
		}
		out = append(out, x)
	}
	return out
}

// seriesStart fits each directional series on its own (an isotropic model
// of its lags) and turns the ranges found along the series' directions into
// ranges along the axes of the starting rotation: r_a = Σ_i l_ia² r_i /
// Σ_i l_ia² with l_i the series' direction in the local frame. ok is false
// when no series can be fitted on its own.
func (pr *problem) seriesStart(nSeries int) ([]float64, bool) {
	var num, den [3][3]float64 // [structure][axis]
	any := false
	for si := 0; si < nSeries; si++ {
		sub := *pr
		sub.lags = nil
		sub.nRange = 1
		sub.aniso = AnisotropyIsotropic
		sw := 0.0
		var u [3]float64
		for _, l := range pr.lags {
			if l.series == si {
				sub.lags = append(sub.lags, l)
				sw += l.weight
				u = l.u
			}
		}
		if len(sub.lags) <= pr.nS+3 || sw == 0 {
			continue
		}
		for i := range sub.lags {
			sub.lags[i].weight /= sw
		}
		// A few spread starts of the 1-D fit.
		best, bestF := []float64(nil), math.Inf(1)
		for _, x := range sub.spreadStarts() {
			x, f := sub.minimise(x)
			if f < bestF {
				best, bestF = x, f
			}
		}
		m := sub.decode(best)
		var loc [3]float64
		for a := range 3 {
			loc[a] = pr.rot0[a]*u[0] + pr.rot0[3+a]*u[1] + pr.rot0[6+a]*u[2]
		}
		for s := 0; s < pr.nS; s++ {
			for a := range 3 {
				num[s][a] += loc[a] * loc[a] * m.ranges[s][0]
				den[s][a] += loc[a] * loc[a]
			}
		}
		any = true
	}
	if !any {
		return nil, false
	}
	lmin, lmax := math.Log(pr.rmin), math.Log(pr.rmax)
	var x []float64
	for s := 0; s < pr.nS; s++ {
		for a := range 3 {
			if pr.tie[a] != a {
				continue
			}
			r := math.Sqrt(pr.rmin * pr.rmax)
			if den[s][a] > 1e-3 {
				r = num[s][a] / den[s][a]
			}
			t := (math.Log(r) - lmin) / (lmax - lmin)
			x = append(x, logit(math.Min(math.Max(t, 0.02), 0.98)))
		}
	}
	if pr.aniso == AnisotropyFitted {
		x = append(x, 0, 0, 0)
	}
	return x, true
}

// spreadStarts returns starts of an isotropic problem on a grid of range
// quantiles (structure s at or above structure s − 1).
func (pr *problem) spreadStarts() [][]float64 {
	q := []float64{0.15, 0.4, 0.65, 0.9}
	var out [][]float64
	var rec func(s, from int, x []float64)
	rec = func(s, from int, x []float64) {
		if s == pr.nS {
			out = append(out, append([]float64(nil), x...))
			return
		}
		for i := from; i < len(q); i++ {
			rec(s+1, i, append(x, logit(q[i])))
		}
	}
	rec(0, 0, nil)
	return out
}

// minimise runs Nelder–Mead from x0.
func (pr *problem) minimise(x0 []float64) ([]float64, float64) {
	rows := make([][maxCols]float64, len(pr.lags))
	obj := func(x []float64) float64 {
		_, ss := pr.evaluate(x, rows)
		return ss
	}
	prob := optimize.Problem{Func: obj}
	settings := &optimize.Settings{
		FuncEvaluations: 4000 * len(x0),
		Converger:       &optimize.FunctionConverge{Absolute: 1e-15, Relative: 1e-12, Iterations: 50 * len(x0)},
	}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.NelderMead{})
	if res == nil || (err != nil && res.X == nil) {
		return x0, obj(x0)
	}
	x, f := res.X, res.F
	// Polish along narrow valleys with BFGS on central differences.
	prob.Grad = func(grad, x []float64) {
		fd.Gradient(grad, obj, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	}
	res, err = optimize.Minimize(prob, x, &optimize.Settings{FuncEvaluations: 2000 * len(x0)}, &optimize.BFGS{})
	if res != nil && res.X != nil && res.F < f {
		x, f = res.X, res.F
	}
	return x, f
}

// canonicalAxes relabels the axes of a fitted rotation so that the ranges of
// the structure with the longest range decrease from major to minor (the
// model is unchanged), and keeps the dip ≤ 90°.
func (m *model) canonicalAxes() {
	long := 0
	for s := range m.ranges {
		if maxOf(m.ranges[s]) > maxOf(m.ranges[long]) {
			long = s
		}
	}
	perm := [3]int{0, 1, 2}
	r := m.ranges[long]
	for i := 0; i < 3; i++ {
		for j := i + 1; j < 3; j++ {
			if r[perm[j]] > r[perm[i]] {
				perm[i], perm[j] = perm[j], perm[i]
			}
		}
	}
	var rot geostat.Matrix3
	for a := range 3 {
		for c := range 3 {
			rot[3*c+a] = m.rot[3*c+perm[a]]
		}
	}
	// An odd permutation reverses the handedness: flip the minor axis.
	if det3(&rot) < 0 {
		for c := range 3 {
			rot[3*c+2] = -rot[3*c+2]
		}
	}
	if rot[8] < 0 {
		for c := range 3 {
			rot[3*c+1], rot[3*c+2] = -rot[3*c+1], -rot[3*c+2]
		}
	}
	m.rot = rot
	for s := range m.ranges {
		old := m.ranges[s]
		for a := range 3 {
			m.ranges[s][a] = old[perm[a]]
		}
	}
}

func maxOf(r [3]float64) float64 { return math.Max(r[0], math.Max(r[1], r[2])) }

func det3(m *geostat.Matrix3) float64 {
	return m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
}

// variogram builds the geostat.Variogram of x.
// A structure whose fitted contribution is 0 is left out of the model, with
// a warning; when every structure vanishes the first is kept with the
// smallest positive contribution (a variogram needs a structure).
func (pr *problem) variogram(x []float64) (*geostat.Variogram, []string, error) {
	m, _ := pr.evaluate(x, make([][maxCols]float64, len(pr.lags)))
	if pr.aniso == AnisotropyFitted {
		m.canonicalAxes()
	}
	rot := RotationOf(m.rot)
	var structs []geostat.Structure
	var warnings []string
	for s := 0; s < pr.nS; s++ {
		st := pr.p.Structures[s]
		c := m.sills[s]
		if c <= 0 {
			warnings = append(warnings, fmt.Sprintf("structures[%d] (%s): the fitted contribution is 0; the structure is left out", s, st.Type))
			continue
		}
		structs = append(structs, geostat.Structure{Type: st.Type, Alpha: st.Alpha, Contribution: c,
			Ellipsoid: geostat.Ellipsoid{Major: m.ranges[s][0], SemiMajor: m.ranges[s][1], Minor: m.ranges[s][2], Rotation: rot}})
	}
	if len(structs) == 0 {
		st := pr.p.Structures[0]
		warnings = append(warnings, "every structure vanished: the model is a pure nugget, written with the first structure at the smallest positive contribution")
		structs = append(structs, geostat.Structure{Type: st.Type, Alpha: st.Alpha, Contribution: math.SmallestNonzeroFloat64,
			Ellipsoid: geostat.Ellipsoid{Major: m.ranges[0][0], SemiMajor: m.ranges[0][1], Minor: m.ranges[0][2], Rotation: rot}})
	}
	v, err := geostat.NewVariogram(m.nugget, structs...)
	if err != nil {
		return nil, nil, err
	}
	v.Sill = v.TotalSill()
	if pr.p.Sill == SillDataVariance {
		v.DataVariance = pr.p.DataVariance
	} else if pr.p.DataVariance > 0 {
		v.DataVariance = pr.p.DataVariance
	}
	return v, warnings, nil
}
