package scenarios

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/objects"
)

// parquetBlock is the number of rows handed to the streaming writer at a
// time, a tile of the simulation grid.
const parquetBlock = 50000

// ensembleShape is the simulation output the Parquet scenarios write and
// read: one row per cell of the simulation case's grid, one float64 column
// per realisation.
func ensembleShape(z synthetic.Size) (rows, cols int) {
	s := synthetic.Simulation(z, 0)
	return s.GridSize[0] * s.GridSize[1] * s.GridSize[2], simulationRealisations(z)
}

// simulationRealisations is the number of realisations of the simulation
// scenarios (10 at medium and large, as in the tbsim issue).
func simulationRealisations(z synthetic.Size) int {
	if z == synthetic.Small {
		return 2
	}
	return 10
}

// ensembleColumns returns the ensemble of the simulation case's size in
// data units (synthetic.Case.Ensemble).
func ensembleColumns(cfg harness.Config) ([][]float64, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	rows, ncol := ensembleShape(cfg.Size)
	return c.Ensemble(rows, ncol), nil
}

func parquetWrite() harness.Scenario {
	return harness.Scenario{
		Name:        "parquet-write",
		Description: "stream a simulation ensemble (cells x realisations float64) into one zstd Parquet blob with its SHA-256 key (worker/objects)",
		Setup:       setupParquetWrite,
	}
}

func setupParquetWrite(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	cols, err := ensembleColumns(cfg)
	if err != nil {
		return nil, err
	}
	rows, ncol := len(cols[0]), len(cols)
	names := objects.EnsembleColumnNames("grade", ncol)
	types := objects.Float64Types(ncol)
	var buf bytes.Buffer
	var blob objects.Blob
	block := make([][]float64, ncol)
	w := &harness.Workload{
		Info:  fmt.Sprintf("%d rows x %d float64 columns, blocks of %d rows, zstd", rows, ncol, parquetBlock),
		Items: int64(rows), Unit: "rows",
		Counts: []harness.Count{{Name: "values", PerRun: float64(rows * ncol)}},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		buf.Reset()
		tw, err := objects.NewTableWriter(&buf, types, names, nil)
		if err != nil {
			return err
		}
		for lo := 0; lo < rows; lo += parquetBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(lo+parquetBlock, rows)
			for j := range block {
				block[j] = cols[j][lo:hi]
			}
			if err := tw.WriteFloat64Columns(block); err != nil {
				return err
			}
			if progress != nil {
				progress(hi, rows)
			}
		}
		blob, err = tw.Close()
		return err
	}
	w.Check = func() error {
		sum := sha256.Sum256(buf.Bytes())
		if blob.Key != hex.EncodeToString(sum[:]) || blob.Size != int64(buf.Len()) || blob.Rows != int64(rows) {
			return fmt.Errorf("blob %+v does not describe the %d bytes written", blob, buf.Len())
		}
		// Read the file back: it must hold the very same values.
		return readBack(buf.Bytes(), cols)
	}
	w.Details = func() map[string]float64 {
		return map[string]float64{
			"file_bytes":        float64(blob.Size),
			"compression_ratio": float64(8*rows*ncol) / float64(blob.Size),
		}
	}
	return w, nil
}

func parquetRead() harness.Scenario {
	return harness.Scenario{
		Name:        "parquet-read",
		Description: "decode and check a zstd Parquet ensemble blob into float64 columns (worker/objects ReadTable)",
		Setup:       setupParquetRead,
	}
}

func setupParquetRead(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	cols, err := ensembleColumns(cfg)
	if err != nil {
		return nil, err
	}
	rows, ncol := len(cols[0]), len(cols)
	file, blob, err := objects.EncodeFloat64(cols, objects.EnsembleColumnNames("grade", ncol), nil)
	if err != nil {
		return nil, err
	}
	var got [][]float64
	w := &harness.Workload{
		Info:  fmt.Sprintf("%d rows x %d float64 columns, %d bytes zstd", rows, ncol, blob.Size),
		Items: int64(rows), Unit: "rows",
		Counts: []harness.Count{{Name: "values", PerRun: float64(rows * ncol)}},
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		got = nil
		t, err := objects.ReadTable(bytes.NewReader(file), int64(len(file)),
			objects.Float64Spec("cell_attributes[0].values", ncol, int64(rows)))
		if err != nil {
			return err
		}
		got, err = t.Float64Columns("cell_attributes[0].values", false)
		return err
	}
	w.Check = func() error { return sameColumns(got, cols) }
	w.Release = func() { got = nil }
	w.Details = func() map[string]float64 { return map[string]float64{"file_bytes": float64(blob.Size)} }
	return w, nil
}

func readBack(file []byte, want [][]float64) error {
	t, err := objects.ReadTable(bytes.NewReader(file), int64(len(file)),
		objects.Float64Spec("check", len(want), int64(len(want[0]))))
	if err != nil {
		return err
	}
	got, err := t.Float64Columns("check", false)
	if err != nil {
		return err
	}
	return sameColumns(got, want)
}

func sameColumns(got, want [][]float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("read %d columns, want %d", len(got), len(want))
	}
	for j := range want {
		if len(got[j]) != len(want[j]) {
			return fmt.Errorf("column %d: read %d rows, want %d", j, len(got[j]), len(want[j]))
		}
		for i := range want[j] {
			if math.Float64bits(got[j][i]) != math.Float64bits(want[j][i]) {
				return fmt.Errorf("column %d row %d: read %v, wrote %v", j, i, got[j][i], want[j][i])
			}
		}
	}
	return nil
}
