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
	// spectral, per line of a chunk padded to a multiple of specGroup with
	// silent lines: k = 2cos a; the anchors cos/sin of A·a and (A+1)·a of
	// the blocks of the tile; the phasors of the rows of a run, per k
	// (amplitude included) and per j; the phasor of the current row and
	// the recurrence state of the current block.
	sk, sanc, sq, sw, sp, sst []float64
	sbuf                      []float64  // a partial block, padded
	signs                     []float64  // partition: ±amp per interval, the tables of all lines of a set
	pl                        []partLine // partition: the lines of the current set
	// partition: difference arrays of the segment polynomials, four arrays
	// laid out like the output, and whether any (cubic) piece was added.
	diff                []float64
	diffUsed, diffCubic bool
	nug                 *nuggetSource
	// rx, ry, rz are the row starts (gridGeom.rowStart) of the rows of the
	// current addRows call.
	rx, ry, rz []float64
	// done, when closed, stops the kernels early (their output is then
	// incomplete): the ctx.Done() of the computation (nil: never).
	done <-chan struct{}
}

// stopped reports whether the computation the workspace serves was
// cancelled: the kernels check it in every loop that can run long (a sign
// table of a tile spanning millions of intervals, say) so that a cancel
// stops them within milliseconds and memory stops growing.
func (ws *workspace) stopped() bool {
	select {
	case <-ws.done:
		return true
	default:
		return false
	}
}

func newWorkspace() *workspace { return &workspace{nug: newNuggetSource()} }

// specLines is the number of spectral lines whose tables are built
// together (a multiple of specGroup).
const specLines = 48

// specGroup is the number of spectral lines added by one kernel call
// (spectral6).
const specGroup = 6

// specBlock is the spacing of the anchors of the spectral recurrence along
// a row: the values of a line at nodes A and A + 1, A a multiple of
// specBlock, come from exact cos/sin tables, and the following nodes of the
// block from the three-term recurrence, whose rounding error stays below
// ~2·specBlock²·ε of the amplitude. Every value depends only on the node,
// the row and the line, never on the tile.
const specBlock = 128

// specRunSpan bounds the number of distinct j plus distinct k of a run of
// rows sharing the per-j and per-k phasor tables.
const specRunSpan = 256

// anchorEvery is the spacing of exactly computed entries of the per-j
// phasor tables: cos/sin of j·b is computed by Sincos at multiples of
// anchorEvery and by phasor multiplication in between, so every entry
// depends only on (j, b), never on the tile, and rounding drift stays below
// ~anchorEvery·ε.
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
		if ws.stopped() {
			return
		}
		ls := f.sets[r*f.nStruct+s]
		n := len(ls.vx)
		switch ls.proc {
		case processSpectral:
			for l0 := 0; l0 < n && !ws.stopped(); l0 += specLines {
				ws.spectralChunk(ls, l0, min(l0+specLines, n), gg, rows, imin, imax, out)
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

// spectralChunk adds lines [l0, l1) of a spectral set. Along a row the
// value of a line is v_i = amp·cos(θ_row + i·a), a = ω·e₀, which obeys the
// three-term recurrence
//
//	v_{i+1} = 2cos(a)·v_i − v_{i−1}
//
// (one multiplication and one subtraction per node and line). The
// recurrence restarts at every multiple A of specBlock from
//
//	v_A = Re(P·e^{iAa}) = P_re·cos(Aa) − P_im·sin(Aa)
//
// and v_{A+1} alike, with the row phasor P = amp·e^{iθ_row} and exact
// cos/sin tables of the anchors. The row phasors are products of a per-k
// phasor (one Sincos per plane) and a per-j phasor table (fillPhasors),
// built for runs of rows, so no row needs a Sincos of its own.
func (ws *workspace) spectralChunk(ls *lineSet, l0, l1 int, gg *gridGeom, rows []gridRow, imin, imax int, out []float64) {
	nl := l1 - l0
	np := (nl + specGroup - 1) / specGroup * specGroup
	g0, g1 := imin/specBlock, (imax-1)/specBlock+1 // the blocks of the tile
	nb := g1 - g0
	ws.sk = growClear(ws.sk, np)
	ws.sanc = growClear(ws.sanc, 4*np*nb)
	ws.sp = growClear(ws.sp, 2*np)
	ws.sst = growClear(ws.sst, 2*np)
	k, anc := ws.sk, ws.sanc
	vx, vy, vz := ls.vx[l0:l1], ls.vy[l0:l1], ls.vz[l0:l1]
	e0 := gg.e[0]
	for q := 0; q < nl; q++ {
		a := vx[q]*e0[0] + vy[q]*e0[1] + vz[q]*e0[2]
		k[q] = 2 * math.Cos(a)
		for g := g0; g < g1; g++ {
			A := float64(g * specBlock)
			t := anc[4*((g-g0)*np+q) : 4*((g-g0)*np+q)+4]
			t[1], t[0] = math.Sincos(A * a)
			t[3], t[2] = math.Sincos((A + 1) * a)
		}
	}
	for r0 := 0; r0 < len(rows); {
		// A run of rows whose distinct j and k fit the phasor tables.
		jlo, jhi, klo, khi := rows[r0].j, rows[r0].j, rows[r0].k, rows[r0].k
		r1 := r0 + 1
		for ; r1 < len(rows); r1++ {
			rw := &rows[r1]
			nj, nk := max(jhi, rw.j)-min(jlo, rw.j)+1, max(khi, rw.k)-min(klo, rw.k)+1
			if nj+nk > specRunSpan {
				break
			}
			jlo, jhi, klo, khi = min(jlo, rw.j), max(jhi, rw.j), min(klo, rw.k), max(khi, rw.k)
		}
		ws.spectralRun(ls, l0, l1, np, gg, rows[r0:r1], jlo, jhi, klo, khi, g0, out)
		r0 = r1
	}
}

// spectralRun adds lines [l0, l1) (np with the silent padding lines) of a
// spectral set to a run of rows with j in [jlo, jhi] and k in [klo, khi];
// the tables k and anc of the chunk (blocks from g0) are in ws.
func (ws *workspace) spectralRun(ls *lineSet, l0, l1, np int, gg *gridGeom, rows []gridRow, jlo, jhi, klo, khi, g0 int, out []float64) {
	nl := l1 - l0
	nj, nk := jhi-jlo+1, khi-klo+1
	ws.sw = grow(ws.sw, 2*np*nj)
	ws.sq = grow(ws.sq, 2*np*nk)
	k, anc, pw, pq, ph, st := ws.sk[:np], ws.sanc, ws.sw, ws.sq, ws.sp[:2*np], ws.sst[:2*np]
	amp := ls.amp
	vx, vy, vz, off := ls.vx[l0:l1], ls.vy[l0:l1], ls.vz[l0:l1], ls.off[l0:l1]
	e1 := gg.e[1]
	for q := 0; q < nl; q++ {
		b := vx[q]*e1[0] + vy[q]*e1[1] + vz[q]*e1[2]
		fillPhasors(pw[2*q:], 2*np, nj, jlo, b)
	}
	for kk := klo; kk <= khi; kk++ {
		x, y, z := gg.rowStart(0, kk)
		t := pq[2*np*(kk-klo) : 2*np*(kk-klo+1)]
		for q := 0; q < nl; q++ {
			s, c := math.Sincos(vx[q]*x + vy[q]*y + vz[q]*z + off[q])
			t[2*q], t[2*q+1] = amp*c, amp*s
		}
	}
	// The padding lines have zero phasors.
	for m := 0; m < nj; m++ {
		clear(pw[2*np*m+2*nl : 2*np*(m+1)])
	}
	for m := 0; m < nk; m++ {
		clear(pq[2*np*m+2*nl : 2*np*(m+1)])
	}
	for _, rw := range rows {
		if rw.i1 <= rw.i0 {
			continue
		}
		// Row phasor P = (per-k phasor)·(per-j phasor).
		cmulTo(ph, pq[2*np*(rw.k-klo):2*np*(rw.k-klo+1)], pw[2*np*(rw.j-jlo):2*np*(rw.j-jlo+1)])
		o := out[rw.off : rw.off+rw.i1-rw.i0]
		for g := rw.i0 / specBlock; g*specBlock < rw.i1; g++ {
			A := g * specBlock
			lo, hi := max(A, rw.i0), min(A+specBlock, rw.i1)
			spectralStart(st, ph, anc[4*(g-g0)*np:4*(g-g0+1)*np])
			seg := o[lo-rw.i0 : hi-rw.i0]
			// A block the row enters late or leaves after a partial group
			// of four nodes runs from A in a padded buffer.
			partial := lo != A || (hi-A)%4 != 0
			if partial {
				ws.sbuf = growClear(ws.sbuf, (hi-A+3)&^3)
				copy(ws.sbuf[lo-A:], seg)
				seg = ws.sbuf
			}
			for q := 0; q < np; q += specGroup {
				spectral6(seg, (*[2 * specGroup]float64)(st[2*q:]), (*[specGroup]float64)(k[q:]))
			}
			if partial {
				copy(o[lo-rw.i0:hi-rw.i0], ws.sbuf[lo-A:hi-A])
			}
		}
	}
}

// growClear returns b with length n, zeroed, reallocating when needed.
func growClear(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// cmulTo sets p to the elementwise complex products of a and b (interleaved
// real and imaginary parts).
func cmulTo(p, a, b []float64) {
	n := len(p) / 2
	p, a, b = p[:2*n], a[:2*n], b[:2*n]
	for q := 0; q < n; q++ {
		ar, ai, br, bi := a[2*q], a[2*q+1], b[2*q], b[2*q+1]
		p[2*q] = float64(ar*br) - float64(ai*bi)
		p[2*q+1] = float64(ar*bi) + float64(ai*br)
	}
}

// spectralStart sets the recurrence state of every line at the start A of
// a block: st[2q], st[2q+1] = v_A, v_{A+1} from the row phasor ph and the
// anchors anc (cos Aa, sin Aa, cos (A+1)a, sin (A+1)a per line).
func spectralStart(st, ph, anc []float64) {
	n := len(st) / 2
	st, ph, anc = st[:2*n], ph[:2*n], anc[:4*n]
	for q := 0; q < n; q++ {
		pr, pi := ph[2*q], ph[2*q+1]
		t := anc[4*q : 4*q+4 : 4*q+4]
		st[2*q] = float64(pr*t[0]) - float64(pi*t[1])
		st[2*q+1] = float64(pr*t[2]) - float64(pi*t[3])
	}
}

// fillPhasors writes cos(j·b), sin(j·b) for j = j0, …, j0+n−1 at t[m·stride],
// t[m·stride+1], m = j − j0. Entries at multiples of anchorEvery come from
// Sincos; the others are advanced by one complex multiplication from the
// previous anchor, so entry j is the same whatever j0 is.
func fillPhasors(t []float64, stride, n, j0 int, b float64) {
	ws, wc := math.Sincos(b)
	j := j0 - j0%anchorEvery
	s, c := math.Sincos(float64(j) * b)
	// Advance from the anchor below j0 without storing.
	for ; j < j0; j++ {
		c, s = float64(c*wc)-float64(s*ws), float64(s*wc)+float64(c*ws)
		if (j+1)%anchorEvery == 0 {
			s, c = math.Sincos(float64(j+1) * b)
		}
	}
	for m := 0; m < n; m++ {
		if j%anchorEvery == 0 {
			s, c = math.Sincos(float64(j) * b)
		}
		t[m*stride], t[m*stride+1] = c, s
		c, s = float64(c*wc)-float64(s*ws), float64(s*wc)+float64(c*ws)
		j++
	}
}

// spectral6 adds six lines to o (len a multiple of 4, node 0 at a block
// start or a multiple of four nodes after it) by the recurrence
// v_{i+1} = k·v_i − v_{i−1}, k = 2cos a, from st = (v_0, v_1) per line.
// Each line keeps two values u, w updated in place, the newer overwriting
// the older; with signs (+, +, −, −) repeating over the nodes, the update
// alternates between u −= k·w and w += k·u, and node i adds ±u or ±w. The
// results are bit-identical to the plain recurrence (negation is exact), and
// every node sums its lines in line order.
func spectral6(o []float64, st *[12]float64, k *[6]float64) {
	u0, w0, u1, w1, u2, w2, u3, w3, u4, w4, u5, w5 := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[8], st[9], st[10], st[11]
	for i := 0; i+4 <= len(o); i += 4 {
		p := (*[4]float64)(o[i : i+4])
		a := p[0]
		a += u0
		u0 -= float64(k[0] * w0)
		a += u1
		u1 -= float64(k[1] * w1)
		a += u2
		u2 -= float64(k[2] * w2)
		a += u3
		u3 -= float64(k[3] * w3)
		a += u4
		u4 -= float64(k[4] * w4)
		a += u5
		u5 -= float64(k[5] * w5)
		p[0] = a
		a = p[1]
		a += w0
		w0 += float64(k[0] * u0)
		a += w1
		w1 += float64(k[1] * u1)
		a += w2
		w2 += float64(k[2] * u2)
		a += w3
		w3 += float64(k[3] * u3)
		a += w4
		w4 += float64(k[4] * u4)
		a += w5
		w5 += float64(k[5] * u5)
		p[1] = a
		a = p[2]
		a -= u0
		u0 -= float64(k[0] * w0)
		a -= u1
		u1 -= float64(k[1] * w1)
		a -= u2
		u2 -= float64(k[2] * w2)
		a -= u3
		u3 -= float64(k[3] * w3)
		a -= u4
		u4 -= float64(k[4] * w4)
		a -= u5
		u5 -= float64(k[5] * w5)
		p[2] = a
		a = p[3]
		a -= w0
		w0 += float64(k[0] * u0)
		a -= w1
		w1 += float64(k[1] * u1)
		a -= w2
		w2 += float64(k[2] * u2)
		a -= w3
		w3 += float64(k[3] * u3)
		a -= w4
		w4 += float64(k[4] * u4)
		a -= w5
		w5 += float64(k[5] * u5)
		p[3] = a
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
		if ws.stopped() {
			return
		}
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
			if (k-klo)&0xffff == 0xffff && ws.stopped() {
				return // a huge table: stop growing it
			}
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
	for c0 := 0; c0 < len(rows) && !ws.stopped(); {
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
