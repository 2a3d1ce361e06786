package bmjob

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

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
	const nx, ny, nz = 250, 200, 200
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil,
		blockmodel.RegularSize(blockmodel.Size3D{NX: nx, NY: ny, NZ: nz}, blockmodel.XYZ{X: 5, Y: 5, Z: 5}))
	if err != nil {
		b.Fatal(err)
	}
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
	s, err := bmstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tx, err := s.Create(bmstore.Model{ID: "m"}, n)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(bmstore.Meta{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(8 * n)
	// Peak heap in use above the level before the update (the file is held
	// in memory by the benchmark, before), sampled every 10 ms.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	idle := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	defer func() {
		close(stop)
		<-sampled
		if p := peak.Load(); p > idle {
			b.ReportMetric(float64(p-idle)/(1<<20), "peak-heap-MiB")
		}
	}()
	b.ResetTimer()
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
}
