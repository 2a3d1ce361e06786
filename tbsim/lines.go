package tbsim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/geostat-engine/geostat/geostat"
)

// process is the kind of line process simulating one structure.
type process int

const (
	// spectral: √(2c/L)·cos(ω·x + φ) per line (docs/math.md 2.4).
	processSpectral process = iota
	// partitionSpherical: a·ε_k·p on unit intervals (docs/math.md 2.5).
	processPartitionSpherical
	// partitionCubic: a·ε_k·p(¼ − p²) on unit intervals (docs/math.md 2.5).
	processPartitionCubic
	// stairs: a random walk with Gaussian steps on intervals (docs/math.md 2.7).
	processStairs
)

// processOf returns the line process used for a structure type: partition
// (dilution) processes for spherical and cubic, exact for any number of lines
// and free of trigonometry; the stairs random walk for the intrinsic linear
// model; spectral lines for the others.
func processOf(t geostat.StructureType) process {
	switch t {
	case geostat.Spherical:
		return processPartitionSpherical
	case geostat.Cubic:
		return processPartitionCubic
	case geostat.Linear:
		return processStairs
	}
	return processSpectral
}

// lineSet holds the lines of one (realisation, structure), all in world
// units relative to the field's reference point x_ref:
//
//	spectral   value_l(x) = amp·cos(v_l·(x − x_ref) + o_l)          v_l = ω_l = ρ_l A_sᵀ u_l
//	partition  t = v_l·(x − x_ref) + o_l, k = ⌊t⌋, p = t − k − ½,
//	           value_l(x) = amp·ε_k·p (spherical) or amp·ε_k·p(¼ − p²) (cubic)
//	                                                                 v_l = A_sᵀ u_l, o_l ~ U[0,1)
//	stairs     t = v_l·(x − x_ref) + o_l, k = ⌊t⌋, value_l(x) = walk_l[k − kLo_l]
//	                                                                 v_l = A_sᵀ u_l / s_l
//
// with u_l the rotated Fibonacci directions. amp carries √(c_s) and the
// 1/√L of the sum over lines; the signs ε_k of a partition line are hashed
// from (line key, k), so any point or tile can be computed alone.
type lineSet struct {
	proc       process
	amp        float64
	vx, vy, vz []float64
	off        []float64
	keys       []uint64 // partition: sign keys
	// stairs: the walk of line l is walk[walkOff[l] : walkOff[l+1]] for
	// interval indices kLo[l], kLo[l]+1, ...
	walk    []float64
	walkOff []int
	kLo     []int64
}

// domain is the world box a field must cover (for the stairs process,
// whose random walks are tabulated over it) and its centre x_ref.
type domain struct {
	lo, hi, ref [3]float64
}

// corners returns the 8 corners of the box relative to x_ref.
func (d *domain) corners() [8][3]float64 {
	var c [8][3]float64
	for i := 0; i < 8; i++ {
		for a := 0; a < 3; a++ {
			v := d.lo[a]
			if i>>a&1 == 1 {
				v = d.hi[a]
			}
			c[i][a] = v - d.ref[a]
		}
	}
	return c
}

// stairsIntervals is the number of intervals a stairs line spans across the
// domain. The variogram is exact for any interval length (docs/math.md
// 2.7); more intervals only make each line's random walk finer. The count
// adapts to keep the tables of all realisations near 2²¹ values.
func stairsIntervals(realisations, lines, structures int) int {
	n := (1 << 21) / (realisations * lines * structures)
	return max(64, min(n, 10000))
}

// newLineSet draws the lines of structure si of realisation r.
func newLineSet(seed uint64, r, si int, st *geostat.Structure, contribution float64, dirs []float64,
	rad *radial, dom *domain, nStairs int) *lineSet {
	L := len(dirs) / 3
	proc := processOf(st.Type)
	ls := &lineSet{
		proc: proc,
		vx:   make([]float64, L), vy: make([]float64, L), vz: make([]float64, L),
		off: make([]float64, L),
	}
	switch proc {
	case processSpectral:
		ls.amp = math.Sqrt(2 * contribution / float64(L))
	case processPartitionSpherical:
		ls.amp = math.Sqrt(contribution) * 2 * math.Sqrt(3/float64(L))
		ls.keys = make([]uint64, L)
	case processPartitionCubic:
		ls.amp = math.Sqrt(contribution) * 2 * math.Sqrt(210/float64(L))
		ls.keys = make([]uint64, L)
	case processStairs:
		ls.walkOff = make([]int, L+1)
		ls.kLo = make([]int64, L)
	}
	q := haarRotation(newRand(key(seed, purposeRotation, uint64(r), uint64(si))))
	a := &st.Anisotropy().M // A = D⁻¹Rᵀ, row-major; g = Aᵀu
	var corners [8][3]float64
	if proc == processStairs {
		corners = dom.corners()
	}
	var pcg rand.PCG
	rng := rand.New(&pcg)
	for l := 0; l < L; l++ {
		k := key(seed, purposeLine, uint64(r), uint64(si), uint64(l))
		pcg.Seed(k, mix64(k^pcgStream))
		ux, uy, uz := q.Apply(dirs[3*l], dirs[3*l+1], dirs[3*l+2])
		gx := a[0]*ux + a[3]*uy + a[6]*uz
		gy := a[1]*ux + a[4]*uy + a[7]*uz
		gz := a[2]*ux + a[5]*uy + a[8]*uz
		switch proc {
		case processSpectral:
			rho := rad.sample(rng)
			ls.vx[l], ls.vy[l], ls.vz[l] = rho*gx, rho*gy, rho*gz
			ls.off[l] = 2 * math.Pi * rng.Float64()
		case processPartitionSpherical, processPartitionCubic:
			ls.vx[l], ls.vy[l], ls.vz[l] = gx, gy, gz
			ls.off[l] = rng.Float64()
			ls.keys[l] = key(seed, purposeSign, uint64(r), uint64(si), uint64(l))
		case processStairs:
			// Extent of the domain along the line, in range units.
			tmin, tmax := math.Inf(1), math.Inf(-1)
			for _, c := range corners {
				t := gx*c[0] + gy*c[1] + gz*c[2]
				tmin, tmax = math.Min(tmin, t), math.Max(tmax, t)
			}
			s := (tmax - tmin) / float64(nStairs)
			if !(s > 0) {
				s = 1
			}
			ls.vx[l], ls.vy[l], ls.vz[l] = gx/s, gy/s, gz/s
			ls.off[l] = rng.Float64()
			// Line semivariogram σ²τ/(2s) in range units; σ² = 4cs/L
			// gives γ = c·r in 3-D (docs/math.md 2.7).
			sigma := math.Sqrt(4 * contribution * s / float64(L))
			lo := int64(math.Floor(tmin/s+ls.off[l])) - 2
			hi := int64(math.Floor(tmax/s+ls.off[l])) + 2
			ls.kLo[l] = lo
			start := len(ls.walk)
			sum := 0.0
			for k := lo; k <= hi; k++ {
				sum += sigma * rng.NormFloat64()
				ls.walk = append(ls.walk, sum)
			}
			ls.walkOff[l] = start
			ls.walkOff[l+1] = len(ls.walk)
		}
	}
	return ls
}

// stairsValue returns the walk value of line l at line coordinate t; it
// panics when t lies outside the tabulated domain.
func (ls *lineSet) stairsValue(l int, t float64) float64 {
	k := int64(math.Floor(t)) - ls.kLo[l]
	w := ls.walk[ls.walkOff[l]:ls.walkOff[l+1]]
	if k < 0 || k >= int64(len(w)) {
		panic(fmt.Sprintf("tbsim: point outside the field's domain (linear structure, line %d)", l))
	}
	return w[k]
}

// pointValue returns the sum over the lines of the set at the point p
// (relative to x_ref), lines added in order.
func (ls *lineSet) pointValue(px, py, pz float64) float64 {
	sum := 0.0
	n := len(ls.vx)
	switch ls.proc {
	case processSpectral:
		for l := 0; l < n; l++ {
			sum += math.Cos(ls.vx[l]*px + ls.vy[l]*py + ls.vz[l]*pz + ls.off[l])
		}
	case processPartitionSpherical:
		for l := 0; l < n; l++ {
			t := ls.vx[l]*px + ls.vy[l]*py + ls.vz[l]*pz + ls.off[l]
			fk := math.Floor(t)
			p := t - fk - 0.5
			if signBit(ls.keys[l], int64(fk)) {
				p = -p
			}
			sum += p
		}
	case processPartitionCubic:
		for l := 0; l < n; l++ {
			t := ls.vx[l]*px + ls.vy[l]*py + ls.vz[l]*pz + ls.off[l]
			fk := math.Floor(t)
			p := t - fk - 0.5
			p *= 0.25 - p*p
			if signBit(ls.keys[l], int64(fk)) {
				p = -p
			}
			sum += p
		}
	case processStairs:
		for l := 0; l < n; l++ {
			sum += ls.stairsValue(l, ls.vx[l]*px+ls.vy[l]*py+ls.vz[l]*pz+ls.off[l])
		}
		return sum
	}
	return ls.amp * sum
}
