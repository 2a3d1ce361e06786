package bmjob

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// BenchmarkApplyUpdate10M adds one Float64 column to a 10,000,000-row
// regular model from a Parquet file (i, j, k uint32, value double; every
// row) through ApplyUpdate: read, match, write, commit. Bytes are the
// column's data (8 bytes a row); peak-heap-MiB is the most heap the update
// held above the level before it.
func BenchmarkApplyUpdate10M(b *testing.B) {
	g, s, tx := benchModel(b)
	n := g.NumParents()
	type row struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	batch := make([]row, 0, 100_000)
	for p := range n {
		i, j, k := g.ParentIJK(p)
		batch = append(batch, row{i, j, k, float64(p) * 0.001})
		if len(batch) == cap(batch) {
			if _, err := w.Write(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	file := buf.Bytes()
	if _, err := tx.Commit(bmstore.Meta{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(8 * n)
	// Peak heap in use above the level before the updates (the file is
	// held in memory by the benchmark, before).
	b.ResetTimer()
	peak := harness.HeapPeak(func() {
		for it := 0; b.Loop(); it++ {
			b.StopTimer()
			latest, _ := s.Latest("m")
			v, _ := s.Version("m", latest)
			u, err := bmwire.DecodeUpdate([]byte(fmt.Sprintf(`{"columns": {"new": [{"title": "cu%d", "data_type": "Float64"}]},
				"input_options": {"file_format": "parquet", "column_name_mapping": [{"file_column_name": "cu", "column_title": "cu%d"}]}}`, it, it)),
				ModelInfo(g, v))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := ApplyUpdate(context.Background(), s, UpdateInput{ModelID: "m", Geometry: g, Update: u,
				File: bytes.NewReader(file), FileSize: int64(len(file))}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkQuery10M queries one Float64 column of a 10,000,000-row
// regular model (lognormal grades with three decimals, one row in 50
// null) to Parquet, the output counted and dropped: scan, select,
// encode. Bytes are the column's data (8 bytes a row).
func BenchmarkQuery10M(b *testing.B) {
	g, s, tx := benchModel(b)
	n := g.NumParents()
	cw, err := tx.AddColumn(bmstore.ColumnMeta{Title: "cu", DataType: blockmodel.Float64})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c := bmstore.Column{Type: blockmodel.Float64, Floats: make([]float64, 100_000), Null: make([]bool, 100_000)}
	for lo := int64(0); lo < n; lo += 100_000 {
		for r := range c.Floats {
			c.Floats[r] = math.Round(math.Exp(0.8*rng.NormFloat64())*1000) / 1000
			c.Null[r] = rng.IntN(50) == 0
		}
		if err := cw.Write(c); err != nil {
			b.Fatal(err)
		}
	}
	if err := cw.Close(); err != nil {
		b.Fatal(err)
	}
	v, err := tx.Commit(bmstore.Meta{})
	if err != nil {
		b.Fatal(err)
	}
	q, err := bmwire.DecodeQuery([]byte(`{"columns": ["cu"]}`), ModelInfo(g, v))
	if err != nil {
		b.Fatal(err)
	}
	var out countingWriter
	b.SetBytes(8 * n)
	for b.Loop() {
		out = 0
		if _, err := Query(context.Background(), s, "m", g, v, q, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out), "output-bytes")
}

// countingWriter counts the bytes written to it and drops them.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// benchModel is the benchmarks' 250 × 200 × 200 regular geometry (5 m
// blocks) and a store in a temporary directory creating its model "m"
// (to be committed).
func benchModel(b *testing.B) (*blockmodel.Geometry, *bmstore.Store, *bmstore.Tx) {
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil,
		blockmodel.RegularSize(blockmodel.Size3D{NX: 250, NY: 200, NZ: 200}, blockmodel.XYZ{X: 5, Y: 5, Z: 5}))
	if err != nil {
		b.Fatal(err)
	}
	s, err := bmstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tx, err := s.Create(bmstore.Model{ID: "m"}, g.NumParents())
	if err != nil {
		b.Fatal(err)
	}
	return g, s, tx
}
