package kriging

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/internal/fastexp"
	"github.com/geostat-engine/geostat/internal/linalg"
)

// structure is one variogram structure prepared for kriging: its data
// coordinates and block sub-point offsets already mapped into the
// structure's isotropic space, where the reduced distance is Euclidean.
type structure struct {
	typ     geostat.StructureType
	alpha   int
	c       float64         // contribution
	aniso   geostat.Matrix3 // A = D⁻¹ Rᵀ
	data    [][3]float64    // A·(x_i − origin) per datum
	offsets []float64       // A·o_p for the block sub-point offsets, flat xyz
}

// Unit correlations of the common types as functions of the squared reduced
// distance r2, small enough to be inlined into the loops below. They are the
// formulas of geostat.Correlation (docs/math.md 1.3); TestCorrelationKernels
// checks the agreement.

// sphericalRho2 is 1 − 1.5r + 0.5r³ for r < 1, else 0.
func sphericalRho2(r2 float64) float64 {
	if r2 >= 1 {
		return 0
	}
	r := math.Sqrt(r2)
	return 1 - r*(1.5-0.5*r2)
}

// exponentialRho2 is exp(−3r).
func exponentialRho2(r2 float64) float64 { return fastexp.Exp(-3 * math.Sqrt(r2)) }

// gaussianRho2 is exp(−3r²).
func gaussianRho2(r2 float64) float64 { return fastexp.Exp(-3 * r2) }

// rho2 returns the structure's unit correlation (generalised covariance −r
// for a linear structure) at squared reduced distance r2.
func (st *structure) rho2(r2 float64) float64 {
	switch st.typ {
	case geostat.Spherical:
		return sphericalRho2(r2)
	case geostat.Exponential:
		return exponentialRho2(r2)
	case geostat.Gaussian:
		return gaussianRho2(r2)
	}
	return geostat.Correlation(st.typ, st.alpha, math.Sqrt(r2))
}

// addRow adds c·ρ(|x_i − t|) to row[a] for every neighbour i = nb[a] and
// the target t = (tx, ty, tz) in the structure's space, using r2 (at least
// len(nb) long) as scratch, with the type switch outside the loops and the
// exponentials of a row in one fastexp.Slice. Each term equals
// st.c * st.rho2(r²) bit for bit.
func (st *structure) addRow(row []float64, nb []int32, tx, ty, tz float64, r2 []float64) {
	d, c := st.data, st.c
	r2 = r2[:len(nb)]
	row = row[:len(nb)]
	// dist2 returns the squared reduced distance of neighbour a.
	dist2 := func(i int32) float64 {
		p := &d[i]
		dx, dy, dz := p[0]-tx, p[1]-ty, p[2]-tz
		return dx*dx + dy*dy + dz*dz
	}
	switch st.typ {
	case geostat.Spherical:
		for a, i := range nb {
			row[a] += c * sphericalRho2(dist2(i))
		}
		return
	case geostat.Exponential:
		for a, i := range nb {
			r2[a] = -3 * math.Sqrt(dist2(i))
		}
	case geostat.Gaussian:
		for a, i := range nb {
			r2[a] = -3 * dist2(i)
		}
	default:
		for a, i := range nb {
			row[a] += c * st.rho2(dist2(i))
		}
		return
	}
	fastexp.Slice(r2)
	for a, v := range r2 {
		row[a] += c * v
	}
}

// addRowData adds the structure's covariances between datum i and the data
// nb to row (as pair sums them), using r2 (len(nb) long) as scratch.
func (st *structure) addRowData(row []float64, nb []int32, i int32, r2 []float64) {
	d := st.data
	xi, yi, zi := d[i][0], d[i][1], d[i][2]
	st.addRow(row, nb, xi, yi, zi, r2)
}

// covModel evaluates the covariance between the merged data and targets.
//
// All positions are taken relative to origin (the centre of the data's
// bounding box) before the anisotropy transform, so that large world
// coordinates do not cost digits in the differences.
type covModel struct {
	nugget    float64
	st        []structure
	origin    [3]float64
	intrinsic bool
	linearSum float64 // Σ contributions of the linear structures

	// pointVar is C(0) = c0 + Σ stationary c_s: the prior variance of a
	// point (linear structures contribute 0, their generalised covariance
	// at the origin).
	pointVar float64
	// blockVar is C̄(V,V) = (1/n²) Σ_p Σ_q Σ_s c_s ρ_s(|A_s(o_p − o_q)|) +
	// c0/n over the n sub-points: the prior variance of a block (equal to
	// pointVar for a point).
	blockVar float64

	n int // merged data count
	// table caches the structural covariances (no nugget) of pairs of
	// merged data, or is nil: a packed lower triangle (see linalg.RowStart), the
	// covariance of data i ≥ j in table[linalg.RowStart(i)+j], computed the first
	// time a system needs it (see tabled). Only pairs that share a
	// neighbourhood are ever computed, a small part of all pairs, and
	// untouched pages of the table are never even mapped. The merged data
	// are in a spatially coherent order (see Kriger.merge), so the entries
	// of a neighbourhood's system lie in few cache lines.
	table []atomic.Uint64
}

// An entry of the table holds the bits of its covariance, 0 (the bits of
// +0) until it is computed: a covariance of +0 is stored as −0, which
// compares and computes as +0 everywhere in the kriging arithmetic.

// tabled returns the structural covariance of merged data i ≥ j from the
// table, computing and storing it the first time. Goroutines that meet an
// entry at the same time compute the same value (a function of the pair),
// so the table's content does not depend on the scheduling. The hot loops
// (assemble, column) inline the lookup.
func (m *covModel) tabled(i, j int) float64 {
	e := &m.table[linalg.RowStart(i)+j]
	w := e.Load()
	if w == 0 {
		w = m.fill(e, i, j)
	}
	return math.Float64frombits(w)
}

// fill computes the covariance of data i and j, stores it in the table
// entry e and returns the stored bits.
func (m *covModel) fill(e *atomic.Uint64, i, j int) uint64 {
	w := math.Float64bits(m.pair(i, j))
	if w == 0 {
		w = 1 << 63 // −0
	}
	e.Store(w)
	return w
}

// newCovModel prepares the structures for the merged data coords and the
// world sub-point offsets (flat xyz, one point (0,0,0) for point kriging).
func newCovModel(v *geostat.Variogram, coords, offsets []float64) *covModel {
	n := len(coords) / 3
	m := &covModel{nugget: v.Nugget, n: n, st: make([]structure, len(v.Structures))}
	if n > 0 {
		lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		for i := 0; i < n; i++ {
			for d := 0; d < 3; d++ {
				lo[d] = math.Min(lo[d], coords[3*i+d])
				hi[d] = math.Max(hi[d], coords[3*i+d])
			}
		}
		for d := 0; d < 3; d++ {
			m.origin[d] = lo[d] + (hi[d]-lo[d])/2
		}
	}
	m.pointVar = v.Nugget
	for s := range v.Structures {
		vs := &v.Structures[s]
		st := &m.st[s]
		st.typ, st.alpha, st.c = vs.Type, vs.Alpha, vs.Contribution
		st.aniso = vs.Anisotropy().M
		st.data = make([][3]float64, n)
		for i := range st.data {
			p := &st.data[i]
			p[0], p[1], p[2] = m.transform(s, coords[3*i], coords[3*i+1], coords[3*i+2])
		}
		st.offsets = make([]float64, len(offsets))
		for p := 0; p < len(offsets); p += 3 {
			st.offsets[p], st.offsets[p+1], st.offsets[p+2] = st.aniso.Apply(offsets[p], offsets[p+1], offsets[p+2])
		}
		if vs.Type == geostat.Linear {
			m.intrinsic = true
			m.linearSum += vs.Contribution
		} else {
			m.pointVar += vs.Contribution
		}
	}
	m.blockVar = m.meanSubCovariance()
	return m
}

// transform maps the world point (x, y, z) into structure s's isotropic
// space relative to the origin. Data and targets go through this same
// expression, so a target on a datum lands on exactly the datum's bits.
func (m *covModel) transform(s int, x, y, z float64) (float64, float64, float64) {
	a := &m.st[s].aniso
	return a.Apply(x-m.origin[0], y-m.origin[1], z-m.origin[2])
}

// meanSubCovariance returns C̄(V,V) over the sub-point offsets, the nugget
// counting on the n coincident pairs only (c0/n).
func (m *covModel) meanSubCovariance() float64 {
	if len(m.st) == 0 {
		return m.nugget
	}
	np := len(m.st[0].offsets) / 3
	sum := 0.0
	for p := 0; p < np; p++ {
		for q := 0; q < np; q++ {
			for s := range m.st {
				st := &m.st[s]
				o := st.offsets
				dx, dy, dz := o[3*p]-o[3*q], o[3*p+1]-o[3*q+1], o[3*p+2]-o[3*q+2]
				sum += st.c * st.rho2(dx*dx+dy*dy+dz*dz)
			}
		}
	}
	return sum/float64(np*np) + m.nugget/float64(np)
}

// pair returns the structural covariance (no nugget) between merged data i
// and j. pair(i, j) and pair(j, i) are bitwise equal.
func (m *covModel) pair(i, j int) float64 {
	c := 0.0
	for s := range m.st {
		st := &m.st[s]
		d := st.data
		dx, dy, dz := d[i][0]-d[j][0], d[i][1]-d[j][1], d[i][2]-d[j][2]
		c += st.c * st.rho2(dx*dx+dy*dy+dz*dz)
	}
	return c
}

// makeTable allocates the covariance table, empty (see tabled).
func (m *covModel) makeTable() { m.table = make([]atomic.Uint64, linalg.PackedLen(m.n)) }

// spatialOrder returns the merged data in a spatially coherent order: the
// leaves, in tree order, of a recursive median split along the widest axis
// in the first structure's isotropic space. It returns nil, keeping the
// input order, when that is at least as coherent, as data listed sample
// by sample along drill holes are: when the path through the data in
// input order is no longer than in the split order. Without structures
// the order does not matter (nil). It checks ctx at every split of more
// than 2¹⁶ data and returns its error when cancelled.
func (m *covModel) spatialOrder(ctx context.Context) ([]int32, error) {
	if len(m.st) == 0 {
		return nil, nil
	}
	order := make([]int32, m.n)
	for i := range order {
		order[i] = int32(i)
	}
	d := m.st[0].data
	path := func(o []int32) float64 {
		sum := 0.0
		for k := 1; k < len(o); k++ {
			i, j := o[k-1], o[k]
			dx, dy, dz := d[i][0]-d[j][0], d[i][1]-d[j][1], d[i][2]-d[j][2]
			sum += math.Sqrt(dx*dx + dy*dy + dz*dz)
		}
		return sum
	}
	input := path(order)
	var split func(o []int32)
	split = func(o []int32) {
		if len(o) <= 16 || len(o) > 1<<16 && ctx.Err() != nil {
			return
		}
		lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		for _, i := range o {
			for a := 0; a < 3; a++ {
				lo[a] = math.Min(lo[a], d[i][a])
				hi[a] = math.Max(hi[a], d[i][a])
			}
		}
		ax := 0
		for a := 1; a < 3; a++ {
			if hi[a]-lo[a] > hi[ax]-lo[ax] {
				ax = a
			}
		}
		h := len(o) / 2
		selectMedian(o, h, func(x, y int32) bool {
			dx, dy := d[x][ax], d[y][ax]
			return dx < dy || dx == dy && x < y
		})
		split(o[:h])
		split(o[h:])
	}
	split(order)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if input <= path(order) {
		return nil, nil
	}
	return order, nil
}

// selectMedian reorders o so that o[h] is the element a sort by less (a
// strict total order) would put there, the elements before it preceding it
// and those after it following it (Hoare's quickselect with a
// median-of-three pivot: linear time on average).
func selectMedian(o []int32, h int, less func(x, y int32) bool) {
	lo, hi := 0, len(o)-1
	for hi > lo {
		m := lo + (hi-lo)/2
		if less(o[m], o[lo]) {
			o[m], o[lo] = o[lo], o[m]
		}
		if less(o[hi], o[lo]) {
			o[hi], o[lo] = o[lo], o[hi]
		}
		if less(o[hi], o[m]) {
			o[hi], o[m] = o[m], o[hi]
		}
		p := o[m]
		i, j := lo, hi
		for i <= j {
			for less(o[i], p) {
				i++
			}
			for less(p, o[j]) {
				j--
			}
			if i <= j {
				o[i], o[j] = o[j], o[i]
				i++
				j--
			}
		}
		switch {
		case h <= j:
			hi = j
		case h >= i:
			lo = i
		default:
			return
		}
	}
}

// assemble writes the kriging matrix of the neighbours nb, in that order,
// into a (packed lower triangle, see linalg.RowStart): the structural covariances
// plus shift everywhere and nugget + ridge on the diagonal. With the table,
// nb must be increasing (see assembleTable for other orders). r2 (len(nb)
// long) is scratch.
func (m *covModel) assemble(a []float64, nb []int32, shift, ridge float64, r2 []float64) {
	n := len(nb)
	a = a[:linalg.PackedLen(n)]
	diag := m.nugget + ridge
	if m.table != nil {
		// nb is increasing: entry (r, c ≤ r) is in the table row of nb[r].
		for r, i := range nb {
			cols := nb[:r+1]
			dst := a[linalg.RowStart(r) : linalg.RowStart(r)+len(cols)]
			row := m.table[linalg.RowStart(int(i)) : linalg.RowStart(int(i))+int(i)+1]
			for c, j := range cols {
				e := &row[j]
				w := e.Load()
				if w == 0 {
					w = m.fill(e, int(i), int(j))
				}
				dst[c] = math.Float64frombits(w)
			}
			if shift != 0 {
				for c := range dst {
					dst[c] += shift
				}
			}
			dst[r] += diag
		}
		return
	}
	clear(a)
	for s := range m.st {
		st := &m.st[s]
		for r, i := range nb {
			st.addRowData(a[linalg.RowStart(r):linalg.RowStart(r)+r+1], nb[:r+1], i, r2)
		}
	}
	for r := 0; r < n; r++ {
		dst := a[linalg.RowStart(r) : linalg.RowStart(r)+r+1]
		for c := range dst {
			dst[c] += shift
		}
		dst[r] += diag
	}
}

// assembleTable is assemble for a table and neighbours in any order (a
// slider's exit order): each row is gathered like a column (see
// column). The entries of a neighbourhood lie in the same few cache lines of
// the table whatever the order they are read in.
func (m *covModel) assembleTable(a []float64, nb []int32, shift, ridge float64) {
	diag := m.nugget + ridge
	for r, i := range nb {
		dst := a[linalg.RowStart(r) : linalg.RowStart(r)+r+1]
		m.column(dst, i, nb[:r+1], nil)
		if shift != 0 {
			for c := range dst {
				dst[c] += shift
			}
		}
		dst[r] += diag
	}
}

// rhs writes the structural covariances between the neighbours nb and the
// sub-points of the target whose transformed centres are in centre (3 per
// structure): row p of out (stride len(nb)) holds sub-point p. When mean is
// true only the mean over the sub-points is written, into out[:len(nb)].
// shift is added to every entry. r2 (at least len(nb) long) is scratch.
func (m *covModel) rhs(out []float64, nb []int32, centre []float64, np int, mean bool, shift float64, r2 []float64) {
	n := len(nb)
	rows := np
	if mean {
		rows = 1
	}
	clear(out[:rows*n])
	for s := range m.st {
		st := &m.st[s]
		cx, cy, cz := centre[3*s], centre[3*s+1], centre[3*s+2]
		for p := 0; p < np; p++ {
			tx, ty, tz := cx+st.offsets[3*p], cy+st.offsets[3*p+1], cz+st.offsets[3*p+2]
			row := out[:n]
			if !mean {
				row = out[p*n : p*n+n]
			}
			st.addRow(row, nb, tx, ty, tz, r2)
		}
	}
	if mean {
		if np == 1 && shift == 0 {
			return // the mean of one row is the row (its entries are not −0)
		}
		inv := 1 / float64(np)
		row := out[:n]
		for a := range row {
			row[a] = row[a]*inv + shift
		}
		return
	}
	if shift != 0 {
		for a := range out[:rows*n] {
			out[a] += shift
		}
	}
}

// column writes the structural covariances between datum j and the data ord
// into out, as assemble would put them in a kriging matrix. Without the
// table r2 (len(ord) long) is scratch.
func (m *covModel) column(out []float64, j int32, ord []int32, r2 []float64) {
	out = out[:len(ord)]
	if m.table != nil {
		// Entry (i, j) is at row max(i, j), column min(i, j), selected by
		// arithmetic: the order of i and j is a coin toss a branch would
		// mispredict.
		t := m.table
		for a, i := range ord {
			d := int(i) - int(j)
			lo := d & (d >> 63) // min(i, j) − j
			hi, low := int(i)-lo, int(j)+lo
			e := &t[linalg.RowStart(hi)+low]
			w := e.Load()
			if w == 0 {
				w = m.fill(e, hi, low)
			}
			out[a] = math.Float64frombits(w)
		}
		return
	}
	clear(out)
	for s := range m.st {
		m.st[s].addRowData(out, ord, j, r2)
	}
}

// variance returns the diagonal entry of datum j in a kriging matrix
// without shift or ridge: its structural variance plus the nugget.
func (m *covModel) variance(j int32) float64 {
	if m.table != nil {
		return m.tabled(int(j), int(j)) + m.nugget
	}
	return m.pair(int(j), int(j)) + m.nugget
}
