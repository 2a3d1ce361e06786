package neighbor

import (
	"context"
	"fmt"
	"math"
)

// ValidatePower checks an inverse-distance exponent: a finite number > 0.
// The error names the task parameter power.
func ValidatePower(power float64) error {
	if !(power > 0) || math.IsInf(power, 0) {
		return fmt.Errorf("neighbor: power: must be a finite number > 0, got %v", power)
	}
	return nil
}

// IDWWeights writes into dst the normalised inverse-distance weights of a
// neighbourhood whose anisotropic distances are dist, and returns dst
// (grown when too short; nil dst allocates). The weights sum to 1:
//
//	λ_i = h_i^−power / Σ_k h_k^−power.
//
// They are computed as (h_min/h_i)^power over their sum, which is the same
// quantity without overflow for tiny distances. When some distances are 0
// (a target at a sample's position), the coincident samples share the
// unit in equal parts and the others get 0: the limit of the estimate as
// the target approaches several samples at one place is their mean, and
// a single coincident sample is reproduced exactly. An empty dist gives an
// empty result. power must satisfy ValidatePower; distances must be ≥ 0
// (as a Searcher returns them).
func IDWWeights(dst, dist []float64, power float64) []float64 {
	n := len(dist)
	if cap(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	if n == 0 {
		return dst
	}
	hmin := dist[0]
	for _, h := range dist[1:] {
		if h < hmin {
			hmin = h
		}
	}
	if hmin == 0 {
		zeros := 0
		for _, h := range dist {
			if h == 0 {
				zeros++
			}
		}
		share := 1 / float64(zeros)
		for i, h := range dist {
			if h == 0 {
				dst[i] = share
			} else {
				dst[i] = 0
			}
		}
		return dst
	}
	sum := 0.0
	switch k := math.Floor(power); {
	case power == 1:
		for i, h := range dist {
			w := hmin / h
			dst[i] = w
			sum += w
		}
	case power == 2:
		for i, h := range dist {
			r := hmin / h
			w := r * r
			dst[i] = w
			sum += w
		}
	case power <= 16 && (power == k || power-k == 0.5):
		// Integer and half-integer powers: repeated squaring, times √r for
		// the half, several times faster than math.Pow.
		n, half := int(k), power != k
		for i, h := range dist {
			r := hmin / h
			w := intPow(r, n)
			if half {
				w *= math.Sqrt(r)
			}
			dst[i] = w
			sum += w
		}
	default:
		for i, h := range dist {
			w := math.Pow(hmin/h, power)
			dst[i] = w
			sum += w
		}
	}
	inv := 1 / sum
	for i := range dst {
		dst[i] *= inv
	}
	return dst
}

// IDW writes the inverse-distance-weighted estimate of every target into
// out: ẑ = Σ λ_i z_i over the target's neighbours, with the weights λ of
// IDWWeights (inverse distance to the power power, in the anisotropic
// distance of the search ellipsoid, summed in neighbour order), NaN where the
// target has no neighbours. The neighbours are exactly those of Search and
// Mean (the same index, the same MaxSamples, MinSamples, octant and hole
// rules), so IDW and the KNN mean of one index use the same samples.
//
// A target at the position of a neighbour (anisotropic distance 0) gets that
// sample's value exactly; at the position of several neighbours, their mean.
//
// values holds one value per source of the index (Len of them); sources
// whose value is NaN should be left out of the index by passing the same
// values to NewIndex, otherwise the estimates that use them are NaN. targets
// are flat world coordinates and out has one entry per target. power must
// be finite and > 0 (ValidatePower). It runs like SearchAll: in parallel, the
// output bit-identical for any number of goroutines, cancellable, with
// progress after each chunk.
func (ix *Index) IDW(ctx context.Context, values []float64, power float64, targets []float64, out []float64, progress func(done, total int)) error {
	if err := ValidatePower(power); err != nil {
		return err
	}
	nt, err := ix.checkEstimate(values, targets, out)
	if err != nil {
		return err
	}
	return ix.parallel(ctx, nt, progress, func(s *Searcher, lo, hi int) {
		var lambda []float64
		for t := lo; t < hi; t++ {
			idx, dist := s.Search(targets[3*t], targets[3*t+1], targets[3*t+2])
			if len(idx) == 0 {
				out[t] = math.NaN()
				continue
			}
			lambda = IDWWeights(lambda, dist, power)
			est := 0.0
			for j, i := range idx {
				est += lambda[j] * values[i]
			}
			out[t] = est
		}
	})
}

// intPow returns r^n for n ≥ 0 by repeated squaring.
func intPow(r float64, n int) float64 {
	w := 1.0
	for n > 0 {
		if n&1 != 0 {
			w *= r
		}
		r *= r
		n >>= 1
	}
	return w
}
