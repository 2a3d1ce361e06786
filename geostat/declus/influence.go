package declus

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
)

// Result holds the weights of an influence declustering.
type Result struct {
	// Weights has one weight per source of the index (Index.Len), ≥ 0 and
	// summing to 1; 0 for a sample no location found (and for sources left
	// out of the index).
	Weights []float64
	// Locations is the number of evaluation locations that found at least
	// MinSamples samples (those that contributed).
	Locations int
	// Unreached is the number of samples with weight 0.
	Unreached int
}

// KNN computes the declustering weights of KNN mode: every evaluation
// location shares one unit equally among the samples its search finds (see
// the package documentation). ix indexes the samples (their positions;
// values may be nil when building it) with the search parameters;
// locations are flat world coordinates (x0, y0, z0, x1, ...). It runs on
// geostat.Workers(ctx) goroutines with a bit-identical result for any
// number of them; progress, when not nil, is called with the number of
// locations done and the total after each chunk, from one goroutine at a
// time; a cancelled ctx stops it with an error wrapping ctx.Err().
func KNN(ctx context.Context, ix *neighbor.Index, locations []float64, progress func(done, total int)) (*Result, error) {
	return influence(ctx, ix, locations, 0, progress)
}

// IDW computes the declustering weights of IDW mode: every evaluation
// location shares one unit among the samples its search finds in
// proportion to h^−power, h the anisotropic distance (neighbor.IDWWeights;
// samples at h = 0 take the whole unit in equal parts). power must be finite
// and > 0; the declustering task's default is 2. Otherwise as KNN.
func IDW(ctx context.Context, ix *neighbor.Index, locations []float64, power float64, progress func(done, total int)) (*Result, error) {
	if err := neighbor.ValidatePower(power); err != nil {
		return nil, fmt.Errorf("declus: %w", err)
	}
	return influence(ctx, ix, locations, power, progress)
}

// fixedScale is the fixed-point scale of the influence accumulators: a
// share λ ∈ [0, 1] is stored as ⌊λ·2⁶²⌋.
const fixedScale = 0x1p62

// acc is a 128-bit fixed-point accumulator per sample: the influence is
// (hi·2⁶⁴ + lo)·2⁻⁶².
type acc struct {
	hi, lo []uint64
}

func (a *acc) add(i int32, v uint64) {
	var c uint64
	a.lo[i], c = bits.Add64(a.lo[i], v, 0)
	a.hi[i] += c
}

// influence runs KNN mode (power 0) or IDW mode over the locations.
func influence(ctx context.Context, ix *neighbor.Index, locations []float64, power float64, progress func(done, total int)) (*Result, error) {
	if ix == nil {
		return nil, fmt.Errorf("declus: the sample index is nil")
	}
	if len(locations)%3 != 0 {
		return nil, fmt.Errorf("declus: locations: length %d is not a multiple of 3", len(locations))
	}
	n := ix.Len()
	total := len(locations) / 3
	workers := max(1, min(geostat.Workers(ctx), total))
	chunk := max(64, min(4096, total/(16*workers)))
	accs := make([]acc, workers)
	used := make([]int, workers)
	done, err := geostat.ForChunks(ctx, total, workers, chunk, progress, func(w int) func(lo, hi int) {
		a := acc{hi: make([]uint64, n), lo: make([]uint64, n)}
		accs[w] = a
		s := ix.NewSearcher()
		var lambda []float64
		return func(lo, hi int) {
			found := 0
			for t := lo; t < hi; t++ {
				idx, dist := s.Search(locations[3*t], locations[3*t+1], locations[3*t+2])
				if len(idx) == 0 {
					continue
				}
				found++
				if power == 0 {
					v := uint64(fixedScale / float64(len(idx)))
					for _, i := range idx {
						a.add(i, v)
					}
					continue
				}
				lambda = neighbor.IDWWeights(lambda, dist, power)
				for j, i := range idx {
					a.add(i, uint64(lambda[j]*fixedScale))
				}
			}
			used[w] += found
		}
	})
	if err != nil {
		return nil, fmt.Errorf("declus: stopped after %d of %d locations: %w", done, total, err)
	}

	res := &Result{Weights: make([]float64, n)}
	for _, u := range used {
		res.Locations += u
	}
	sum := 0.0
	for i := 0; i < n; i++ {
		var hi, lo uint64
		for w := range accs {
			var c uint64
			lo, c = bits.Add64(lo, accs[w].lo[i], 0)
			hi += accs[w].hi[i] + c
		}
		v := float64(hi)*(0x1p64/fixedScale) + float64(lo)/fixedScale
		res.Weights[i] = v
		sum += v
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("declus: no evaluation location found any sample (%d locations, %d samples): widen the search ellipsoid or lower min_samples", total, ix.Indexed())
	}
	for i, v := range res.Weights {
		res.Weights[i] = v / sum
		if v == 0 {
			res.Unreached++
		}
	}
	return res, nil
}
