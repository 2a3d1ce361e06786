package variogram

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// DirectionType is the direction_type column of the experimental-variogram
// object's directions table.
type DirectionType string

// The direction types.
const (
	// Directional accepts the pairs inside the direction's tolerances.
	Directional DirectionType = "directional"
	// Omnidirectional accepts every pair; its angles and tolerances are
	// ignored (Compute reports them as 0, 0, 90, 90, +Inf, +Inf).
	Omnidirectional DirectionType = "omnidirectional"
)

// Direction is one direction of an experimental variogram: one row of the
// directions table of the experimental-variogram object without its offset
// and count. Angles are in degrees.
type Direction struct {
	// Type is Directional or Omnidirectional ("" means Directional).
	Type DirectionType `json:"direction_type"`
	// Azimuth is clockwise from north (y), in [0, 360].
	Azimuth float64 `json:"azimuth"`
	// Dip is positive downwards, in [−90, 90] (gamv's dip is −Dip).
	Dip float64 `json:"dip"`
	// AzimuthTolerance is the half-window around the azimuth, in (0, 90];
	// 90 accepts every azimuth.
	AzimuthTolerance float64 `json:"azimuth_tolerance"`
	// DipTolerance is the half-window around the dip, in (0, 90].
	DipTolerance float64 `json:"dip_tolerance"`
	// Bandwidth is the largest horizontal distance of a pair's separation
	// from the direction's vertical plane (> 0; +Inf for none).
	Bandwidth float64 `json:"bandwidth"`
	// BandHeight is the largest distance of a pair's separation from the
	// direction, measured in that vertical plane perpendicular to the
	// direction (> 0; +Inf for none).
	BandHeight float64 `json:"bandheight"`
}

// Vector returns the world unit vector (x East, y North, z Up) of the
// direction: (sin az cos dip, cos az cos dip, −sin dip).
func (d Direction) Vector() [3]float64 {
	sa, ca := sincos(d.Azimuth)
	sd, cd := sincos(d.Dip)
	return [3]float64{sa * cd, ca * cd, -sd}
}

func sincos(deg float64) (float64, float64) {
	// Exact at multiples of 90°, like geostat's rotation matrices.
	switch math.Mod(deg, 360) {
	case 0:
		return 0, 1
	case 90, -270:
		return 1, 0
	case 180, -180:
		return 0, -1
	case 270, -90:
		return -1, 0
	}
	return math.Sincos(deg * math.Pi / 180)
}

// Params are the directions and lags of Compute.
type Params struct {
	// Directions are computed independently; a pair may fall in several.
	Directions []Direction
	// LagDistance d > 0 is the spacing of the lag centres k·d.
	LagDistance float64
	// NLags ≥ 1 is the number of lags after lag 0: lags k = 0 … NLags.
	NLags int
	// LagTolerance t is the half-width of a lag window, > 0; 0 means d/2.
	LagTolerance float64
	// Progress, when set, is called with the number of cell chunks done
	// and their total.
	Progress func(done, total int)
}

// validate checks p and returns the lag tolerance to use. Errors name the
// parameter as the request member (directions[i].azimuth_tolerance, …).
func (p *Params) validate() (float64, error) {
	if len(p.Directions) == 0 {
		return 0, fmt.Errorf("directions: at least one direction is required")
	}
	if !(p.LagDistance > 0) || math.IsInf(p.LagDistance, 0) {
		return 0, fmt.Errorf("lag_distance: %v must be a positive finite number", p.LagDistance)
	}
	if p.NLags < 1 {
		return 0, fmt.Errorf("n_lags: %d must be at least 1", p.NLags)
	}
	if p.NLags > 10000 {
		return 0, fmt.Errorf("n_lags: %d must be at most 10000", p.NLags)
	}
	t := p.LagTolerance
	if t == 0 {
		t = p.LagDistance / 2
	}
	if !(t > 0) || math.IsInf(t, 0) {
		return 0, fmt.Errorf("lag_tolerance: %v must be a positive finite number (0 for half the lag distance)", p.LagTolerance)
	}
	for i, d := range p.Directions {
		if d.Type == Omnidirectional {
			continue
		}
		if d.Type != Directional && d.Type != "" {
			return 0, fmt.Errorf("directions[%d].direction_type: %q is not %q or %q", i, d.Type, Directional, Omnidirectional)
		}
		checks := []struct {
			name      string
			v, lo, hi float64
			openLo    bool
		}{
			{"azimuth", d.Azimuth, 0, 360, false},
			{"dip", d.Dip, -90, 90, false},
			{"azimuth_tolerance", d.AzimuthTolerance, 0, 90, true},
			{"dip_tolerance", d.DipTolerance, 0, 90, true},
		}
		for _, c := range checks {
			if math.IsNaN(c.v) || c.v < c.lo || c.v > c.hi || (c.openLo && c.v == c.lo) {
				iv := "["
				if c.openLo {
					iv = "("
				}
				return 0, fmt.Errorf("directions[%d].%s: %v is outside %s%v, %v]", i, c.name, c.v, iv, c.lo, c.hi)
			}
		}
		if !(d.Bandwidth > 0) {
			return 0, fmt.Errorf("directions[%d].bandwidth: %v must be > 0 (+Inf for none)", i, d.Bandwidth)
		}
		if !(d.BandHeight > 0) {
			return 0, fmt.Errorf("directions[%d].bandheight: %v must be > 0 (+Inf for none)", i, d.BandHeight)
		}
	}
	return t, nil
}

// DirectionRow is one row of the directions table of the
// experimental-variogram object: the direction and its lags, Lags[Offset :
// Offset+Count] of the Experimental.
type DirectionRow struct {
	Offset, Count int
	Direction
}

// Lag is one row of the lags table of the experimental-variogram object
// (start, end, centroid, value, num_pairs) plus the sum of the pair weights
// (the optional lag attribute "weights").
type Lag struct {
	// Start and End bound the lag window: max(0, k·d − t) and
	// min(k·d + t, (NLags + ½)·d).
	Start, End float64
	// Centroid is the (weighted) mean pair distance; NaN without pairs.
	Centroid float64
	// Value is the semivariogram γ̂; NaN without pairs.
	Value float64
	// Pairs is the number of pairs.
	Pairs uint64
	// Weight is Σ w_i·w_j over the pairs (equal to Pairs without weights).
	Weight float64
}

// Experimental is the result of Compute, shaped as the experimental-variogram
// object: the data variance, the directions table and the lags table (all
// lags of direction 0, then of direction 1, …).
type Experimental struct {
	// DataVariance is the weighted population variance of the values used.
	DataVariance float64
	// Samples is the number of samples used (values not NaN).
	Samples int
	// Directions are the directions table.
	Directions []DirectionRow
	// Lags are the lags table.
	Lags []Lag
}

// DirectionLags returns the lags of direction i.
func (e *Experimental) DirectionLags(i int) []Lag {
	d := e.Directions[i]
	return e.Lags[d.Offset : d.Offset+d.Count]
}

// dirTest holds a direction's precomputed acceptance test.
type dirTest struct {
	omni           bool
	ux, uy         float64 // horizontal unit vector
	cosAz, band    float64
	ch, cz         float64 // gamv's uvhdec = cos dip, uvzdec = −sin dip
	cosDip, height float64
}

func newDirTest(d Direction) dirTest {
	if d.Type == Omnidirectional {
		return dirTest{omni: true}
	}
	ux, uy := sincos(d.Azimuth)
	sd, cd := sincos(d.Dip)
	return dirTest{ux: ux, uy: uy, cosAz: cosTol(d.AzimuthTolerance), band: d.Bandwidth,
		ch: cd, cz: -sd, cosDip: cosTol(d.DipTolerance), height: d.BandHeight}
}

// cosTol is the cosine of a tolerance, exactly 0 at 90° so that a 90°
// tolerance accepts perpendicular pairs.
func cosTol(deg float64) float64 {
	if deg >= 90 {
		return 0
	}
	_, c := sincos(deg)
	return c
}

// horizEps is gamv's EPSLON: a pair with a shorter horizontal separation is
// vertical and passes every azimuth test.
const horizEps = 1e-20

// accept applies the direction test to the separation (dx, dy, dz) of
// length h > 0.
func (t *dirTest) accept(dx, dy, dz, h float64) bool {
	if t.omni {
		return true
	}
	// The bandwidth test first: it needs no square root.
	if math.Abs(t.ux*dy-t.uy*dx) > t.band {
		return false
	}
	dxy := math.Sqrt(dx*dx + dy*dy)
	cazm := 1.0
	if dxy >= horizEps {
		cazm = (dx*t.ux + dy*t.uy) / dxy
	}
	if math.Abs(cazm) < t.cosAz {
		return false
	}
	if cazm < 0 {
		dxy = -dxy
	}
	if math.Abs((dxy*t.ch+dz*t.cz)/h) < t.cosDip {
		return false
	}
	return math.Abs(t.ch*dz-t.cz*dxy) <= t.height
}

// lagSet holds the lag windows.
type lagSet struct {
	d, tol  float64
	inv     float64 // 1/d
	near    float64 // d − tol less a rounding margin: how close to a window's edge h must be to fall in the next
	n       int     // lags 0..n
	maxDist float64 // (n + ½)·d
	reach   float64 // the largest |h| that can fall in a lag
}

func newLagSet(d, tol float64, n int) lagSet {
	m := (float64(n) + 0.5) * d
	return lagSet{d: d, tol: tol, inv: 1 / d, near: d - tol - 1e-9*d, n: n, maxDist: m, reach: math.Min(m, float64(n)*d+tol)}
}

// in reports whether |h| = h falls in lag k.
func (l *lagSet) in(k int, h float64) bool {
	c := l.d * float64(k)
	return h >= c-l.tol && h <= c+l.tol
}

// span returns the first and last lag that h may fall in (lo > hi when
// none). It starts from the nearest lag centre and looks at the neighbouring
// lags only when h is close enough to the edge of the window for them to
// overlap it; every lag returned passes the exact test in.
func (l *lagSet) span(h float64) (lo, hi int) {
	k := min(int(h*l.inv+0.5), l.n)
	if !l.in(k, h) {
		// h is in no window, or rounding picked the wrong centre.
		switch {
		case k > 0 && l.in(k-1, h):
			k--
		case k < l.n && l.in(k+1, h):
			k++
		default:
			return 1, 0
		}
	}
	lo, hi = k, k
	c := l.d * float64(k)
	if h-c >= l.near {
		for hi < l.n && l.in(hi+1, h) {
			hi++
		}
	}
	if c-h >= l.near {
		for lo > 0 && l.in(lo-1, h) {
			lo--
		}
	}
	return lo, hi
}

// Compute returns the experimental semivariograms of the values at coords
// (flat xyz) along the directions of p, with the optional declustering
// weights (nil for none; otherwise one finite weight ≥ 0 per sample). Samples
// whose value is NaN are left out. See the package documentation for the
// conventions. It uses geostat.Workers(ctx) goroutines; the result does not
// depend on their number.
func Compute(ctx context.Context, coords, values, weights []float64, p Params) (*Experimental, error) {
	tol, err := p.validate()
	if err != nil {
		return nil, err
	}
	n := len(values)
	if len(coords) != 3*n {
		return nil, fmt.Errorf("coordinates: %d numbers for %d values (want 3 per value)", len(coords), n)
	}
	if weights != nil && len(weights) != n {
		return nil, fmt.Errorf("weights: %d weights for %d values", len(weights), n)
	}
	var xs, ys, zs, vs, ws []float64
	for i := 0; i < n; i++ {
		if math.IsNaN(values[i]) {
			continue
		}
		if math.IsInf(values[i], 0) {
			return nil, fmt.Errorf("values[%d]: %v is not finite", i, values[i])
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
			if !(w >= 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("weights[%d]: %v must be a finite number ≥ 0", i, w)
			}
		}
		x, y, z := coords[3*i], coords[3*i+1], coords[3*i+2]
		if math.IsNaN(x+y+z) || math.IsInf(x+y+z, 0) {
			return nil, fmt.Errorf("coordinates[%d]: (%v, %v, %v) is not finite", i, x, y, z)
		}
		xs, ys, zs = append(xs, x), append(ys, y), append(zs, z)
		vs, ws = append(vs, values[i]), append(ws, w)
	}
	if len(vs) < 2 {
		return nil, fmt.Errorf("values: %d samples with a value; at least 2 are needed", len(vs))
	}
	out := &Experimental{Samples: len(vs)}
	out.DataVariance = weightedVariance(vs, ws)

	lags := newLagSet(p.LagDistance, tol, p.NLags)
	nb := p.NLags + 1
	tests := make([]dirTest, len(p.Directions))
	for i, d := range p.Directions {
		tests[i] = newDirTest(d)
		if d.Type == Omnidirectional {
			d = Direction{Type: Omnidirectional, AzimuthTolerance: 90, DipTolerance: 90,
				Bandwidth: math.Inf(1), BandHeight: math.Inf(1)}
		} else {
			d.Type = Directional
		}
		out.Directions = append(out.Directions, DirectionRow{Offset: i * nb, Count: nb, Direction: d})
	}

	acc, err := pairSums(ctx, xs, ys, zs, vs, ws, tests, &lags, p.Progress)
	if err != nil {
		return nil, err
	}
	out.Lags = make([]Lag, len(tests)*nb)
	for di := range tests {
		for k := 0; k < nb; k++ {
			a := acc.at(di, k, nb)
			c := lags.d * float64(k)
			l := Lag{Start: math.Max(0, c-lags.tol), End: math.Min(c+lags.tol, lags.maxDist),
				Pairs: a.n, Weight: a.w, Centroid: math.NaN(), Value: math.NaN()}
			if a.n > 0 && a.w > 0 {
				l.Centroid = a.wh / a.w
				l.Value = a.wg / (2 * a.w)
			}
			out.Lags[di*nb+k] = l
		}
	}
	return out, nil
}

// weightedVariance returns Σ w (z − m)² / Σ w with m the weighted mean (the
// plain population variance when every weight is 1), or NaN when the weights
// sum to 0.
func weightedVariance(v, w []float64) float64 {
	sw, sm := 0.0, 0.0
	for i, z := range v {
		sw += w[i]
		sm += w[i] * z
	}
	if sw == 0 {
		return math.NaN()
	}
	m := sm / sw
	s := 0.0
	for i, z := range v {
		d := z - m
		s += w[i] * d * d
	}
	return s / sw
}

// sums are the accumulators of one (direction, lag).
type sums struct {
	n         uint64
	w, wh, wg float64
}

type accumulator []sums

func (a accumulator) at(dir, lag, nb int) *sums { return &a[dir*nb+lag] }

func (a accumulator) add(b accumulator) {
	for i := range a {
		a[i].n += b[i].n
		a[i].w += b[i].w
		a[i].wh += b[i].wh
		a[i].wg += b[i].wg
	}
}

// chunkPoints is the number of points, at least, of a chunk of cells: the
// unit of parallel work and of the deterministic reduction.
const chunkPoints = 256

// chunksOf cuts cells [0, n) into runs holding at least chunkPoints points;
// count(c) is the number of points of cell c. It returns the first cell of
// each chunk followed by n.
func chunksOf(n int, count func(int) int) []int {
	var chunks []int
	cnt := 0
	for c := 0; c < n; c++ {
		if cnt == 0 {
			chunks = append(chunks, c)
		}
		cnt += count(c)
		if cnt >= chunkPoints {
			cnt = 0
		}
	}
	return append(chunks, n)
}

// pass is one sweep over the pairs: a number of chunks, each accumulated by
// run into its own accumulator.
type pass struct {
	chunks int
	run    func(chunk int, acc accumulator)
}

// pairSums accumulates every pair within reach into the per-direction,
// per-lag sums. Directions whose accepted pairs lie in a thin cylinder
// around their line get a pass of their own over a 2-D grid of cells across
// that line (cylinderPass); the others (omnidirectional, wide bands) share a
// pass over a 3-D grid of cells (spherePass). Every pass is cut into fixed
// chunks whose partial sums are added in pass and chunk order, whatever the
// number of goroutines.
func pairSums(ctx context.Context, xs, ys, zs, vs, ws []float64, tests []dirTest, lags *lagSet, progress func(int, int)) (accumulator, error) {
	nb := lags.n + 1
	var passes []pass
	var sphereDirs []int
	for di := range tests {
		r := tests[di].radius(lags.maxDist)
		if !tests[di].omni && r <= lags.reach/3 {
			passes = append(passes, cylinderPass(xs, ys, zs, vs, ws, &tests[di], di, r, lags, nb))
		} else {
			sphereDirs = append(sphereDirs, di)
		}
	}
	if len(sphereDirs) > 0 {
		passes = append(passes, spherePass(xs, ys, zs, vs, ws, tests, sphereDirs, lags, nb))
	}
	type job struct{ pass, chunk int }
	var jobs []job
	for p, ps := range passes {
		for c := 0; c < ps.chunks; c++ {
			jobs = append(jobs, job{p, c})
		}
	}
	parts := make([]accumulator, len(jobs))
	workers := max(1, min(geostat.Workers(ctx), len(jobs)))
	_, err := geostat.ForChunks(ctx, len(jobs), workers, 1, progress, func(int) func(lo, hi int) {
		return func(ji, _ int) {
			acc := make(accumulator, len(tests)*nb)
			passes[jobs[ji].pass].run(jobs[ji].chunk, acc)
			parts[ji] = acc
		}
	})
	if err == nil {
		err = ctx.Err() // cancelled after the last chunk: still an error
	}
	if err != nil {
		return nil, fmt.Errorf("experimental variogram: %w", err)
	}
	total := make(accumulator, len(tests)*nb)
	for _, p := range parts {
		total.add(p)
	}
	return total, nil
}

// radius returns a bound on the distance from the direction's line of the
// separation of any pair it accepts with |h| ≤ reach (+Inf when omnidirectional).
//
// Two bounds hold. The band tests: the horizontal offset from the
// direction's vertical plane is at most the bandwidth b, and the offset in
// that plane at most the band height plus |sin dip|·b (gamv measures it
// with the full horizontal length, which exceeds the length along the
// azimuth by at most b), so the distance is at most √(b² + (t + |sin dip|·b)²).
// The angles: h·u/|h| ≥ cos(dip tol) − |cos dip|(1 − cos(az tol)) = κ, so
// the distance is at most reach·√(1 − κ²) when κ > 0.
func (t *dirTest) radius(reach float64) float64 {
	if t.omni {
		return math.Inf(1)
	}
	r := reach
	sinDip := math.Abs(t.cz)
	if !math.IsInf(t.band, 1) && !math.IsInf(t.height, 1) {
		v := t.height + sinDip*t.band
		r = math.Min(r, math.Sqrt(t.band*t.band+v*v))
	}
	if k := t.cosDip - math.Abs(t.ch)*(1-t.cosAz); k > 0 {
		r = math.Min(r, reach*math.Sqrt(1-k*k))
	}
	return r
}

// spherePass visits every pair of points closer than reach through a 3-D
// grid of cells, testing the directions dirs.
func spherePass(xs, ys, zs, vs, ws []float64, tests []dirTest, dirs []int, lags *lagSet, nb int) pass {
	g := newCellGrid(xs, ys, zs, vs, ws, lags.reach)
	chunks := chunksOf(g.ncell, func(c int) int { return int(g.start[c+1] - g.start[c]) })
	return pass{chunks: len(chunks) - 1, run: func(ci int, acc accumulator) {
		w := &pairWorker{x: g.x, y: g.y, z: g.z, v: g.v, w: g.w, tests: tests, dirs: dirs, lags: lags, nb: nb, acc: acc}
		for c := chunks[ci]; c < chunks[ci+1]; c++ {
			w.sphereCell(g, c)
		}
	}}
}

// pairWorker accumulates pairs of points into acc.
type pairWorker struct {
	x, y, z, v, w []float64
	tests         []dirTest
	dirs          []int
	lags          *lagSet
	nb            int
	acc           accumulator
}

// sphereCell visits the pairs (i, j) with i in cell c and j later in the
// same cell or in a forward neighbour cell.
func (w *pairWorker) sphereCell(g *cellGrid, c int) {
	a0, a1 := int(g.start[c]), int(g.start[c+1])
	if a0 == a1 {
		return
	}
	cx, cy, cz := c%g.n[0], c/g.n[0]%g.n[1], c/(g.n[0]*g.n[1])
	for i := a0; i < a1; i++ {
		w.pairs(i, i+1, a1)
	}
	for _, o := range g.offsets {
		nx, ny, nz := cx+o[0], cy+o[1], cz+o[2]
		if nx < 0 || nx >= g.n[0] || ny < 0 || ny >= g.n[1] || nz < 0 || nz >= g.n[2] {
			continue
		}
		d := nx + g.n[0]*(ny+g.n[1]*nz)
		b0, b1 := int(g.start[d]), int(g.start[d+1])
		if b0 == b1 {
			continue
		}
		for i := a0; i < a1; i++ {
			w.pairs(i, b0, b1)
		}
	}
}

// pairs accumulates the pairs (i, j) for j in [j0, j1).
func (w *pairWorker) pairs(i, j0, j1 int) {
	xi, yi, zi, vi, wi := w.x[i], w.y[i], w.z[i], w.v[i], w.w[i]
	maxs := w.lags.maxDist * w.lags.maxDist
	xj, yj, zj := w.x[j0:j1], w.y[j0:j1], w.z[j0:j1]
	for k := range xj {
		dx, dy, dz := xj[k]-xi, yj[k]-yi, zj[k]-zi
		hs := dx*dx + dy*dy + dz*dz
		if hs > maxs || hs == 0 {
			continue
		}
		h := math.Sqrt(hs)
		one := len(w.dirs) == 1
		if one && !w.tests[w.dirs[0]].accept(dx, dy, dz, h) {
			continue // one direction: its test rejects more pairs than the lags do
		}
		lo, hi := w.lags.span(h)
		if lo > hi {
			continue
		}
		j := j0 + k
		dv := w.v[j] - vi
		pw := wi * w.w[j]
		for _, di := range w.dirs {
			if !one && !w.tests[di].accept(dx, dy, dz, h) {
				continue
			}
			s := w.acc[di*w.nb:]
			for l := lo; l <= hi; l++ {
				a := &s[l]
				a.n++
				a.w += pw
				a.wh += pw * h
				a.wg += pw * dv * dv
			}
		}
	}
}
