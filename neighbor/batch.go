package neighbor

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// Neighborhoods are the neighbours of many targets in flat arrays. The
// neighbours of target t are Idx[t*Stride : t*Stride+Count[t]] (original
// source indices) with distances Dist[t*Stride : t*Stride+Count[t]], sorted
// as Searcher.Search returns them. Unused slots hold index −1 and distance
// NaN.
type Neighborhoods struct {
	// Stride is the number of slots per target, Params.MaxSamples.
	Stride int
	// Idx are the neighbours' source indices, Stride per target.
	Idx []int32
	// Dist are the neighbours' anisotropic distances, Stride per target.
	Dist []float64
	// Count is the number of neighbours of each target.
	Count []int32
}

// Neighbors returns the neighbours of target t and their distances (views
// into n).
func (n *Neighborhoods) Neighbors(t int) (idx []int32, dist []float64) {
	a := t * n.Stride
	b := a + int(n.Count[t])
	return n.Idx[a:b], n.Dist[a:b]
}

// SearchAll searches the neighbours of every target, given as flat world
// coordinates (x0, y0, z0, x1, ...), in parallel on geostat.Workers(ctx)
// goroutines. The result does not depend on the number of goroutines.
//
// progress, when not nil, is called with the number of targets done so far
// and the total, from one goroutine at a time, after each chunk of targets.
// When ctx is cancelled SearchAll stops after the chunks in progress and
// returns an error wrapping ctx.Err().
func (ix *Index) SearchAll(ctx context.Context, targets []float64, progress func(done, total int)) (*Neighborhoods, error) {
	if len(targets)%3 != 0 {
		return nil, fmt.Errorf("neighbor: targets: length %d is not a multiple of 3", len(targets))
	}
	nt := len(targets) / 3
	stride := ix.p.MaxSamples
	out := &Neighborhoods{
		Stride: stride,
		Idx:    make([]int32, nt*stride),
		Dist:   make([]float64, nt*stride),
		Count:  make([]int32, nt),
	}
	err := ix.parallel(ctx, nt, progress, func(s *Searcher, lo, hi int) {
		for t := lo; t < hi; t++ {
			idx, dist := s.Search(targets[3*t], targets[3*t+1], targets[3*t+2])
			oi := out.Idx[t*stride : (t+1)*stride]
			od := out.Dist[t*stride : (t+1)*stride]
			copy(oi, idx)
			copy(od, dist)
			for j := len(idx); j < stride; j++ {
				oi[j] = -1
				od[j] = math.NaN()
			}
			out.Count[t] = int32(len(idx))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Mean writes the KNN estimate of every target into out: the arithmetic mean
// of values over the target's neighbours (summed in neighbour order), NaN
// where the target has no neighbours. values holds one value per source of
// the index (Len of them; a NaN value of an indexed source makes the means
// that use it NaN); targets are flat world coordinates and out has one entry
// per target. It runs like SearchAll: in parallel, the output independent of
// the number of goroutines, cancellable, with progress after each chunk.
func (ix *Index) Mean(ctx context.Context, values []float64, targets []float64, out []float64, progress func(done, total int)) error {
	nt, err := ix.checkEstimate(values, targets, out)
	if err != nil {
		return err
	}
	return ix.parallel(ctx, nt, progress, func(s *Searcher, lo, hi int) {
		for t := lo; t < hi; t++ {
			idx, _ := s.Search(targets[3*t], targets[3*t+1], targets[3*t+2])
			if len(idx) == 0 {
				out[t] = math.NaN()
				continue
			}
			sum := 0.0
			for _, i := range idx {
				sum += values[i]
			}
			out[t] = sum / float64(len(idx))
		}
	})
}

// checkEstimate checks the arguments of an estimate over the index (Mean,
// IDW): one value per source, flat target coordinates, one output entry per
// target. It returns the number of targets.
func (ix *Index) checkEstimate(values, targets, out []float64) (int, error) {
	if len(values) != ix.n {
		return 0, fmt.Errorf("neighbor: values: %d values for %d sources", len(values), ix.n)
	}
	if len(targets)%3 != 0 {
		return 0, fmt.Errorf("neighbor: targets: length %d is not a multiple of 3", len(targets))
	}
	nt := len(targets) / 3
	if len(out) != nt {
		return 0, fmt.Errorf("neighbor: out: length %d for %d targets", len(out), nt)
	}
	return nt, nil
}

// chunkSize returns the number of targets a worker claims at a time: small
// enough to balance the load and report progress often, large enough that
// claiming and the seeding restart at chunk starts cost nothing.
func chunkSize(total, workers int) int {
	return max(64, min(4096, total/(16*workers)))
}

// parallel runs work over the targets 0..total−1 in chunks claimed through an
// atomic counter by geostat.Workers(ctx) goroutines (GOMAXPROCS unless the
// context bounds it, see geostat.WithWorkers), each with its own
// Searcher.
func (ix *Index) parallel(ctx context.Context, total int, progress func(done, total int), work func(s *Searcher, lo, hi int)) error {
	if total == 0 {
		return nil
	}
	workers := min(geostat.Workers(ctx), total)
	n, err := geostat.ForChunks(ctx, total, workers, chunkSize(total, workers), progress, func(int) func(lo, hi int) {
		s := ix.NewSearcher()
		return func(lo, hi int) { work(s, lo, hi) }
	})
	if err != nil {
		return fmt.Errorf("neighbor: search stopped after %d of %d targets: %w", n, total, err)
	}
	return nil
}
