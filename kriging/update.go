package kriging

import "math"

// Updating factorisations (Estimate only).
//
// Consecutive targets of a grid row mostly differ by one to three
// neighbours. Estimate's Solvers therefore derive a target's factorisation
// from the previous target's instead of factorising anew: a neighbour that
// left is deleted from the factor, a neighbour that arrived is appended.
// These factorisations are K = L D Lᵀ with L unit lower triangular, packed
// like a Cholesky factor with D_i in the place of the unit diagonal, the
// rows in the factor's own order (factor.ord) and 1/D_i in factor.invd. A
// fresh one is the Cholesky factor rescaled: L_ik/L_kk, D_i = L_ii².
//
//   - Deleting row and column p leaves the rows after p with one column too
//     many: their block needs the rank-one update L₃₃D₃L₃₃ᵀ + D_p l lᵀ,
//     l the deleted column below p. It is done row by row with the
//     square-root-free recurrence of Gill, Golub, Murray and Saunders (1974,
//     method C1), which is stable for a positive update: every pivot
//     grows.
//   - Appending a datum j solves L w = K(·, j) and sets the row to D⁻¹w and
//     D_j = K_jj − wᵀD⁻¹w: one forward substitution. A pivot D_j at or
//     below pivotTolerance·K_jj stops the update; the system is then
//     factorised anew (with regularisation if needed).
//
// The factor also carries y = D⁻¹L⁻¹(z − m) (simple) or D⁻¹L⁻¹z
// (ordinary) and, for ordinary kriging, u = D⁻¹L⁻¹1: they are the last
// row of the factor of K bordered by the values (or ones), so deletions
// update them as one more row and appends extend them. A target then needs
// one forward substitution L v = k and no back substitution, with
// kᵀK⁻¹k = vᵀD⁻¹v, kᵀK⁻¹(z − m) = vᵀy, 1ᵀK⁻¹k = vᵀu, 1ᵀK⁻¹1 = uᵀDu and
// 1ᵀK⁻¹z = uᵀDy: simple kriging gives z* = m + vᵀy and σ² = C(0) − vᵀD⁻¹v;
// ordinary kriging μ = (vᵀu − 1)/(uᵀDu), z* = vᵀy − μ uᵀDy and
// σ² = C(0) − (vᵀD⁻¹v − μ vᵀu) − μ.
//
// An updated factor differs from a fresh factorisation of the same system by
// rounding only, but it depends on the targets before it: Estimate restarts
// every chunk of targets from fresh factorisations, so its output is still a
// function of the request alone, and a factor is refactorised after
// maxUpdates successive updates so that rounding does not build up.

// maxUpdates is the number of successive updates after which a factor is
// computed anew.
const maxUpdates = 32

// sweepRow is the overhead of sweeping one row of a deletion, in
// multiply-adds (worthSliding's cost model).
const sweepRow = 20

// maxStaged is the largest number of neighbours an update appends (more
// cost about as much as a fresh factorisation).
const maxStaged = 16

// toLDL rescales the n × n packed Cholesky factor l (reciprocal diagonal
// invd) in place into the L D Lᵀ form: L_ik/L_kk below the diagonal, D_i =
// L_ii² on it, and 1/D_i in invd.
func toLDL(l, invd []float64, n int) {
	invd = invd[:n]
	for i := 0; i < n; i++ {
		row := l[rowStart(i) : rowStart(i)+i+1]
		iv := invd[:i]
		r := row[:len(iv)]
		for k, v := range r {
			r[k] = v * iv[k]
		}
		row[i] *= row[i]
	}
	for i, v := range invd {
		invd[i] = v * v
	}
}

// deleteRow removes row and column p from the n × n packed L D Lᵀ factor
// l in place, leaving the (n−1) × (n−1) factor of the remaining rows, in
// the same order, and their 1/D in invd. The carried rows y and u (nil to
// skip) of length n lose their entry p and are updated like the other
// rows. pk and bk are scratch of length n.
func deleteRow(l []float64, invd []float64, n, p int, y, u, pk, bk []float64) {
	// Old row i becomes row i−1: its columns before p are kept; its entry x
	// in column p is swept through the columns p+1..i−1 by x −= p_k·L_ik,
	// L_ik += b_k·x, with p_k and b_k found on the diagonals of the rows
	// before it, then its pivot grows by α·x². New row i−1 ends where old
	// row i starts, so working downwards never overwrites unread data.
	// Rows go in pairs, the second applying the first's (p_i, b_i)
	// last, their recurrences interleaved. The sweeps are short (the
	// deleted rows are mostly near the end), so the rows are addressed by
	// offsets into l rather than through sub-slices.
	l = l[:packedLen(n)]
	pk, bk, invd = pk[:n], bk[:n], invd[:n]
	alpha := l[rowStart(p)+p]
	i := p + 1
	for ; i+1 < n; i += 2 {
		// Old rows i and i+1 start at oa and ob = oa+i+1; new rows i−1
		// and i start at wa = oa−i and wb = oa.
		oa := rowStart(i)
		ob, wa := oa+i+1, oa-i
		xa, xb := l[oa+p], l[ob+p]
		copy(l[wa:wa+p], l[oa:oa+p])
		copy(l[oa:oa+p], l[ob:ob+p])
		for k := p + 1; k < i; k++ {
			la, lb := l[oa+k], l[ob+k]
			pkk, bkk := pk[k], bk[k]
			xa -= pkk * la
			xb -= pkk * lb
			l[wa+k-1] = la + bkk*xa
			l[oa+k-1] = lb + bkk*xb
		}
		var b float64
		alpha, b = growPivot(alpha, l[oa+i], xa, &l[wa+i-1], &invd[i-1])
		pk[i], bk[i] = xa, b
		lb := l[ob+i]
		xb -= xa * lb
		l[oa+i-1] = lb + b*xb
		alpha, bk[i+1] = growPivot(alpha, l[ob+i+1], xb, &l[oa+i], &invd[i])
		pk[i+1] = xb
	}
	if i < n {
		o := rowStart(i)
		w := o - i
		x := l[o+p]
		copy(l[w:w+p], l[o:o+p])
		for k := p + 1; k < i; k++ {
			lo := l[o+k]
			x -= pk[k] * lo
			l[w+k-1] = lo + bk[k]*x
		}
		_, bk[i] = growPivot(alpha, l[o+i], x, &l[w+i-1], &invd[i-1])
		pk[i] = x
	}
	for _, v := range [2][]float64{y, u} {
		if v == nil {
			continue
		}
		v = v[:n]
		x := v[p]
		for k := p + 1; k < n; k++ {
			lv := v[k]
			x -= pk[k] * lv
			v[k-1] = lv + bk[k]*x
		}
	}
}

// growPivot applies the rank-one update of weight alpha to the pivot d of
// a row whose swept entry is x: it writes the new pivot d + α·x² into *l
// and its reciprocal into *invd, and returns the weight for the next rows
// α·d/(d + α·x²) and the coefficient b = α·x/(d + α·x²).
func growPivot(alpha, d, x float64, l, invd *float64) (next, b float64) {
	dn := d + alpha*x*x
	t := alpha / dn
	*l = dn
	*invd = 1 / dn
	return d * t, x * t
}

// appendRows completes the q last rows n0..n0+q−1 of the packed L D Lᵀ
// factor l (1/D in invd; unit holds ones): each of them holds the
// covariances of its datum with all the rows before it and, on its
// diagonal, the datum's variance. It solves L w = K(·, j) for each, sets the
// row to D⁻¹w and the pivot D_j = K_jj − wᵀD⁻¹w, and extends the carried
// rows y and u (nil to skip) with the data's entries yv[a] and 1. v (nil to
// skip), of length n0+q, is overwritten by L⁻¹v on the way: the forward
// substitutions through the first n0 rows go two vectors at a time, so that
// their dependency chains overlap. vecs is scratch of capacity q+1. It
// returns false, leaving rows partly written, when a pivot is not larger
// than pivotTolerance times the datum's variance.
func appendRows(l, invd, unit []float64, n0, q int, y, yv, u, v []float64, vecs [][]float64) bool {
	vecs = vecs[:0]
	for r := n0; r < n0+q; r++ {
		vecs = append(vecs, l[rowStart(r):rowStart(r)+n0])
	}
	if v != nil {
		vecs = append(vecs, v[:n0])
	}
	for a := 0; a+1 < len(vecs); a += 2 {
		forward2(l, n0, vecs[a], vecs[a+1])
	}
	if len(vecs)%2 == 1 {
		forward(l, n0, unit, vecs[len(vecs)-1])
	}
	ys, us := unit, unit // a missing carried row reads ones
	if y != nil {
		ys = y
	}
	if u != nil {
		us = u
	}
	for r := n0; r < n0+q; r++ {
		row := l[rowStart(r) : rowStart(r)+r+1]
		w := row[:r]
		// The substitution through the rows appended before this one.
		for b := n0; b < r; b++ {
			w[b] -= dot(l[rowStart(b):rowStart(b)+b], w[:b])
		}
		// One pass: the pivot D_j = K_jj − Σ w_k²/D_k, the products of w
		// with the carried rows and the row scaled to D⁻¹w.
		diag := row[r]
		iv, yr, ur := invd[:len(w)], ys[:len(w)], us[:len(w)]
		d, sy, su := diag, 0.0, 0.0
		for k, x := range w {
			t := x * iv[k]
			d -= x * t
			sy += x * yr[k]
			su += x * ur[k]
			w[k] = t
		}
		if !(d > pivotTolerance*math.Abs(diag)) {
			return false
		}
		inv := 1 / d
		if y != nil {
			y[r] = (yv[r-n0] - sy) * inv
		}
		if u != nil {
			u[r] = (1 - su) * inv
		}
		row[r] = d
		invd[r] = inv
	}
	if v != nil {
		for r := n0; r < n0+q; r++ {
			v[r] -= dot(l[rowStart(r):rowStart(r)+r], v[:r])
		}
	}
	return true
}

// forward2 overwrites a and b with L⁻¹a and L⁻¹b for the first n rows of
// the packed unit lower triangular l (its diagonal is not read), four rows
// at a time like forward, the two vectors' sums interleaved.
func forward2(l []float64, n int, a, b []float64) {
	a, b = a[:n], b[:n]
	l = l[:packedLen(n)]
	i := 0
	for ; i+4 <= n; i += 4 {
		blk := l[rowStart(i) : rowStart(i)+4*i+10]
		r1 := blk[i+1 : 2*i+3]
		r2 := blk[2*i+3 : 3*i+6]
		r3 := blk[3*i+6 : 4*i+10]
		ya, yb := a[:i], b[:i][:i]
		p0, p1, p2, p3 := blk[:i][:len(ya)], r1[:len(ya)], r2[:len(ya)], r3[:len(ya)]
		var s0, s1, s2, s3, t0, t1, t2, t3 float64
		for k, x := range ya {
			z := yb[k]
			s0 += x * p0[k]
			t0 += z * p0[k]
			s1 += x * p1[k]
			t1 += z * p1[k]
			s2 += x * p2[k]
			t2 += z * p2[k]
			s3 += x * p3[k]
			t3 += z * p3[k]
		}
		u0 := a[i] - s0
		v0 := b[i] - t0
		u1 := a[i+1] - s1 - r1[i]*u0
		v1 := b[i+1] - t1 - r1[i]*v0
		u2 := a[i+2] - s2 - r2[i]*u0 - r2[i+1]*u1
		v2 := b[i+2] - t2 - r2[i]*v0 - r2[i+1]*v1
		a[i], a[i+1], a[i+2], a[i+3] = u0, u1, u2, a[i+3]-s3-r3[i]*u0-r3[i+1]*u1-r3[i+2]*u2
		b[i], b[i+1], b[i+2], b[i+3] = v0, v1, v2, b[i+3]-t3-r3[i]*v0-r3[i+1]*v1-r3[i+2]*v2
	}
	for ; i < n; i++ {
		r := l[rowStart(i) : rowStart(i)+i]
		a[i] -= dot(r, a[:i])
		b[i] -= dot(r, b[:i])
	}
}

// startVectors converts the fresh Cholesky factor of f (a sliding
// Solver's) to the L D Lᵀ form and computes y and u by forward
// substitution.
func (s *Solver) startVectors(f *factor) {
	n := len(f.ord)
	toLDL(f.l, f.invd, n)
	if f.y != nil {
		y := f.y[:n]
		s.dataVector(y, f.ord)
		carried(f, y, s.unit)
	}
	if f.u != nil {
		u := f.u[:n]
		for a := range u {
			u[a] = 1
		}
		carried(f, u, s.unit)
	}
	s.finishVectors(f)
}

// carried overwrites v by D⁻¹L⁻¹v for the L D Lᵀ factor f (unit holds
// ones).
func carried(f *factor, v, unit []float64) {
	n := len(v)
	forward(f.l, n, unit, v)
	for a, d := range f.invd[:n] {
		v[a] *= d
	}
}

// dataVector writes the values of the data ord into y (see dataValue).
func (s *Solver) dataVector(y []float64, ord []int32) {
	for a, i := range ord {
		y[a] = s.dataValue(i)
	}
}

// dataValue returns the value of datum i, less the mean for simple
// kriging.
func (s *Solver) dataValue(i int32) float64 {
	if s.k.p.Method == Simple {
		return s.k.values[i] - s.k.p.Mean
	}
	return s.k.values[i]
}

// finishVectors computes the products of u that every target uses:
// uᵀDu = 1ᵀK⁻¹1 and uᵀDy = 1ᵀK⁻¹z.
func (s *Solver) finishVectors(f *factor) {
	if f.u == nil {
		return
	}
	n := len(f.ord)
	u := f.u[:n]
	uu, uy := 0.0, 0.0
	for i, v := range u {
		d := f.l[rowStart(i)+i]
		uu += v * d * v
		if f.y != nil {
			uy += v * d * f.y[i]
		}
	}
	f.sumOnes, f.uy = uu, uy
}

// worthSliding reports whether the factorisation of s.nb should be derived
// from from, the factorisation of the previous target's set, by slide: not
// when from carries a shift or a ridge, has had maxUpdates updates already,
// when its deletions since its fresh factorisation (this one included) cost
// as much as a fresh factorisation (the data leaving now sit deep in its
// rows: refactorising puts them last again), or when the update would cost
// more than a fresh factorisation. It lists the rows to delete in
// s.removed and adds their cost to from.swept; track must have just marked
// the data of both sets.
func (s *Solver) worthSliding(from *factor) bool {
	if from.shift != 0 || from.ridge != 0 || from.updates >= maxUpdates || len(s.fresh) > maxStaged {
		return false
	}
	inBoth := s.gen + 1
	rm := s.removed[:0]
	for a, j := range from.ord {
		if s.mark[j] != inBoth {
			rm = append(rm, a)
		}
	}
	s.removed = rm
	// Multiply-adds: a deletion with d rows after it sweeps d²/2 entries
	// (two each) and pays sweepRow per row, an append at size m solves
	// m²/2; a fresh factorisation takes about m³/6 and gathers m²/2
	// entries.
	m, swept := len(from.ord), 0
	for q := len(rm) - 1; q >= 0; q-- {
		d := m - 1 - rm[q]
		swept += d*d + sweepRow*d
		m--
	}
	cost := swept
	for range s.fresh {
		cost += m*m/2 + 2*m
		m++
	}
	fresh := m*m*m/6 + m*m/2
	// Past the cost of one fresh factorisation of deletions since the last
	// one, its rows no longer put the data about to leave last.
	if from.swept+swept > fresh || cost >= fresh {
		return false
	}
	from.swept += swept
	return true
}

// slide turns f, the factorisation of the previous target's set, into
// that of s.nb in place, as worthSliding planned: it deletes the rows of
// the data that left and stages the rows of the data that arrived (in
// exitOrder) at the end, filled with their covariances, for complete to
// solve (s.pending of them).
func (s *Solver) slide(f *factor) {
	n := len(f.ord)
	for q := len(s.removed) - 1; q >= 0; q-- {
		p := s.removed[q]
		deleteRow(f.l, f.invd, n, p, f.y, f.u, s.pk, s.bk)
		f.ord = append(f.ord[:p], f.ord[p+1:]...)
		n--
	}
	add := s.fresh
	s.exitOrder(add)
	f.ord = append(f.ord, add...)
	for a, j := range add {
		r := n + a
		row := f.l[rowStart(r) : rowStart(r)+r+1]
		s.cov.column(row[:r], j, f.ord[:r], s.r2)
		row[r] = s.cov.variance(j)
	}
	s.pending = len(add)
	f.updates++
	if s.pending == 0 {
		s.finishVectors(f)
	}
}

// complete solves the rows slide staged in f together with the target's
// right-hand side v (overwritten by L⁻¹v), and reports whether every new
// pivot was large enough.
func (s *Solver) complete(f *factor, v []float64) bool {
	q := s.pending
	s.pending = 0
	n0 := len(f.ord) - q
	var yv []float64
	if f.y != nil {
		yv = s.yv[:q]
		for a, j := range f.ord[n0:] {
			yv[a] = s.dataValue(j)
		}
	}
	if !appendRows(f.l, f.invd, s.unit, n0, q, f.y, yv, f.u, v, s.vecs) {
		return false
	}
	s.finishVectors(f)
	return true
}

// aheadSteps is how many targets ahead of the current one a sliding Solver
// looks to order the rows of its factorisations (see exitOrder).
const aheadSteps = 4

// exitOrder sorts the data ord by their anisotropic distance (in the search
// ellipsoid's metric) to s.ahead, a target a few steps ahead, nearest
// first. The data that will leave the neighbourhood soonest, the farthest
// from where the targets go, then take the last rows of a factorisation,
// where deleting them is cheapest (deleteRow rotates the rows after the
// deleted one).
func (s *Solver) exitOrder(ord []int32) {
	c := s.k.coords
	a := &s.search3
	sc := s.score[:len(ord)]
	for q, i := range ord {
		u, v, w := a.Apply(c[3*i]-s.ahead[0], c[3*i+1]-s.ahead[1], c[3*i+2]-s.ahead[2])
		d := u*u + v*v + w*w
		b := q - 1
		for ; b >= 0 && (sc[b] > d || sc[b] == d && ord[b] > i); b-- {
			sc[b+1], ord[b+1] = sc[b], ord[b]
		}
		sc[b+1], ord[b+1] = d, i
	}
}
