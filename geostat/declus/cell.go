package declus

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// Objective selects how Cell chooses among several cell sizes.
type Objective int

const (
	// Minimize keeps the cell size with the smallest declustered mean (the
	// usual choice when high values are clustered, GSLIB's iminmax 0).
	Minimize Objective = iota
	// Maximize keeps the cell size with the largest declustered mean (low
	// values clustered, GSLIB's iminmax 1).
	Maximize
)

// CellParams are the parameters of cell declustering.
type CellParams struct {
	// Sizes are the cell sizes along x to try (each finite and > 0). With
	// one size its weights are returned; with several, the size whose
	// declustered mean is extreme according to Objective (see Cell).
	// SizeRange builds declus's regular sequence.
	Sizes []float64
	// AnisY and AnisZ scale the cell size along y and z: a cell measures
	// size × size·AnisY × size·AnisZ (declus's Y and Z cell anisotropy).
	// 0 means 1.
	AnisY, AnisZ float64
	// Offsets is the number of grid origins averaged per size (≥ 1).
	Offsets int
	// Objective chooses among several sizes; ignored with one size.
	Objective Objective
}

// CellResult holds the weights of a cell declustering.
type CellResult struct {
	// Weights has one weight per sample, summing to 1; 0 for samples whose
	// value is NaN (not declustered).
	Weights []float64
	// Size is the chosen cell size along x, or 0 when no size improved on
	// the equal-weight mean and the weights are equal (see Cell).
	Size float64
	// Means are the declustered means per size, in the order of Sizes (nil
	// when Cell was given no values).
	Means []float64
}

// SizeRange returns declus's sequence of cell sizes: steps+1 sizes from
// smallest to largest in equal increments (steps ≥ 1), or the single size
// smallest when steps ≤ 1 (declus with ncell = 1 uses only cmin).
func SizeRange(smallest, largest float64, steps int) []float64 {
	if steps <= 1 {
		return []float64{smallest}
	}
	inc := (largest - smallest) / float64(steps)
	s := make([]float64, steps+1)
	for k := range s {
		s[k] = smallest + float64(k)*inc
	}
	return s
}

// originShift is declus's lower origin: the data minimum less 0.01 data
// units along each axis.
const originShift = 0.01

// Cell computes cell-declustering weights, following GSLIB's declus:
//
//   - The grid of a size s has cells s × s·AnisY × s·AnisZ aligned with the
//     coordinate axes. Its first origin is the data minimum less 0.01 (data
//     units) along each axis; origin k = 0..Offsets−1 is shifted down by
//     k·f per axis, with f = min(cell size/Offsets, half the data extent)
//     on that axis (a diagonal shift, as declus).
//   - For one origin, the n_c samples of an occupied cell c get 1/n_c each,
//     normalised to sum 1 over all samples (1/(n_c·C) with C occupied
//     cells). The weights of a size are the sum over origins, normalised to
//     sum 1.
//   - With several sizes, the declustered mean Σ w_i z_i of each size is
//     compared, in order, with the best so far, starting from the
//     equal-weight mean: a size is kept when its mean is strictly below
//     (Minimize) or above (Maximize). When none is, the weights stay equal
//     and CellResult.Size is 0, as in declus.
//
// coords are flat world coordinates (x0, y0, z0, x1, ...); values, one per
// sample, may be nil with a single size (positions alone decide the
// weights) and are needed with several. Samples whose value is NaN are left
// out (weight 0), like declus's trimmed data. Weights sum to 1 (declus
// writes them scaled to sum to the number of data). The computation is in
// float64 (declus is single precision) and its result does not depend on the
// number of goroutines (geostat.Workers(ctx)); progress, when not nil, gets
// the number of (size, origin) grids done and their total; a cancelled ctx
// stops it with an error wrapping ctx.Err().
func Cell(ctx context.Context, coords, values []float64, p CellParams, progress func(done, total int)) (*CellResult, error) {
	if err := p.validate(values != nil); err != nil {
		return nil, err
	}
	if len(coords)%3 != 0 {
		return nil, fmt.Errorf("declus: coords: length %d is not a multiple of 3", len(coords))
	}
	n := len(coords) / 3
	if values != nil && len(values) != n {
		return nil, fmt.Errorf("declus: values: %d values for %d samples", len(values), n)
	}
	ay, az := p.AnisY, p.AnisZ
	if ay == 0 {
		ay = 1
	}
	if az == 0 {
		az = 1
	}

	// The samples used, their coordinates and the data box.
	keep, lo, hi, err := geostat.KeptBox[int](coords, values, func(i int, c float64) error {
		return fmt.Errorf("declus: coords: sample %d has a non-finite coordinate %v", i, c)
	}, func(i int) error {
		if values != nil && math.IsInf(values[i], 0) {
			return fmt.Errorf("declus: values: sample %d has the infinite value %v", i, values[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("declus: no sample to decluster (%d samples, all without a value)", n)
	}
	m := len(keep)
	for _, s := range p.Sizes {
		for d, f := range [3]float64{1, ay, az} {
			if (hi[d]-lo[d]+2*originShift+s*f)/(s*f) > 1<<40 {
				return nil, fmt.Errorf("declus: cell_size: %v is too small for the data extent %v along axis %d", s, hi[d]-lo[d], d)
			}
		}
	}

	// Jobs are (size, origin) pairs; each writes its normalised weights
	// into its own row, summed in origin order afterwards.
	nj := len(p.Sizes) * p.Offsets
	rows := make([][]float64, p.Offsets)
	res := &CellResult{Weights: make([]float64, n)}
	if values != nil {
		res.Means = make([]float64, len(p.Sizes))
	}
	best := make([]float64, m)
	for j := range best {
		best[j] = 1 / float64(m)
	}
	bestMean := 0.0
	if values != nil {
		for _, i := range keep {
			bestMean += values[i]
		}
		bestMean /= float64(m)
	}
	sizeW := make([]float64, m)
	done := 0
	scratches := make([]cellScratch, geostat.Workers(ctx)) // reused by every size
	for si, s := range p.Sizes {
		cs := [3]float64{s, s * ay, s * az}
		err := parallelJobs(ctx, p.Offsets, scratches, func(k int, sc *cellScratch) {
			if rows[k] == nil {
				rows[k] = make([]float64, m)
			}
			var origin [3]float64
			for d := 0; d < 3; d++ {
				f := math.Min(cs[d]/float64(p.Offsets), 0.5*(hi[d]-lo[d]))
				origin[d] = lo[d] - originShift - float64(k)*f
			}
			sc.weights(rows[k], coords, keep, origin, cs)
		}, func() {
			done++
			if progress != nil {
				progress(done, nj)
			}
		})
		if err != nil {
			return nil, err
		}
		clear(sizeW)
		for k := 0; k < p.Offsets; k++ {
			for j, w := range rows[k] {
				sizeW[j] += w
			}
		}
		normalise(sizeW)
		if values == nil {
			copy(best, sizeW)
			res.Size = s
			break
		}
		mean := 0.0
		for j, i := range keep {
			mean += sizeW[j] * values[i]
		}
		res.Means[si] = mean
		if len(p.Sizes) == 1 || (p.Objective == Minimize && mean < bestMean) || (p.Objective == Maximize && mean > bestMean) {
			bestMean = mean
			res.Size = s
			copy(best, sizeW)
		}
	}
	for j, i := range keep {
		res.Weights[i] = best[j]
	}
	return res, nil
}

// validate checks the parameters; withValues tells whether values are given.
func (p CellParams) validate(withValues bool) error {
	if len(p.Sizes) == 0 {
		return fmt.Errorf("declus: cell_size: at least one cell size is required")
	}
	for k, s := range p.Sizes {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("declus: cell_size[%d]: must be a finite number > 0, got %v", k, s)
		}
	}
	if len(p.Sizes) > 1 && !withValues {
		return fmt.Errorf("declus: cell_size: choosing among %d cell sizes needs the sample values (the declustered mean decides)", len(p.Sizes))
	}
	for _, a := range []struct {
		name string
		v    float64
	}{{"anisotropy_y", p.AnisY}, {"anisotropy_z", p.AnisZ}} {
		if a.v < 0 || math.IsNaN(a.v) || math.IsInf(a.v, 0) {
			return fmt.Errorf("declus: %s: must be a finite number > 0 (0 means 1), got %v", a.name, a.v)
		}
	}
	if p.Offsets < 1 {
		return fmt.Errorf("declus: offsets: must be at least 1, got %d", p.Offsets)
	}
	if p.Objective != Minimize && p.Objective != Maximize {
		return fmt.Errorf("declus: objective: unknown value %d", p.Objective)
	}
	return nil
}

// normalise scales w to sum 1.
func normalise(w []float64) {
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	inv := 1 / sum
	for j := range w {
		w[j] *= inv
	}
}

// cellScratch is one goroutine's scratch space for counting samples per
// cell.
type cellScratch struct {
	keys   [][3]int64
	counts map[[3]int64]int32
}

// weights writes into w the weights of one grid: 1/(n_c·C) for a sample in
// a cell of n_c samples, C occupied cells.
func (sc *cellScratch) weights(w []float64, coords []float64, keep []int, origin, cs [3]float64) {
	if cap(sc.keys) < len(keep) {
		sc.keys = make([][3]int64, len(keep))
	}
	keys := sc.keys[:len(keep)]
	if sc.counts == nil {
		sc.counts = make(map[[3]int64]int32)
	}
	clear(sc.counts)
	for j, i := range keep {
		var key [3]int64
		for d := 0; d < 3; d++ {
			// ≥ 0: the origin is below the data.
			key[d] = int64((coords[3*i+d] - origin[d]) / cs[d])
		}
		keys[j] = key
		sc.counts[key]++
	}
	inv := 1 / float64(len(sc.counts))
	for j, key := range keys {
		w[j] = inv / float64(sc.counts[key])
	}
}

// parallelJobs runs job(0..total−1) on up to len(scratches) goroutines,
// goroutine w with scratches[w], calling doneOne (serialised) after each job.
func parallelJobs(ctx context.Context, total int, scratches []cellScratch, job func(k int, sc *cellScratch), doneOne func()) error {
	workers := max(1, min(len(scratches), total))
	_, err := geostat.ForChunks(ctx, total, workers, 1, func(int, int) { doneOne() }, func(w int) func(lo, hi int) {
		sc := &scratches[w]
		return func(k, _ int) { job(k, sc) }
	})
	if err != nil {
		return fmt.Errorf("declus: cell declustering stopped: %w", err)
	}
	return nil
}
