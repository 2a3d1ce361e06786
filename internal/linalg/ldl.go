package linalg

import "math"

// The packed L D Lᵀ form and its row updates (package kriging's Estimate
// follows its targets with them).
//
// K = L D Lᵀ with L unit lower triangular is stored packed like a Cholesky
// factor with D_i in the place of the unit diagonal, and 1/D_i beside it. A
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
//     below PivotTolerance·K_jj stops the update.
//
// Vectors carried as extra last rows of the factor (the bordered matrix's)
// are updated along: DeleteRow sweeps them like the other rows and
// AppendRows extends them.

// ToLDL rescales the n × n packed Cholesky factor l (reciprocal diagonal
// invd) in place into the L D Lᵀ form: L_ik/L_kk below the diagonal, D_i =
// L_ii² on it, and 1/D_i in invd.
func ToLDL(l, invd []float64, n int) {
	invd = invd[:n]
	for i := 0; i < n; i++ {
		row := l[RowStart(i) : RowStart(i)+i+1]
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

// DeleteRow removes row and column p from the n × n packed L D Lᵀ factor
// l in place, leaving the (n−1) × (n−1) factor of the remaining rows, in
// the same order, and their 1/D in invd. The carried rows y and u (nil to
// skip) of length n lose their entry p and are updated like the other
// rows. pk and bk are scratch of length n.
func DeleteRow(l []float64, invd []float64, n, p int, y, u, pk, bk []float64) {
	// Old row i becomes row i−1: its columns before p are kept; its entry x
	// in column p is swept through the columns p+1..i−1 by x −= p_k·L_ik,
	// L_ik += b_k·x, with p_k and b_k found on the diagonals of the rows
	// before it, then its pivot grows by α·x². New row i−1 ends where old
	// row i starts, so working downwards never overwrites unread data.
	// Rows go in pairs, the second applying the first's (p_i, b_i)
	// last, their recurrences interleaved. The sweeps are short (the
	// deleted rows are mostly near the end), so the rows are addressed by
	// offsets into l rather than through sub-slices.
	l = l[:PackedLen(n)]
	pk, bk, invd = pk[:n], bk[:n], invd[:n]
	alpha := l[RowStart(p)+p]
	i := p + 1
	for ; i+1 < n; i += 2 {
		// Old rows i and i+1 start at oa and ob = oa+i+1; new rows i−1
		// and i start at wa = oa−i and wb = oa.
		oa := RowStart(i)
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
		o := RowStart(i)
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

// AppendRows completes the q last rows n0..n0+q−1 of the packed L D Lᵀ
// factor l (1/D in invd; unit holds ones): each of them holds the
// covariances of its datum with all the rows before it and, on its
// diagonal, the datum's variance. It solves L w = K(·, j) for each, sets the
// row to D⁻¹w and the pivot D_j = K_jj − wᵀD⁻¹w, and extends the carried
// rows y and u (nil to skip) with the data's entries yv[a] and 1. v (nil to
// skip), of length n0+q, is overwritten by L⁻¹v on the way: the forward
// substitutions through the first n0 rows go two vectors at a time, so that
// their dependency chains overlap. vecs is scratch of capacity q+1. It
// returns false, leaving rows partly written, when a pivot is not larger
// than PivotTolerance times the datum's variance.
func AppendRows(l, invd, unit []float64, n0, q int, y, yv, u, v []float64, vecs [][]float64) bool {
	vecs = vecs[:0]
	for r := n0; r < n0+q; r++ {
		vecs = append(vecs, l[RowStart(r):RowStart(r)+n0])
	}
	if v != nil {
		vecs = append(vecs, v[:n0])
	}
	for a := 0; a+1 < len(vecs); a += 2 {
		Forward2(l, n0, vecs[a], vecs[a+1])
	}
	if len(vecs)%2 == 1 {
		Forward(l, n0, unit, vecs[len(vecs)-1])
	}
	ys, us := unit, unit // a missing carried row reads ones
	if y != nil {
		ys = y
	}
	if u != nil {
		us = u
	}
	for r := n0; r < n0+q; r++ {
		row := l[RowStart(r) : RowStart(r)+r+1]
		w := row[:r]
		// The substitution through the rows appended before this one.
		for b := n0; b < r; b++ {
			w[b] -= Dot(l[RowStart(b):RowStart(b)+b], w[:b])
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
		if !(d > PivotTolerance*math.Abs(diag)) {
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
			v[r] -= Dot(l[RowStart(r):RowStart(r)+r], v[:r])
		}
	}
	return true
}

// Forward2 overwrites a and b with L⁻¹a and L⁻¹b for the first n rows of
// the packed unit lower triangular l (its diagonal is not read), four rows
// at a time like Forward, the two vectors' sums interleaved.
func Forward2(l []float64, n int, a, b []float64) {
	a, b = a[:n], b[:n]
	l = l[:PackedLen(n)]
	i := 0
	for ; i+4 <= n; i += 4 {
		blk := l[RowStart(i) : RowStart(i)+4*i+10]
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
		r := l[RowStart(i) : RowStart(i)+i]
		a[i] -= Dot(r, a[:i])
		b[i] -= Dot(r, b[:i])
	}
}
