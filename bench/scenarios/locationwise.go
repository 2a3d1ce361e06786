package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/objects"
)

// locationWiseRealisations is the ensemble width of the location-wise issue's
// target (1,000,000 cells × 100 realisations at medium size).
const locationWiseRealisations = 100

// locationWiseOps is the workload: summary, 3 quantiles and 2
// cutoffs (probability and mean above each).
var locationWiseOps = ensemble.Operations{
	Summary:          true,
	Quantiles:        []float64{0.1, 0.5, 0.9},
	ProbabilityAbove: []float64{1, 3},
	MeanAbove:        []float64{1, 3},
}

// locationWiseCells is the number of cells of the ensemble at each size.
func locationWiseCells(z synthetic.Size) int {
	switch z {
	case synthetic.Small:
		return 20_000
	case synthetic.Medium:
		return 1_000_000
	}
	return 10_000_000
}

func locationWise() harness.Scenario {
	return harness.Scenario{
		Name: "location-wise",
		Description: "stream a cells x 100 ensemble Parquet blob from disk row group by row group with the location-wise task's reader " +
			"(objects.EnsembleReader), once reading only and once computing summary, 3 quantiles and 2 cutoffs per cell (geostat/ensemble, " +
			"the task's path without writing the outputs); details give both times, their ratio and the ratio to the whole-table reader",
		Setup: setupLocationWise,
	}
}

// ensembleValue is realisation r of cell i of the scenario's ensemble: a
// skewed grade, exponential around a mean that drifts smoothly along the
// cells, from a hash of (seed, r, i) so any cell can be recomputed alone.
func ensembleValue(seed uint64, r, i int) float64 {
	h := splitMix(seed ^ uint64(r)<<40 ^ uint64(i))
	u := (float64(h>>11) + 0.5) / (1 << 53)
	return (1 + 0.6*math.Sin(float64(i)/5000)) * -math.Log(u)
}

func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// writeEnsembleFile writes the ensemble of cells × R values to a temporary
// file, tile by tile, with the worker's streaming Parquet writer (as the
// simulation task writes its ensembles: one float64 column per realisation,
// zstd, row groups of objects.DefaultRowGroupRows).
func writeEnsembleFile(seed uint64, cells, R int) (*os.File, objects.Blob, error) {
	f, err := os.CreateTemp("", "geostat-bench-ensemble-*.parquet")
	if err != nil {
		return nil, objects.Blob{}, err
	}
	fail := func(err error) (*os.File, objects.Blob, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, objects.Blob{}, err
	}
	tw, err := objects.NewTableWriter(f, objects.Float64Types(R), objects.EnsembleColumnNames("grade", R), nil)
	if err != nil {
		return fail(err)
	}
	const tile = objects.DefaultRowGroupRows
	cols := make([][]float64, R)
	for r := range cols {
		cols[r] = make([]float64, tile)
	}
	for lo := 0; lo < cells; lo += tile {
		n := min(tile, cells-lo)
		var wg sync.WaitGroup
		for r := range cols {
			wg.Go(func() {
				for i := range n {
					cols[r][i] = ensembleValue(seed, r, lo+i)
				}
			})
		}
		wg.Wait()
		block := make([][]float64, R)
		for r := range cols {
			block[r] = cols[r][:n]
		}
		if err := tw.WriteFloat64Columns(block); err != nil {
			return fail(err)
		}
	}
	blob, err := tw.Close()
	if err != nil {
		return fail(err)
	}
	return f, blob, nil
}

// newParquetSource opens the ensemble file with the worker's streaming
// reader (objects.EnsembleReader, the reader of the location-wise task),
// checking it holds cells × R float64 columns.
func newParquetSource(r io.ReaderAt, size int64, cells, R int) (*objects.EnsembleReader, error) {
	return objects.NewEnsembleReader(r, size, objects.Float64Spec("cell_attributes[0].values", R, int64(cells)), nil, 0)
}

// readAll reads every tile of s without computing anything: the baseline of
// the location-wise ratio. It returns the sum of a sample of the values, so
// the reads cannot be skipped and the check sees the data.
func readAll(ctx context.Context, s *objects.EnsembleReader, buf [][]float64) (float64, error) {
	s.Rewind()
	sum := 0.0
	for {
		t, err := s.ReadTile(ctx, buf)
		if errors.Is(err, io.EOF) {
			return sum, nil
		}
		if err != nil {
			return 0, err
		}
		for _, c := range t.Columns {
			sum += c[0] + c[t.Len()-1]
		}
	}
}

func setupLocationWise(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	cells, R := locationWiseCells(cfg.Size), locationWiseRealisations
	f, blob, err := writeEnsembleFile(cfg.Seed, cells, R)
	if err != nil {
		return nil, fmt.Errorf("writing the ensemble: %w", err)
	}
	closeFile := func() {
		f.Close()
		os.Remove(f.Name())
	}
	src, err := newParquetSource(f, blob.Size, cells, R)
	if err != nil {
		closeFile()
		return nil, err
	}
	if src.Cells() != cells || src.Realisations() != R {
		closeFile()
		return nil, fmt.Errorf("the file holds %d cells × %d realisations, want %d × %d", src.Cells(), src.Realisations(), cells, R)
	}
	// The reference: the worker's whole-table reader on the same blob,
	// timed once here (it holds the whole ensemble, so not at large size
	// and not inside the runs, whose peak memory is measured).
	readTable := math.NaN()
	if cfg.Size != synthetic.Large {
		t0 := time.Now()
		t, err := objects.ReadTable(f, blob.Size, objects.Float64Spec("cell_attributes[0].values", R, int64(cells)))
		if err != nil {
			closeFile()
			return nil, err
		}
		readTable = time.Since(t0).Seconds()
		if v := t.Columns[R-1].Float64[cells-1]; v != ensembleValue(cfg.Seed, R-1, cells-1) {
			closeFile()
			return nil, fmt.Errorf("objects.ReadTable read %v for the last value, wrote %v", v, ensembleValue(cfg.Seed, R-1, cells-1))
		}
	}
	var (
		lw            *ensemble.LocationWise
		readSum       float64
		readT, statsT []float64
		tileBytes     = float64(8 * src.MaxTile() * R)
		perCell       = 4 + len(locationWiseOps.Quantiles) + len(locationWiseOps.ProbabilityAbove) + len(locationWiseOps.MeanAbove)
		outputBytes   = float64(8 * cells * perCell)
		probes        = []int{0, 1, cells / 3, cells / 2, cells - 1}
	)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d cells x %d realisations, %d bytes zstd on disk, row groups of %d cells; summary + quantiles %v + cutoffs %v; one run = a read-only pass then a read+statistics pass",
			cells, R, blob.Size, src.MaxTile(), locationWiseOps.Quantiles, locationWiseOps.ProbabilityAbove),
		Items: int64(cells), Unit: "cells",
		Counts: []harness.Count{{Name: "values (both passes)", PerRun: 2 * float64(cells*R)}},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		// Pass 1: read only, into one tile buffer.
		buf := make([][]float64, R)
		for r := range buf {
			buf[r] = make([]float64, src.MaxTile())
		}
		t0 := time.Now()
		sum, err := readAll(ctx, src, buf)
		if err != nil {
			return err
		}
		readT = append(readT, time.Since(t0).Seconds())
		readSum = sum
		buf = nil
		runtime.GC()
		debug.FreeOSMemory()
		if progress != nil {
			progress(1, 2)
		}
		// Pass 2: read and compute (ensemble.Process holds up to 32 MiB of
		// pieces).
		t0 = time.Now()
		src.Rewind()
		l, err := ensemble.NewLocationWise(locationWiseOps, cells, R)
		if err != nil {
			return err
		}
		if err := ensemble.Process(ctx, src, l); err != nil {
			return err
		}
		statsT = append(statsT, time.Since(t0).Seconds())
		lw = l
		if progress != nil {
			progress(2, 2)
		}
		return nil
	}
	w.Check = func() error {
		if lw == nil {
			return fmt.Errorf("no result")
		}
		if math.IsNaN(readSum) || readSum <= 0 {
			return fmt.Errorf("the read-only pass saw no data (sum %v)", readSum)
		}
		return checkLocationWise(cfg.Seed, R, lw, probes)
	}
	w.Release = func() { lw = nil }
	w.Details = func() map[string]float64 {
		rd, st := median(readT), median(statsT)
		d := map[string]float64{
			"read_seconds":           rd,
			"read_stats_seconds":     st,
			"ratio_to_read":          st / rd,
			"file_bytes":             float64(blob.Size),
			"tile_bytes":             tileBytes,
			"output_bytes":           outputBytes,
			"memory_budget_bytes":    2*tileBytes + outputBytes,
			"statistics_cells_per_s": float64(cells) / st,
		}
		if !math.IsNaN(readTable) {
			d["read_table_seconds"], d["ratio_to_read_table"] = readTable, st/readTable
		}
		return d
	}
	w.Close = closeFile
	return w, nil
}

// checkLocationWise recomputes the statistics of the probe cells from the
// generator by sorting their values.
func checkLocationWise(seed uint64, R int, l *ensemble.LocationWise, probes []int) error {
	v := make([]float64, R)
	for _, c := range probes {
		for r := range v {
			v[r] = ensembleValue(seed, r, c)
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		mean := sum / float64(R)
		ss := 0.0
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := map[string]float64{"min": s[0], "max": s[R-1], "mean": mean, "variance": ss / float64(R)}
		for _, q := range locationWiseOps.Quantiles {
			h := q * float64(R-1)
			k := int(h)
			want["Quantile: "+ensemble.FormatNumber(q)] = s[k] + (h-float64(k))*(s[min(k+1, R-1)]-s[k])
		}
		for _, cut := range locationWiseOps.ProbabilityAbove {
			n, sm := 0, 0.0
			for _, x := range v {
				if x > cut {
					n++
					sm += x
				}
			}
			want["Prob>"+ensemble.FormatNumber(cut)] = float64(n) / float64(R)
			if n > 0 {
				want["Mean>"+ensemble.FormatNumber(cut)] = sm / float64(n)
			} else {
				want["Mean>"+ensemble.FormatNumber(cut)] = math.NaN()
			}
		}
		for _, o := range l.Outputs() {
			w, ok := want[o.Name]
			if !ok {
				return fmt.Errorf("unexpected output %q", o.Name)
			}
			got := o.Values[c]
			if math.IsNaN(w) != math.IsNaN(got) || (!math.IsNaN(w) && math.Abs(got-w) > 1e-12*math.Max(1, math.Abs(w))) {
				return fmt.Errorf("cell %d %s = %v, recomputed %v", c, o.Name, got, w)
			}
		}
	}
	return nil
}

// median of a list of durations (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return 0.5 * (s[n/2-1] + s[n/2])
}
