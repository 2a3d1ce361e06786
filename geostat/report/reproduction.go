package report

import (
	"context"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/geostat/variogram"
)

// vgAxis is one direction of the variogram reproduction.
type vgAxis struct {
	name  string
	dir   [3]float64
	rng   float64
	lags  [][3]int
	dist  Series
	world [][3]float64
}

// vgPlan is the variogram reproduction of one Gaussian ensemble.
type vgPlan struct {
	ens   int
	axes  []vgAxis
	model []Series // per axis
	sill  float64
}

// variogramPlan chooses the lags along the axes of the longest structure and
// evaluates the models there: the point model γ for the point normal scores,
// the regularised γ_V for the block normal scores.
func (c *computation) variogramPlan() []vgPlan {
	if c.in.SkipVariograms {
		return nil
	}
	g := c.p.g
	v := c.in.Variogram
	var axes []vgAxis
	if len(v.Structures) > 0 {
		s := v.Structures[v.LongestStructure()]
		m := s.Ellipsoid.Rotation.Matrix()
		names := [3]string{"major", "semi_major", "minor"}
		ranges := [3]float64{s.Ellipsoid.Major, s.Ellipsoid.SemiMajor, s.Ellipsoid.Minor}
		for a := range 3 {
			axes = append(axes, vgAxis{name: names[a], dir: [3]float64{m[a], m[3+a], m[6+a]}, rng: ranges[a]})
		}
	} else { // pure nugget: the grid axes
		for a, name := range [3]string{"x", "y", "z"} {
			var d [3]float64
			d[a] = 1
			axes = append(axes, vgAxis{name: name, dir: d, rng: float64(g.Size[a]) * g.CellSize[a] / 2})
		}
	}
	for i := range axes {
		ax := &axes[i]
		ax.lags = variogram.AxisLags(g, ax.dir, lagReach*ax.rng, maxLags)
		for _, h := range ax.lags {
			ax.dist = append(ax.dist, variogram.LagLength(g, h))
			ax.world = append(ax.world, variogram.LagVector(g, h))
		}
		if len(ax.lags) == 0 {
			c.warn("The grid has no lag along the %s axis (it is one cell thick in that direction, or its cells are longer than %.4g %s): no variogram there.",
				ax.name, lagReach*ax.rng, c.r.LengthUnit)
		}
	}

	var plans []vgPlan
	if c.p.ens[iPointNS] != nil {
		pl := vgPlan{ens: iPointNS, axes: axes, sill: c.sill}
		for _, ax := range axes {
			m := make(Series, len(ax.world))
			for k, h := range ax.world {
				m[k] = v.GammaLag(h[0], h[1], h[2])
			}
			pl.model = append(pl.model, m)
		}
		plans = append(plans, pl)
	}
	if c.p.ens[iBlockNS] != nil {
		b := NewBlockAverager(v, g, c.p.disc)
		pl := vgPlan{ens: iBlockNS, axes: axes, sill: c.blockCov}
		for _, ax := range axes {
			m := make(Series, len(ax.world))
			for k, h := range ax.world {
				m[k] = b.Regularised(h)
			}
			pl.model = append(pl.model, m)
		}
		plans = append(plans, pl)
	}
	return plans
}

// variograms computes the experimental variograms of every realisation.
func (c *computation) variograms(ctx context.Context, plans []vgPlan) error {
	p := c.p
	g := p.g
	full := g.NumCells()
	for _, pl := range plans {
		hasLags := false
		for _, ax := range pl.axes {
			hasLags = hasLags || len(ax.lags) > 0
		}
		if !hasLags {
			continue
		}
		// gam[r][axis][lag], pairs[axis][lag] of realisation 0.
		gam := make([][]Series, p.nReal)
		pairs := make([][]int, len(pl.axes))
		err := parallelFor(ctx, p.nReal, c.tr, func(r int) {
			vals := p.ens[pl.ens][r*p.nCells : (r+1)*p.nCells]
			field := vals
			if p.active != nil {
				field = make([]float64, full)
				for i := range field {
					field[i] = math.NaN()
				}
				for a, ci := range p.active {
					field[ci] = vals[a]
				}
			}
			out := make([]Series, len(pl.axes))
			for a, ax := range pl.axes {
				out[a] = make(Series, len(ax.lags))
				var np []int
				for k, h := range ax.lags {
					var n int
					out[a][k], n = variogram.Lattice(field, g.Size, h)
					np = append(np, n)
				}
				if r == 0 {
					pairs[a] = np
				}
			}
			gam[r] = out
		})
		if err != nil {
			return err
		}
		for a, ax := range pl.axes {
			if len(ax.lags) == 0 {
				continue
			}
			vr := VariogramReproduction{
				Ensemble: ensembleNames[pl.ens], Support: "point", Axis: ax.name, Direction: ax.dir,
				Range: Number(ax.rng), Lags: slices.Clone(ax.lags), Distance: slices.Clone(ax.dist),
				Model: pl.model[a], Sill: Number(pl.sill), Pairs: pairs[a], Mean: make(Series, len(ax.lags)),
			}
			if pl.ens == iBlockNS {
				vr.Support = "block"
			}
			cnt := make([]int, len(ax.lags))
			for r := range p.nReal {
				s := gam[r][a]
				vr.Realisations = append(vr.Realisations, s)
				for k, x := range s {
					if !math.IsNaN(x) {
						vr.Mean[k] += x
						cnt[k]++
					}
				}
			}
			for k := range vr.Mean {
				if cnt[k] == 0 {
					vr.Mean[k] = math.NaN()
				} else {
					vr.Mean[k] /= float64(cnt[k])
				}
			}
			c.r.Variograms = append(c.r.Variograms, vr)
		}
	}
	return nil
}

// swaths computes the swath plots along the world x, y and z axes.
func (c *computation) swaths(ctx context.Context) error {
	p := c.p
	if c.swathIdx < 0 {
		return nil
	}
	g := p.g
	maxSlices := c.in.SwathSlices
	if maxSlices == 0 {
		maxSlices = defaultSlices
	}
	lo, hi := g.BoundingBox()
	axisAligned := g.Rotation.DipAzimuth == 0 && g.Rotation.Dip == 0 && g.Rotation.Pitch == 0

	data := c.in.Data.Values
	if c.swathIdx == iPointNS || c.swathIdx == iBlockNS {
		ns := make([]float64, len(data))
		c.in.Reference.NormalScores(ns, data)
		data = ns
	}
	type axisBins struct {
		n     int
		start float64
		width float64
		cell  []int32 // slice of each ensemble row
	}
	var bins [3]axisBins
	for a := range 3 {
		b := &bins[a]
		b.start = lo[a]
		if axisAligned {
			per := (g.Size[a] + maxSlices - 1) / maxSlices
			b.n = (g.Size[a] + per - 1) / per
			b.width = float64(per) * g.CellSize[a]
		} else {
			b.n = maxSlices
			b.width = (hi[a] - lo[a]) / float64(b.n)
		}
		b.cell = make([]int32, p.nCells)
		for i := range b.cell {
			b.cell[i] = int32(min(max(int(math.Floor((p.centres[3*i+a]-b.start)/b.width)), 0), b.n-1))
		}
	}

	// sums[r][axis][slice]
	means := make([][3]Series, p.nReal)
	var cellCount [3][]int
	err := parallelFor(ctx, p.nReal, c.tr, func(r int) {
		vals := p.ens[c.swathIdx][r*p.nCells : (r+1)*p.nCells]
		var out [3]Series
		for a := range 3 {
			sum := make([]float64, bins[a].n)
			cnt := make([]int, bins[a].n)
			for i, v := range vals {
				if !math.IsNaN(v) {
					sum[bins[a].cell[i]] += v
					cnt[bins[a].cell[i]]++
				}
			}
			out[a] = make(Series, bins[a].n)
			for k := range sum {
				out[a][k] = sum[k] / float64(cnt[k]) // NaN when empty
			}
			if r == 0 {
				cellCount[a] = cnt
			}
		}
		means[r] = out
	})
	if err != nil {
		return err
	}

	out := make([]bool, len(data))
	for a, name := range [3]string{"x", "y", "z"} {
		b := bins[a]
		sw := Swath{Axis: name, Ensemble: ensembleNames[c.swathIdx], Width: Number(b.width),
			Centres: make(Series, b.n), DataMean: make(Series, b.n), DataCount: make([]int, b.n),
			Mean: make(Series, b.n), CellCount: cellCount[a]}
		for k := range b.n {
			sw.Centres[k] = b.start + (float64(k)+0.5)*b.width
		}
		wsum := make([]float64, b.n)
		for i, z := range data {
			if math.IsNaN(z) {
				continue
			}
			x := c.in.Data.Coords[3*i+a]
			k := int(math.Floor((x - b.start) / b.width))
			if x == b.start+float64(b.n)*b.width {
				k = b.n - 1
			}
			if k < 0 || k >= b.n {
				out[i] = true
				continue
			}
			w := 1.0
			if c.in.Data.Weights != nil {
				w = c.in.Data.Weights[i]
			}
			sw.DataMean[k] += w * z
			wsum[k] += w
			sw.DataCount[k]++
		}
		for k := range sw.DataMean {
			sw.DataMean[k] /= wsum[k] // NaN where no data
		}
		cnt := make([]int, b.n)
		for r := range p.nReal {
			s := means[r][a]
			sw.Realisations = append(sw.Realisations, s)
			for k, x := range s {
				if !math.IsNaN(x) {
					sw.Mean[k] += x
					cnt[k]++
				}
			}
		}
		for k := range sw.Mean {
			sw.Mean[k] /= float64(cnt[k])
		}
		c.r.Swaths = append(c.r.Swaths, sw)
	}
	outside := 0
	for _, o := range out {
		if o {
			outside++
		}
	}
	if outside > 0 {
		c.warn("%d data lie outside the grid's bounding box; each is left out of the swaths along the axes where it is outside.", outside)
	}
	return nil
}
