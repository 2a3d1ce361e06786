package tbsim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// refAddRows is the plain form of Field.addRows for the partition and nugget
// processes: line after line over all rows, one interval walk per row, the
// nugget from its fully derived key per node. The fast kernels (chunks of
// rows, the walks written out in the row loop, cached row starts and nugget
// keys) must reproduce it bit for bit.
func refAddRows(f *Field, r int, gg *gridGeom, rows []gridRow, out []float64) {
	imin, imax := rows[0].i0, rows[0].i1
	jmin, jmax, kmin, kmax := rows[0].j, rows[0].j, rows[0].k, rows[0].k
	for _, rw := range rows {
		imin, imax = min(imin, rw.i0), max(imax, rw.i1)
		jmin, jmax = min(jmin, rw.j), max(jmax, rw.j)
		kmin, kmax = min(kmin, rw.k), max(kmax, rw.k)
	}
	box := [2][3]int{{imin, jmin, kmin}, {imax - 1, jmax, kmax}}
	N := len(out)
	diff := make([]float64, 4*N)
	used, cubicUsed := false, false
	for s := 0; s < f.nStruct; s++ {
		ls := f.sets[r*f.nStruct+s]
		if ls.proc != processPartitionSpherical && ls.proc != processPartitionCubic {
			panic("refAddRows: partition structures only")
		}
		for l := range ls.vx {
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
			var sg []float64
			for k := klo; k <= khi; k++ {
				v := ls.amp
				if signBit(ls.keys[l], k) {
					v = -v
				}
				sg = append(sg, v)
			}
			lo := float64(klo)
			cubic := ls.proc == processPartitionCubic
			a := ls.vx[l]*gg.e[0][0] + ls.vy[l]*gg.e[0][1] + ls.vz[l]*gg.e[0][2]
			for _, rw := range rows {
				x, y, z := gg.rowStart(rw.j, rw.k)
				n := rw.i1 - rw.i0
				t0 := ls.vx[l]*x + ls.vy[l]*y + ls.vz[l]*z + ls.off[l] + float64(rw.i0)*a
				segs := math.Abs(a) * float64(n)
				o0 := rw.off
				switch {
				case cubic && segs <= maxCubicSegments && segs <= float64(n)/4:
					partitionCubicSegments(diff[o0:o0+n], diff[N+o0:N+o0+n], diff[2*N+o0:2*N+o0+n], diff[3*N+o0:3*N+o0+n], sg, lo, t0, a)
					used, cubicUsed = true, true
				case !cubic && segs <= float64(n)/4:
					refSphericalSegments(diff[o0:o0+n], diff[N+o0:N+o0+n], sg, lo, t0, a)
					used = true
				case cubic:
					partitionCubicRow(out[o0:o0+n], sg, lo, t0, a)
				default:
					partitionSphericalRow(out[o0:o0+n], sg, lo, t0, a)
				}
			}
		}
	}
	if used {
		for _, rw := range rows {
			n := rw.i1 - rw.i0
			o := out[rw.off : rw.off+n]
			if cubicUsed {
				integrateCubic(o, diff[rw.off:rw.off+n], diff[N+rw.off:N+rw.off+n], diff[2*N+rw.off:2*N+rw.off+n], diff[3*N+rw.off:3*N+rw.off+n])
			} else {
				integrateLinear(o, diff[rw.off:rw.off+n], diff[N+rw.off:N+rw.off+n])
			}
		}
	}
	if f.nuggetS != 0 {
		ns := newNuggetSource()
		for _, rw := range rows {
			base := gg.nx * (rw.j + gg.ny*rw.k)
			o := out[rw.off : rw.off+rw.i1-rw.i0]
			for i := range o {
				o[i] += f.nuggetS * ns.normal(f.seed, r, GridStream, base+rw.i0+i)
			}
		}
	}
}

// refSphericalSegments is the one-row spherical interval walk with the
// generic firstNode.
func refSphericalSegments(d0, d1 []float64, sg []float64, lo, t0, a float64) {
	n := len(d0)
	k := math.Floor(t0)
	ki := int(k - lo)
	up := a > 0
	var inv float64
	if a != 0 {
		inv = 1 / a
	}
	var p0, p1 float64
	for q0 := 0; ; {
		s := sg[ki]
		c0, c1 := s*(t0-k-0.5), s*a
		d0[q0] += c0 - p0
		d1[q0] += c1 - p1
		p0, p1 = c0, c1
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

// TestPartitionKernelsMatchReference compares Field.addRows with refAddRows
// bit for bit on rotated grids, rows of unequal spans and offsets (several
// row chunks), spherical and cubic lines crossing few or many intervals per
// row, with a nugget.
func TestPartitionKernelsMatchReference(t *testing.T) {
	rot := geostat.Rotation{DipAzimuth: 35, Dip: 25, Pitch: 10}
	for _, tc := range []struct {
		name   string
		ranges [2]float64
	}{{"long", [2]float64{300, 120}}, {"short", [2]float64{6, 5}}, {"mixed", [2]float64{8, 200}}} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := geostat.NewVariogram(0.1,
				structure(geostat.Spherical, 0, 0.5, tc.ranges[0], tc.ranges[0]*0.6, tc.ranges[0]*0.3, rot),
				structure(geostat.Cubic, 0, 0.4, tc.ranges[1], tc.ranges[1]*0.7, tc.ranges[1]*0.4, rot))
			require.NoError(t, err)
			g, err := grid.New([3]float64{1000, 2000, 100}, [3]int{150, 40, 6}, [3]float64{2, 3, 2.5}, geostat.Rotation{DipAzimuth: 20, Dip: 5})
			require.NoError(t, err)
			lo, hi := g.BoundingBox()
			f, err := NewField(v, 2, 60, 99, lo, hi)
			require.NoError(t, err)
			gg := newGridGeom(g, f.dom.ref)
			rng := rand.New(rand.NewPCG(3, 4))
			var rows []gridRow
			off := 0
			for k := 0; k < 6; k++ {
				for j := 0; j < 40; j++ {
					i0 := rng.IntN(20)
					i1 := 150 - rng.IntN(20)
					rows = append(rows, gridRow{j: j, k: k, i0: i0, i1: i1, off: off})
					off += i1 - i0
				}
			}
			require.Greater(t, off, 2*partitionChunkNodes)
			ws := newWorkspace()
			for r := 0; r < 2; r++ {
				got := make([]float64, off)
				want := make([]float64, off)
				f.addRows(r, &gg, rows, got, ws)
				refAddRows(f, r, &gg, rows, want)
				for i := range want {
					require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "realisation %d node %d", r, i)
				}
			}
		})
	}
}

// TestApplyWeights compares applyWeights with the plain loop, bit for bit,
// for every realisation count 1..13.
func TestApplyWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const data = 50
	for R := 1; R <= 13; R++ {
		res := make([]float64, data*R)
		for i := range res {
			res[i] = rng.NormFloat64()
		}
		nb := []int32{3, 7, 8, 20, 41, 49, 0}
		w := make([]float64, len(nb))
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		y := make([]float64, R)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		want := append([]float64(nil), y...)
		for j, i := range nb {
			for r := range want {
				want[r] += w[j] * res[int(i)*R+r]
			}
		}
		applyWeights(y, w, nb, res)
		for r := range want {
			require.Equal(t, math.Float64bits(want[r]), math.Float64bits(y[r]), "R=%d r=%d", R, r)
		}
	}
}

// TestNuggetKey checks that the per-stream key shortcut draws the same
// values as the fully derived stream.
func TestNuggetKey(t *testing.T) {
	a, b := newNuggetSource(), newNuggetSource()
	for _, r := range []int{0, 3} {
		sk := nuggetKey(42, r, GridStream)
		for i := 0; i < 100; i++ {
			require.Equal(t, math.Float64bits(a.normal(42, r, GridStream, i)), math.Float64bits(b.normalAt(sk, i)))
		}
	}
}

// TestSpectralRowsMatchPoints checks the spectral grid kernel (recurrence
// blocks along the rows, row phasor tables, rows entering or leaving a block
// part-way, silent padding lines) against direct evaluation of every line
// at the nodes, and that a node's value does not depend on the rows computed
// with it: rows of random spans over three recurrence blocks, with more
// distinct j and k than one phasor run holds, give bit-identical values
// computed all together, one row at a time and in reverse order.
func TestSpectralRowsMatchPoints(t *testing.T) {
	rot := geostat.Rotation{DipAzimuth: 35, Dip: 25, Pitch: 10}
	v, err := geostat.NewVariogram(0,
		structure(geostat.Exponential, 0, 0.6, 40, 25, 10, rot),
		structure(geostat.Gaussian, 0, 0.4, 60, 40, 15, rot))
	require.NoError(t, err)
	const nx, ny, nz = 300, 280, 3
	g, err := grid.New([3]float64{1000, 2000, 100}, [3]int{nx, ny, nz}, [3]float64{2, 3, 2.5}, geostat.Rotation{DipAzimuth: 20, Dip: 5})
	require.NoError(t, err)
	lo, hi := g.BoundingBox()
	f, err := NewField(v, 1, 97, 7, lo, hi)
	require.NoError(t, err)
	gg := newGridGeom(g, f.dom.ref)
	rng := rand.New(rand.NewPCG(5, 6))
	var rows []gridRow
	off := 0
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			i0 := rng.IntN(150)
			i1 := i0 + 1 + rng.IntN(nx-i0)
			rows = append(rows, gridRow{j: j, k: k, i0: i0, i1: i1, off: off})
			off += i1 - i0
		}
	}
	require.Greater(t, ny+nz, specRunSpan)
	ws := newWorkspace()
	all := make([]float64, off)
	f.addRows(0, &gg, rows, all, ws)

	coords := make([]float64, 0, 3*off)
	for _, rw := range rows {
		for i := rw.i0; i < rw.i1; i++ {
			c := g.CellCentre(i, rw.j, rw.k)
			coords = append(coords, c[:]...)
		}
	}
	direct := make([]float64, off)
	f.Points(0, coords, GridStream, 0, direct)
	maxd := 0.0
	for i := range all {
		maxd = math.Max(maxd, math.Abs(all[i]-direct[i]))
	}
	require.Less(t, maxd, 1e-9)

	one := make([]float64, off)
	for _, rw := range rows {
		n := rw.i1 - rw.i0
		r := rw
		r.off = 0
		f.addRows(0, &gg, []gridRow{r}, one[rw.off:rw.off+n], ws)
	}
	rev := make([]gridRow, len(rows))
	for i, rw := range rows {
		rev[len(rows)-1-i] = rw
	}
	back := make([]float64, off)
	f.addRows(0, &gg, rev, back, ws)
	for i := range all {
		require.Equal(t, math.Float64bits(all[i]), math.Float64bits(one[i]), "node %d, one row at a time", i)
		require.Equal(t, math.Float64bits(all[i]), math.Float64bits(back[i]), "node %d, reverse order", i)
	}
	t.Logf("max |grid − direct| = %.3g", maxd)
}
