package tbsim

import (
	"math"

	"github.com/geostat-engine/geostat/grid"
)

// gridGeom is a regular grid seen from the field: node (i, j, k) sits at
// base + i·e[0] + j·e[1] + k·e[2] relative to x_ref.
type gridGeom struct {
	nx, ny, nz int
	base       [3]float64
	e          [3][3]float64
}

func newGridGeom(g *grid.Grid, ref [3]float64) gridGeom {
	c := g.CellCentre(0, 0, 0)
	gg := gridGeom{nx: g.Size[0], ny: g.Size[1], nz: g.Size[2]}
	for a := 0; a < 3; a++ {
		gg.base[a] = c[a] - ref[a]
		gg.e[a] = g.Step(a)
	}
	return gg
}

// rowStart returns the position of node (0, j, k) relative to x_ref.
func (gg *gridGeom) rowStart(j, k int) (x, y, z float64) {
	fj, fk := float64(j), float64(k)
	return gg.base[0] + fj*gg.e[1][0] + fk*gg.e[2][0],
		gg.base[1] + fj*gg.e[1][1] + fk*gg.e[2][1],
		gg.base[2] + fj*gg.e[1][2] + fk*gg.e[2][2]
}

// gridRow is the run of nodes i0 ≤ i < i1 of row (j, k) of a grid, written
// at out[off + i − i0].
type gridRow struct {
	j, k, i0, i1, off int
}

// workspace is the per-goroutine scratch of the grid kernels.
type workspace struct {
	tab   []float64 // spectral: per line of a chunk, interleaved cos/sin over the span
	cr    []float64 // per line of a chunk: amplitude·cos, amplitude·sin of the row phase
	sr    []float64
	signs []float64  // partition: ±amp per interval, the tables of all lines of a set
	pl    []partLine // partition: the lines of the current set
	// partition: difference arrays of the segment polynomials, four arrays
	// laid out like the output, and whether any (cubic) piece was added.
	diff                []float64
	diffUsed, diffCubic bool
	nug                 *nuggetSource
	// rx, ry, rz are the row starts (gridGeom.rowStart) of the rows of the
	// current addRows call.
	rx, ry, rz []float64
}

func newWorkspace() *workspace { return &workspace{nug: newNuggetSource()} }

// lineChunk is the number of lines whose tables are built together; their
// tables stay in the L1/L2 cache while all rows of a tile are swept.
const lineChunk = 16

// anchorEvery is the spacing of exactly computed table entries: cos/sin of
// i·a is computed by Sincos at multiples of anchorEvery and by phasor
// multiplication in between, so every entry depends only on (i, a), never
// on the tile, and rounding drift stays below ~anchorEvery·ε.
const anchorEvery = 32

// addRows adds realisation r of the field (all structures and the nugget)
// at the nodes of the rows into out. Each node sums its lines in a fixed
// order, so the result does not depend on how rows are grouped into tiles.
func (f *Field) addRows(r int, gg *gridGeom, rows []gridRow, out []float64, ws *workspace) {
	if len(rows) == 0 {
		return
	}
	imin, imax := rows[0].i0, rows[0].i1
	jmin, jmax, kmin, kmax := rows[0].j, rows[0].j, rows[0].k, rows[0].k
	for _, rw := range rows {
		imin, imax = min(imin, rw.i0), max(imax, rw.i1)
		jmin, jmax = min(jmin, rw.j), max(jmax, rw.j)
		kmin, kmax = min(kmin, rw.k), max(kmax, rw.k)
	}
	if imax <= imin {
		return
	}
	box := [2][3]int{{imin, jmin, kmin}, {imax - 1, jmax, kmax}}
	ws.rx, ws.ry, ws.rz = ws.rx[:0], ws.ry[:0], ws.rz[:0]
	for _, rw := range rows {
		x, y, z := gg.rowStart(rw.j, rw.k)
		ws.rx, ws.ry, ws.rz = append(ws.rx, x), append(ws.ry, y), append(ws.rz, z)
	}
	// Partition lines of all structures accumulate polynomial pieces in
	// difference arrays laid out like out, integrated once at the end.
	ws.diffUsed, ws.diffCubic = false, false
	for s := 0; s < f.nStruct; s++ {
		if p := f.sets[r*f.nStruct+s].proc; p == processPartitionSpherical || p == processPartitionCubic {
			m := 2
			if p == processPartitionCubic {
				m = 4
			}
			if len(ws.diff) < m*len(out) {
				ws.diff = make([]float64, 4*len(out))
			}
		}
	}
	for s := 0; s < f.nStruct; s++ {
		ls := f.sets[r*f.nStruct+s]
		n := len(ls.vx)
		switch ls.proc {
		case processSpectral:
			for l0 := 0; l0 < n; l0 += lineChunk {
				ws.spectralChunk(ls, l0, min(l0+lineChunk, n), gg, rows, imin, imax, out)
			}
		case processPartitionSpherical, processPartitionCubic:
			ws.partitionSet(ls, gg, rows, box, out)
		case processStairs:
			stairsLines(ls, gg, rows, out)
		}
	}
	if ws.diffUsed {
		N := len(out)
		for _, rw := range rows {
			n := rw.i1 - rw.i0
			o := out[rw.off : rw.off+n]
			if ws.diffCubic {
				integrateCubic(o, ws.diff[rw.off:rw.off+n], ws.diff[N+rw.off:N+rw.off+n],
					ws.diff[2*N+rw.off:2*N+rw.off+n], ws.diff[3*N+rw.off:3*N+rw.off+n])
			} else {
				integrateLinear(o, ws.diff[rw.off:rw.off+n], ws.diff[N+rw.off:N+rw.off+n])
			}
		}
	}
	if f.nuggetS != 0 {
		sk := nuggetKey(f.seed, r, GridStream)
		for _, rw := range rows {
			base := gg.nx * (rw.j + gg.ny*rw.k)
			o := out[rw.off : rw.off+rw.i1-rw.i0]
			for i := range o {
				o[i] += f.nuggetS * ws.nug.normalAt(sk, base+rw.i0+i)
			}
		}
	}
}

// spectralChunk adds lines [l0, l1) of a spectral set. Along a row the phase
// is θ_row + i·a with a = ω·e₀, so
//
//	amp·cos(θ_row + i·a) = (amp·cos θ_row)·cos(i·a) − (amp·sin θ_row)·sin(i·a)
//
// with cos(i·a), sin(i·a) tabulated once per line over the span of the tile
// and one Sincos per row start.
func (ws *workspace) spectralChunk(ls *lineSet, l0, l1 int, gg *gridGeom, rows []gridRow, imin, imax int, out []float64) {
	nl := l1 - l0
	span := imax - imin
	if need := 2 * span * nl; cap(ws.tab) < need {
		ws.tab = make([]float64, need)
	}
	tab := ws.tab[:2*span*nl]
	for q := 0; q < nl; q++ {
		l := l0 + q
		a := ls.vx[l]*gg.e[0][0] + ls.vy[l]*gg.e[0][1] + ls.vz[l]*gg.e[0][2]
		fillPhasors(tab[2*span*q:2*span*(q+1)], imin, a)
	}
	if cap(ws.cr) < nl {
		ws.cr, ws.sr = make([]float64, nl), make([]float64, nl)
	}
	cr, sr := ws.cr[:nl], ws.sr[:nl]
	amp := ls.amp
	vx, vy, vz, ph := ls.vx[l0:l1], ls.vy[l0:l1], ls.vz[l0:l1], ls.off[l0:l1]
	for _, rw := range rows {
		x, y, z := gg.rowStart(rw.j, rw.k)
		for q := 0; q < nl; q++ {
			s, c := math.Sincos(vx[q]*x + vy[q]*y + vz[q]*z + ph[q])
			cr[q], sr[q] = amp*c, amp*s
		}
		n := rw.i1 - rw.i0
		o := out[rw.off : rw.off+n]
		lo, hi := 2*(rw.i0-imin), 2*(rw.i1-imin)
		q := 0
		for ; q+4 <= nl; q += 4 {
			spectral4(o,
				tab[2*span*q+lo:2*span*q+hi], tab[2*span*(q+1)+lo:2*span*(q+1)+hi],
				tab[2*span*(q+2)+lo:2*span*(q+2)+hi], tab[2*span*(q+3)+lo:2*span*(q+3)+hi],
				cr[q], sr[q], cr[q+1], sr[q+1], cr[q+2], sr[q+2], cr[q+3], sr[q+3])
		}
		for ; q < nl; q++ {
			spectral1(o, tab[2*span*q+lo:2*span*q+hi], cr[q], sr[q])
		}
	}
}

// fillPhasors writes cos(i·a), sin(i·a) interleaved for i = i0, i0+1, ...
// into t (len 2·span). Entries at multiples of anchorEvery come from
// Sincos; the others are advanced by one complex multiplication from the
// previous anchor, so entry i is the same whatever i0 is.
func fillPhasors(t []float64, i0 int, a float64) {
	n := len(t) / 2
	ws, wc := math.Sincos(a)
	var c, s float64
	i := i0 - i0%anchorEvery
	// Advance from the anchor below i0 without storing.
	s, c = math.Sincos(float64(i) * a)
	for ; i < i0; i++ {
		c, s = c*wc-s*ws, s*wc+c*ws
		if (i+1)%anchorEvery == 0 {
			s, c = math.Sincos(float64(i+1) * a)
		}
	}
	for q := 0; q < n; q++ {
		if i%anchorEvery == 0 {
			s, c = math.Sincos(float64(i) * a)
		}
		t[2*q], t[2*q+1] = c, s
		c, s = c*wc-s*ws, s*wc+c*ws
		i++
	}
}

// spectral4 adds four spectral lines to a row: o[i] += Σ (c_q·C_q[i] − s_q·S_q[i]).
func spectral4(o, t0, t1, t2, t3 []float64, c0, s0, c1, s1, c2, s2, c3, s3 float64) {
	n := len(o)
	t0, t1, t2, t3 = t0[:2*n], t1[:2*n], t2[:2*n], t3[:2*n]
	for i := range o {
		v0 := c0*t0[2*i] - s0*t0[2*i+1]
		v1 := c1*t1[2*i] - s1*t1[2*i+1]
		v2 := c2*t2[2*i] - s2*t2[2*i+1]
		v3 := c3*t3[2*i] - s3*t3[2*i+1]
		o[i] += (v0 + v1) + (v2 + v3)
	}
}

// spectral1 adds one spectral line to a row.
func spectral1(o, t []float64, c, s float64) {
	t = t[:2*len(o)]
	for i := range o {
		o[i] += c*t[2*i] - s*t[2*i+1]
	}
}

// partitionChunkNodes is the number of nodes (at least one row) that the
// partition lines sweep together: all lines of a set are added to one chunk
// of rows before the next, so that the chunk's difference arrays and
// outputs (192 KB for spherical lines) stay in the L2 cache instead of
// streaming a whole tile through it once per line.
const partitionChunkNodes = 8192

// partLine holds the constants of one partition line over a tile: the step a
// along the rows and inv = 1/a (0 when a = 0), and its signs table,
// ws.signs[s0:s1] for the intervals lo, lo+1, ... that the tile spans.
type partLine struct {
	a, inv, lo float64
	s0, s1     int
}

// partitionSet adds the lines of a partition set. The line coordinate is
// affine along a row, t = t_row + i·a; the signs ±amp of the intervals the
// tile's bounding box spans are tabulated per line from the sign hash. A row
// whose nodes cross few intervals adds one polynomial piece per interval to
// the difference arrays; otherwise the line is added node by node. Rows are
// taken in chunks of about partitionChunkNodes nodes, all lines per chunk in
// line order, so every node still receives its lines in line order.
func (ws *workspace) partitionSet(ls *lineSet, gg *gridGeom, rows []gridRow, box [2][3]int, out []float64) {
	nl := len(ls.vx)
	ws.signs = ws.signs[:0]
	ws.pl = ws.pl[:0]
	for l := 0; l < nl; l++ {
		tmin, tmax := math.Inf(1), math.Inf(-1)
		for c := 0; c < 8; c++ {
			i, j, k := box[c&1][0], box[c>>1&1][1], box[c>>2&1][2]
			x, y, z := gg.rowStart(j, k)
			fi := float64(i)
			x += fi * gg.e[0][0]
			y += fi * gg.e[0][1]
			z += fi * gg.e[0][2]
			t := ls.vx[l]*x + ls.vy[l]*y + ls.vz[l]*z + ls.off[l]
			tmin, tmax = math.Min(tmin, t), math.Max(tmax, t)
		}
		klo, khi := int64(math.Floor(tmin))-1, int64(math.Floor(tmax))+1
		s0 := len(ws.signs)
		for k := klo; k <= khi; k++ {
			v := ls.amp
			if signBit(ls.keys[l], k) {
				v = -v
			}
			ws.signs = append(ws.signs, v)
		}
		a := ls.vx[l]*gg.e[0][0] + ls.vy[l]*gg.e[0][1] + ls.vz[l]*gg.e[0][2]
		var inv float64
		if a != 0 {
			inv = 1 / a
		}
		ws.pl = append(ws.pl, partLine{a: a, inv: inv, lo: float64(klo), s0: s0, s1: len(ws.signs)})
	}
	cubic := ls.proc == processPartitionCubic
	rx, ry, rz := ws.rx[:len(rows)], ws.ry[:len(rows)], ws.rz[:len(rows)]
	for c0 := 0; c0 < len(rows); {
		c1, nodes := c0, 0
		for c1 < len(rows) && (c1 == c0 || nodes < partitionChunkNodes) {
			nodes += rows[c1].i1 - rows[c1].i0
			c1++
		}
		chunk := rows[c0:c1]
		for l := range ws.pl {
			p := &ws.pl[l]
			sg := ws.signs[p.s0:p.s1]
			if cubic {
				ws.partitionCubicRows(out, chunk, rx[c0:c1], ry[c0:c1], rz[c0:c1], ls.vx[l], ls.vy[l], ls.vz[l], ls.off[l], p.a, sg, p.lo)
			} else if partitionSphericalRows(ws.diff, out, chunk, rx[c0:c1], ry[c0:c1], rz[c0:c1], ls.vx[l], ls.vy[l], ls.vz[l], ls.off[l], p.a, p.inv, sg, p.lo) {
				ws.diffUsed = true
			}
		}
		c0 = c1
	}
}

// partitionCubicRows adds one cubic partition line to the rows (see
// partitionSphericalRows for the arguments).
func (ws *workspace) partitionCubicRows(out []float64, rows []gridRow, rx, ry, rz []float64, vx, vy, vz, off, a float64, sg []float64, lo float64) {
	N := len(out)
	absA := math.Abs(a)
	for r := range rows {
		rw := &rows[r]
		n := rw.i1 - rw.i0
		t0 := vx*rx[r] + vy*ry[r] + vz*rz[r] + off + float64(rw.i0)*a // line coordinate of the run's first node
		segs := absA * float64(n)
		o0 := rw.off
		if segs <= maxCubicSegments && segs <= float64(n)/4 {
			partitionCubicSegments(ws.diff[o0:o0+n], ws.diff[N+o0:N+o0+n], ws.diff[2*N+o0:2*N+o0+n], ws.diff[3*N+o0:3*N+o0+n], sg, lo, t0, a)
			ws.diffUsed, ws.diffCubic = true, true
		} else {
			partitionCubicRow(out[o0:o0+n], sg, lo, t0, a)
		}
	}
}

// partitionSphericalRows adds one spherical partition line (direction
// (vx, vy, vz), offset off, step a along the rows, inv = 1/a or 0, signs sg
// from interval lo) to the rows, whose starts are rx, ry, rz: a row that
// crosses few intervals (|a|·n ≤ n/4) adds one linear piece per interval to
// the difference arrays diff (two arrays of len(out) values laid out like
// out), the others are added node by node. It reports whether any piece
// went to the difference arrays.
//
// On interval k the value ε_k·(t0 − k − ½ + a·q) is linear in the node q;
// sg[k − lo] is ±amp·ε_k. The walk over the intervals (up for a > 0, down
// for a < 0; one piece for a = 0) is written out in the row loop: a call
// per row would cost as much as a few intervals.
func partitionSphericalRows(diff, out []float64, rows []gridRow, rx, ry, rz []float64, vx, vy, vz, off, a, inv float64, sg []float64, lo float64) bool {
	N := len(out)
	diff = diff[:2*N]
	rx, ry, rz = rx[:len(rows)], ry[:len(rows)], rz[:len(rows)]
	absA := math.Abs(a)
	used := false
	for r := range rows {
		rw := &rows[r]
		n := rw.i1 - rw.i0
		t0 := vx*rx[r] + vy*ry[r] + vz*rz[r] + off + float64(rw.i0)*a // line coordinate of the run's first node
		o0 := rw.off
		if !(absA*float64(n) <= float64(n)/4) {
			partitionSphericalRow(out[o0:o0+n], sg, lo, t0, a)
			continue
		}
		used = true
		d0 := diff[o0 : o0+n]
		d1 := diff[N+o0 : N+o0+n]
		k := math.Floor(t0)
		ki := int(k - lo)
		s := sg[ki]
		c0, c1 := s*(t0-k-0.5), s*a
		d0[0] += c0
		d1[0] += c1
		fn := float64(n)
		if a > 0 {
			for q0 := 0; ; {
				// First node of interval k+1: ⌈(k + 1 − t0)/a⌉.
				x := (k + 1 - t0) * inv
				if !(x < fn) {
					break
				}
				q := int(x)
				if float64(q) < x {
					q++
				}
				q = max(q, q0+1)
				if q >= n {
					break
				}
				k++
				ki++
				p0, p1 := c0, c1
				s = sg[ki]
				c0, c1 = s*(t0-k-0.5), s*a
				d0[q] += c0 - p0
				d1[q] += c1 - p1
				q0 = q
			}
		} else if a < 0 {
			for q0 := 0; ; {
				// First node of interval k−1: ⌊(k − t0)/a⌋ + 1.
				x := (k - t0) * inv
				if !(x < fn) {
					break
				}
				q := int(x)
				if float64(q) > x {
					q--
				}
				q = max(q+1, q0+1)
				if q >= n {
					break
				}
				k--
				ki--
				p0, p1 := c0, c1
				s = sg[ki]
				c0, c1 = s*(t0-k-0.5), s*a
				d0[q] += c0 - p0
				d1[q] += c1 - p1
				q0 = q
			}
		}
	}
	return used
}

// maxCubicSegments bounds the intervals per row handled by the polynomial
// difference arrays of the cubic process: the local cubic's coefficients
// grow like the number of intervals crossed cubed, and so does rounding.
const maxCubicSegments = 8

// The partition segment kernels walk the intervals crossed by a run of n
// nodes with line coordinates t_q = t0 + q·a, |a| small enough that each
// interval spans several nodes. The first node of the next interval is
// ⌈(k + 1 − t0)/a⌉ (a > 0) or ⌊(k − t0)/a⌋ + 1 (a < 0); nodes within rounding
// of a boundary (where the process jumps) may fall on either side,
// deterministically. At each boundary the difference arrays receive the
// change of the polynomial coefficients, so one pass (integrateLinear,
// integrateCubic) recovers the values.

// firstNode returns the first node index after the interval that starts at
// node q0 and whose boundary lies at coordinate x = (boundary − t0)/a:
// ⌈x⌉ for a > 0, ⌊x⌋ + 1 for a < 0, at least q0 + 1 and at most n.
func firstNode(x float64, up bool, q0, n int) int {
	if !(x < float64(n)) { // also NaN
		return n
	}
	q := int(x)
	if up {
		if float64(q) < x {
			q++
		}
	} else {
		if float64(q) > x {
			q--
		}
		q++
	}
	return min(max(q, q0+1), n)
}

// partitionCubicSegments adds one cubic line: with c = t0 − k − ½ the value
// ε_k·(p/4 − p³), p = c + a·q, is a cubic in q.
func partitionCubicSegments(d0, d1, d2, d3 []float64, sg []float64, lo, t0, a float64) {
	n := len(d0)
	d1, d2, d3 = d1[:n], d2[:n], d3[:n]
	k := math.Floor(t0)
	ki := int(k - lo)
	up := a > 0
	var inv float64
	if a != 0 {
		inv = 1 / a
	}
	a2 := a * a
	var p0, p1, p2, p3 float64
	for q0 := 0; ; {
		s := sg[ki]
		c := t0 - k - 0.5
		c0 := s * c * (0.25 - c*c)
		c1 := s * a * (0.25 - 3*c*c)
		c2 := -s * 3 * c * a2
		c3 := -s * a2 * a
		d0[q0] += c0 - p0
		d1[q0] += c1 - p1
		d2[q0] += c2 - p2
		d3[q0] += c3 - p3
		p0, p1, p2, p3 = c0, c1, c2, c3
		if a == 0 {
			return
		}
		var q1 int
		if up {
			q1 = firstNode((k+1-t0)*inv, true, q0, n)
			k++
			ki++
		} else {
			q1 = firstNode((k-t0)*inv, false, q0, n)
			k--
			ki--
		}
		if q1 >= n {
			return
		}
		q0 = q1
	}
}

// integrateLinear adds c0(q) + c1(q)·q to o[q], the coefficients being the
// prefix sums of the difference arrays, and clears the arrays.
func integrateLinear(o, d0, d1 []float64) {
	n := len(o)
	d0, d1 = d0[:n], d1[:n]
	var c0, c1 float64
	for q := range o {
		c0 += d0[q]
		c1 += d1[q]
		d0[q], d1[q] = 0, 0
		o[q] += c0 + c1*float64(q)
	}
}

// integrateCubic is integrateLinear for cubic pieces.
func integrateCubic(o, d0, d1, d2, d3 []float64) {
	n := len(o)
	d0, d1, d2, d3 = d0[:n], d1[:n], d2[:n], d3[:n]
	var c0, c1, c2, c3 float64
	for q := range o {
		c0 += d0[q]
		c1 += d1[q]
		c2 += d2[q]
		c3 += d3[q]
		d0[q], d1[q], d2[q], d3[q] = 0, 0, 0, 0
		fq := float64(q)
		o[q] += c0 + fq*(c1+fq*(c2+fq*c3))
	}
}

// partitionSphericalRow adds one spherical partition line node by node
// (lines crossing many intervals per row): o[q] += sg[⌊t_q⌋ − lo]·p_q.
func partitionSphericalRow(o, sg []float64, lo, t0, a float64) {
	for q := range o {
		t := t0 + float64(q)*a
		fk := math.Floor(t)
		o[q] += sg[int(fk-lo)] * (t - fk - 0.5)
	}
}

// partitionCubicRow adds one cubic partition line node by node:
// o[q] += sg[k]·p(¼ − p²).
func partitionCubicRow(o, sg []float64, lo, t0, a float64) {
	for q := range o {
		t := t0 + float64(q)*a
		fk := math.Floor(t)
		p := t - fk - 0.5
		o[q] += sg[int(fk-lo)] * (p * (0.25 - p*p))
	}
}

// stairsLines adds the lines of a stairs set (random walks tabulated over
// the field's domain).
func stairsLines(ls *lineSet, gg *gridGeom, rows []gridRow, out []float64) {
	l0, l1 := 0, len(ls.vx)
	for _, rw := range rows {
		x, y, z := gg.rowStart(rw.j, rw.k)
		n := rw.i1 - rw.i0
		o := out[rw.off : rw.off+n]
		fi0 := float64(rw.i0)
		for l := l0; l < l1; l++ {
			a := ls.vx[l]*gg.e[0][0] + ls.vy[l]*gg.e[0][1] + ls.vz[l]*gg.e[0][2]
			tr := ls.vx[l]*x + ls.vy[l]*y + ls.vz[l]*z + ls.off[l]
			w := ls.walk[ls.walkOff[l]:ls.walkOff[l+1]]
			lo := float64(ls.kLo[l])
			for i := range o {
				t := tr + (fi0+float64(i))*a
				k := math.Floor(t) - lo
				if k < 0 || k >= float64(len(w)) {
					panic("tbsim: grid node outside the field's domain (linear structure)")
				}
				o[i] += w[int(k)]
			}
		}
	}
}
