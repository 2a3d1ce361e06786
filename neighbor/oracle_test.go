package neighbor

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
)

// oracle is the brute-force reference: it maps every source into isotropic
// space with geostat.Anisotropy.Transform (relative to the index's origin),
// scans all of them, sorts the candidates by (d², index) with sort.Slice and
// applies the octant, hole and min-samples rules greedily.
type oracle struct {
	p      Params
	origin [3]float64
	a      geostat.Anisotropy
	iso    []float64
	keep   []bool
	holes  []int32
}

func newOracle(coords, values []float64, holes []int32, p Params, origin [3]float64) *oracle {
	a, err := p.Ellipsoid.Anisotropy()
	if err != nil {
		panic(err)
	}
	n := len(coords) / 3
	rel := make([]float64, len(coords))
	for i := 0; i < n; i++ {
		for d := 0; d < 3; d++ {
			rel[3*i+d] = coords[3*i+d] - origin[d]
		}
	}
	o := &oracle{p: p, origin: origin, a: a, iso: a.Transform(nil, rel), keep: make([]bool, n), holes: holes}
	for i := range o.keep {
		o.keep[i] = values == nil || !math.IsNaN(values[i])
	}
	return o
}

func (o *oracle) search(x, y, z float64) ([]int32, []float64) {
	t := o.a.Transform(nil, []float64{x - o.origin[0], y - o.origin[1], z - o.origin[2]})
	type cand struct {
		i  int32
		d2 float64
	}
	var cs []cand
	for i, k := range o.keep {
		if !k {
			continue
		}
		dx, dy, dz := o.iso[3*i]-t[0], o.iso[3*i+1]-t[1], o.iso[3*i+2]-t[2]
		d2 := dx*dx + dy*dy + dz*dz
		if d2 <= 1+RadiusTolerance {
			cs = append(cs, cand{int32(i), d2})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.d2, b.d2); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	var oct [8]int
	perHole := map[int32]int{}
	var idx []int32
	var dist []float64
	for _, c := range cs {
		if len(idx) == o.p.MaxSamples {
			break
		}
		i := int(c.i)
		q := 0
		for d := 0; d < 3; d++ {
			if o.iso[3*i+d]-t[d] < 0 {
				q |= 1 << d
			}
		}
		if o.p.MaxPerOctant > 0 && oct[q] >= o.p.MaxPerOctant {
			continue
		}
		if o.p.MaxPerHole > 0 && perHole[o.holes[i]] >= o.p.MaxPerHole {
			continue
		}
		oct[q]++
		if o.p.MaxPerHole > 0 {
			perHole[o.holes[i]]++
		}
		idx = append(idx, c.i)
		dist = append(dist, math.Sqrt(c.d2))
	}
	if len(idx) < o.p.MinSamples {
		return nil, nil
	}
	return idx, dist
}

// uniformCloud returns n points uniform in [0, size) per axis.
func uniformCloud(rng *rand.Rand, n int, size [3]float64) []float64 {
	c := make([]float64, 3*n)
	for i := 0; i < n; i++ {
		for d := 0; d < 3; d++ {
			c[3*i+d] = rng.Float64() * size[d]
		}
	}
	return c
}
