package kriging

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
)

// chunkSize is the number of consecutive targets a worker of Estimate
// handles at a time. Consecutive targets often share most of their
// neighbours, so chunks keep the factorisations reused and updated from
// target to target; that state is reset at the start of each chunk, so that
// the output and even the Stats do not depend on the scheduling. 4096 is
// many grid rows (a reset costs a few fresh factorisations among thousands
// of updates) and still some chunks per worker on a grid of 10⁵ cells, for
// balance and progress reports.
const chunkSize = EstimateChunk

// EstimateChunk is the number of consecutive targets after which Estimate
// restarts its factorisation state. Estimating a run targets[3·lo:3·hi] of
// a larger target list, lo a multiple of EstimateChunk and hi a multiple of
// it or the end of the list, gives bit for bit the values of those targets
// in the estimate of the whole list: the estimate can be split into such
// runs, for example tiles computed by different processes.
const EstimateChunk = 4096

// Output receives the per-target results of Estimate. Each non-nil slice must
// have one element per target; nil slices are not computed. Targets with too
// few neighbours get NaN in every field except Samples (0).
type Output struct {
	// Estimate is the kriged value: m + Σλ_i(z_i − m) (simple) or Σλ_i z_i
	// (ordinary).
	Estimate []float64
	// Variance is the kriging variance, clamped ≥ 0.
	Variance []float64
	// Samples is the number of neighbours used.
	Samples []float64
	// MeanDistance is the mean anisotropic distance (in the search
	// ellipsoid's units, ≤ 1) of the neighbours.
	MeanDistance []float64
	// Slope is the slope of regression of the true on the estimated value,
	// λᵀk/(λᵀk − μ) (1 for simple kriging); NaN for intrinsic models.
	Slope []float64
	// Efficiency is the kriging efficiency (BV − KV)/BV; NaN for intrinsic
	// models.
	Efficiency []float64
}

// set writes the results of target t into the requested slices.
func (o *Output) set(t int, est, v, n, dist, slope, eff float64) {
	if o.Estimate != nil {
		o.Estimate[t] = est
	}
	if o.Variance != nil {
		o.Variance[t] = v
	}
	if o.Samples != nil {
		o.Samples[t] = n
	}
	if o.MeanDistance != nil {
		o.MeanDistance[t] = dist
	}
	if o.Slope != nil {
		o.Slope[t] = slope
	}
	if o.Efficiency != nil {
		o.Efficiency[t] = eff
	}
}

// check verifies the lengths of the requested slices.
func (o *Output) check(nt int) error {
	for _, f := range []struct {
		name string
		s    []float64
	}{
		{"Estimate", o.Estimate}, {"Variance", o.Variance}, {"Samples", o.Samples},
		{"MeanDistance", o.MeanDistance}, {"Slope", o.Slope}, {"Efficiency", o.Efficiency},
	} {
		if f.s != nil && len(f.s) != nt {
			return fmt.Errorf("kriging: output %s: length %d, want %d (one per target)", f.name, len(f.s), nt)
		}
	}
	return nil
}

// Estimate kriges every target (flat xyz: points, or block centres for
// block kriging) into out, in parallel over geostat.Workers(ctx) workers
// that take chunks of consecutive targets. The output does not depend on the
// number of workers, bit for bit. Block estimates use the block-average
// weights, solved once per block from the mean right-hand side. Targets in
// a coherent order (grid cells row by row) are fastest: each target's
// factorisation is then updated from the previous one's (see the package
// documentation).
//
// Cancellation of ctx is checked between chunks; the error then wraps
// ctx.Err() and out is partly written. progress, when not nil, is called
// after every chunk with the number of targets done and the total, never
// concurrently, with done increasing up to total.
func (k *Kriger) Estimate(ctx context.Context, targets []float64, out *Output, progress func(done, total int)) error {
	if out == nil {
		return fmt.Errorf("kriging: output: nil")
	}
	if len(targets)%3 != 0 {
		return fmt.Errorf("kriging: targets: length %d is not a multiple of 3", len(targets))
	}
	if out.Estimate != nil && k.values == nil {
		return fmt.Errorf("kriging: values: a weights-only kriger (nil values) cannot estimate")
	}
	nt := len(targets) / 3
	if err := out.check(nt); err != nil {
		return err
	}
	chunks := (nt + chunkSize - 1) / chunkSize
	// Each chunk restarts the slider (so the result does not depend on which
	// worker took it) and adds its statistics to the kriger's.
	_, err := geostat.ForChunks(ctx, nt, min(geostat.Workers(ctx), chunks), chunkSize, progress, func(int) func(lo, hi int) {
		s := k.newSlider()
		return func(lo, hi int) {
			s.reset()
			for t := lo; t < hi; t++ {
				s.estimateOne(targets, t, hi, out)
			}
			s.flush()
		}
	})
	if err == nil {
		err = ctx.Err() // cancelled after the last chunk: still an error
	}
	if err != nil {
		return fmt.Errorf("kriging: estimate: %w", err)
	}
	return nil
}
