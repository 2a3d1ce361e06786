package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// The block model scenarios time the block model area on a regular model
// of 10,000,000 blocks (250 x 200 x 200; 100,000 at size small): creating
// it in the store (worker/blockmodel/bmstore), an update job adding a
// Float64 column from a Parquet file on disk (bmjob.ApplyUpdate, the
// worker's update job processing) and a query job of that column to a
// Parquet file on disk (bmjob.Query). Each reports MB/s of column data (8
// bytes a block) and, in its details, the Go heap's peak above its level
// before the run (peak_heap_above_idle_mib): the update and the query
// stream, so it stays far below the column's size.

// bmDims is the grid of the block model scenarios.
func bmDims(z synthetic.Size) blockmodel.Size3D {
	if z == synthetic.Small {
		return blockmodel.Size3D{NX: 50, NY: 50, NZ: 40}
	}
	return blockmodel.Size3D{NX: 250, NY: 200, NZ: 200}
}

// bmGeometry is the regular geometry of the scenarios (5 m blocks).
func bmGeometry(z synthetic.Size) (*blockmodel.Geometry, blockmodel.SizeOptions, error) {
	size := blockmodel.RegularSize(bmDims(z), blockmodel.XYZ{X: 5, Y: 5, Z: 5})
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{X: 1000, Y: 2000, Z: 100}, nil, size)
	return g, size, err
}

// bmGrade is the grade of block r: lognormal, three decimals (as assays
// are reported), one block in 50 without a value. It is a function of r
// and the seed so checks need not keep the column.
func bmGrade(seed uint64, r int64) (float64, bool) {
	h := splitmix(seed ^ uint64(r)*0x9e3779b97f4a7c15)
	if h%50 == 0 {
		return 0, false
	}
	u1 := (float64(h>>11) + 0.5) / (1 << 53)
	u2 := float64(splitmix(h)>>11) / (1 << 53)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return math.Round(math.Exp(0.8*z)*1000) / 1000, true
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// bmEnv is a store in a temporary directory holding one model.
type bmEnv struct {
	dir   string
	store *bmstore.Store
	geom  *blockmodel.Geometry
	size  blockmodel.SizeOptions
	rows  int64
	peak  uint64        // largest heap peak above idle of the runs
	cpu   time.Duration // process CPU time (user and system) of the runs
	runs  int
}

func newBMEnv(cfg harness.Config, withModel bool) (*bmEnv, error) {
	g, size, err := bmGeometry(cfg.Size)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "geostat-bench-bm-*")
	if err != nil {
		return nil, err
	}
	s, err := bmstore.Open(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e := &bmEnv{dir: dir, store: s, geom: g, size: size, rows: g.WholeBlocks().NumRows()}
	if withModel {
		if err := e.create("m"); err != nil {
			e.close()
			return nil, err
		}
	}
	return e, nil
}

func (e *bmEnv) close() { os.RemoveAll(e.dir) }

// create creates a regular model of the scenario's geometry: version 1,
// every block, no column.
func (e *bmEnv) create(id string) error {
	rec, err := json.Marshal(map[string]any{"name": id, "size_options": e.size})
	if err != nil {
		return err
	}
	tx, err := e.store.Create(bmstore.Model{ID: id, Data: rec}, e.geom.WholeBlocks().NumRows())
	if err != nil {
		return err
	}
	_, err = tx.Commit(bmstore.Meta{CreatedBy: "bench", Comment: "created"})
	return err
}

// measured runs f and records the heap's peak above its level before
// (harness.HeapPeak) and the process's CPU time.
func (e *bmEnv) measured(f func() error) error {
	var err error
	cpu0 := processCPU()
	peak := harness.HeapPeak(func() { err = f() })
	e.cpu += processCPU() - cpu0
	e.runs++
	e.peak = max(e.peak, peak)
	return err
}

// processCPU is the CPU time (user and system) the process has used so
// far: with other processes on the cores, the cost of a run that its wall
// time does not show.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (e *bmEnv) details(more map[string]float64) func() map[string]float64 {
	return func() map[string]float64 {
		d := map[string]float64{"peak_heap_above_idle_mib": float64(e.peak) / (1 << 20)}
		if e.runs > 0 {
			// CPU seconds a run (warm-up included) over both cores
			d["cpu_seconds_per_run"] = e.cpu.Seconds() / float64(e.runs)
		}
		for k, v := range more {
			d[k] = v
		}
		return d
	}
}

// columnData is the per-run count of MB of Float64 column data.
func columnData(rows int64) []harness.Count {
	return []harness.Count{{Name: "MB of column data", PerRun: float64(rows*8) / 1e6}}
}

func bmCreate() harness.Scenario {
	return harness.Scenario{
		Name:        "bm-create",
		Description: "create a regular block model of 10,000,000 blocks in the block model store: geometry, model record, version 1 (worker/blockmodel/bmstore)",
		Setup:       setupBMCreate,
	}
}

func setupBMCreate(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	e, err := newBMEnv(cfg, false)
	if err != nil {
		return nil, err
	}
	runs := 0
	var id string
	w := &harness.Workload{
		Info:  fmt.Sprintf("regular %dx%dx%d = %d blocks", e.size.NBlocks.NX, e.size.NBlocks.NY, e.size.NBlocks.NZ, e.rows),
		Items: e.rows, Unit: "blocks",
		Close: e.close,
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		runs++
		id = fmt.Sprintf("m%d", runs)
		return e.measured(func() error {
			g, _, err := bmGeometry(cfg.Size)
			if err != nil {
				return err
			}
			if n := g.WholeBlocks().NumRows(); n != e.rows {
				return fmt.Errorf("geometry of %d blocks, want %d", n, e.rows)
			}
			return e.create(id)
		})
	}
	w.Check = func() error {
		v, err := e.store.Version(id, 1)
		if err != nil {
			return err
		}
		if v.Rows != e.rows {
			return fmt.Errorf("model %s has %d rows, want %d", id, v.Rows, e.rows)
		}
		return nil
	}
	w.Details = e.details(nil)
	return w, nil
}

// bmUploadRow is a row of the update file: the block's indices and grade.
// The indices are dictionary-encoded, the grade PLAIN, as pyarrow writes
// them by default (its grade dictionary passes 1 MiB within the first row
// group and falls back to PLAIN).
type bmUploadRow struct {
	I     uint32   `parquet:"i,dict"`
	J     uint32   `parquet:"j,dict"`
	K     uint32   `parquet:"k,dict"`
	Grade *float64 `parquet:"grade,optional"`
}

// writeUpload writes the update file of every block, in model order
// (i fastest), to path, as the public client writes it
// (evo-blockmodels' pyarrow.parquet.write_table with its defaults: Snappy
// pages, data pages v1, row groups of 1,048,576 rows); it returns its size.
func writeUpload(path string, d blockmodel.Size3D, seed uint64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := parquet.NewGenericWriter[bmUploadRow](bw, parquet.Compression(&snappy.Codec{}),
		parquet.DataPageVersion(1), parquet.MaxRowsPerRowGroup(1<<20))
	chunk := make([]bmUploadRow, 0, 65536)
	grades := make([]float64, cap(chunk))
	n := int64(d.NX) * int64(d.NY) * int64(d.NZ)
	for r := range n {
		row := bmUploadRow{I: uint32(r % int64(d.NX)), J: uint32(r / int64(d.NX) % int64(d.NY)), K: uint32(r / (int64(d.NX) * int64(d.NY)))}
		if v, ok := bmGrade(seed, r); ok {
			grades[len(chunk)] = v
			row.Grade = &grades[len(chunk)]
		}
		chunk = append(chunk, row)
		if len(chunk) == cap(chunk) || r == n-1 {
			if _, err := w.Write(chunk); err != nil {
				return 0, err
			}
			chunk = chunk[:0]
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

func bmAddColumn() harness.Scenario {
	return harness.Scenario{
		Name:        "bm-add-column",
		Description: "add a Float64 column to a 10,000,000-block regular model from a Parquet file on disk (i, j, k, grade): the update job's processing, bmjob.ApplyUpdate (worker/blockmodel/bmjob, bmwire, bmstore)",
		Setup:       setupBMAddColumn,
	}
}

func setupBMAddColumn(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	e, err := newBMEnv(cfg, true)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(e.dir, "upload.parquet")
	size, err := writeUpload(path, *e.size.NBlocks, cfg.Seed)
	if err != nil {
		e.close()
		return nil, err
	}
	runs := 0
	var ver *bmstore.Version
	w := &harness.Workload{
		Info:  fmt.Sprintf("%d blocks, upload of %d bytes (pyarrow's defaults: Snappy, i j k uint32 dictionaries + grade), bmjob.ApplyUpdate from the file on disk", e.rows, size),
		Items: e.rows, Unit: "blocks",
		Counts: columnData(e.rows),
		Close:  e.close,
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		runs++
		return e.measured(func() error {
			// The update job's processing (worker/blockmodel/bmjob): the
			// request decoded against the latest version, then the file
			// read from disk and the column written and committed.
			latest, err := e.store.Latest("m")
			if err != nil {
				return err
			}
			base, err := e.store.Version("m", latest)
			if err != nil {
				return err
			}
			title := fmt.Sprintf("grade_%d", runs)
			u, err := bmwire.DecodeUpdate([]byte(fmt.Sprintf(`{"columns": {"new": [{"title": %q, "data_type": "Float64"}]},
				"input_options": {"file_format": "parquet", "column_name_mapping": [{"file_column_name": "grade", "column_title": %q}]}}`, title, title)),
				bmjob.ModelInfo(e.geom, base))
			if err != nil {
				return err
			}
			ver, err = bmjob.ApplyUpdate(ctx, e.store, bmjob.UpdateInput{ModelID: "m", Geometry: e.geom, Update: u,
				FilePath: path, CreatedBy: "bench"})
			return err
		})
	}
	w.Check = func() error {
		col := ver.Columns[len(ver.Columns)-1]
		return checkGrades(e, ver.VersionID, col.ColID, cfg.Seed)
	}
	w.Details = e.details(map[string]float64{"upload_bytes": float64(size)})
	return w, nil
}

// checkGrades reads a column of the model back and compares every block
// with bmGrade.
func checkGrades(e *bmEnv, version int, colID string, seed uint64) error {
	sc, err := e.store.Scan("m", version, []string{colID}, 0, e.rows, 0)
	if err != nil {
		return err
	}
	defer sc.Close()
	var r int64
	for {
		b, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		c := &b[0]
		for i := range c.Len() {
			want, ok := bmGrade(seed, r)
			if c.IsNull(i) == ok || (ok && c.Floats[i] != want) {
				return fmt.Errorf("block %d: stored %v (null %v), want %v (null %v)", r, c.Floats[i], c.IsNull(i), want, !ok)
			}
			r++
		}
	}
	if r != e.rows {
		return fmt.Errorf("read %d blocks, want %d", r, e.rows)
	}
	return nil
}

func bmQuery() harness.Scenario {
	return harness.Scenario{
		Name:        "bm-query",
		Description: "query one Float64 column of a 10,000,000-block regular model to a Parquet file on disk (i, j, k and the column; bmjob.Query, the query job's processing)",
		Setup:       setupBMQuery,
	}
}

func setupBMQuery(_ context.Context, cfg harness.Config) (*harness.Workload, error) {
	e, err := newBMEnv(cfg, true)
	if err != nil {
		return nil, err
	}
	ver, err := writeGrades(e, cfg.Seed)
	if err != nil {
		e.close()
		return nil, err
	}
	col := ver.Columns[0]
	out := filepath.Join(e.dir, "query.parquet")
	var outSize int64
	w := &harness.Workload{
		Info:  fmt.Sprintf("%d blocks, one Float64 column to Parquet", e.rows),
		Items: e.rows, Unit: "blocks",
		Counts: columnData(e.rows),
		Close:  e.close,
	}
	w.Run = func(ctx context.Context, _ func(done, total int)) error {
		return e.measured(func() (err error) {
			outSize, err = queryToFile(e, ver.VersionID, col, out)
			return err
		})
	}
	w.Check = func() error { return checkQueryFile(out, e.rows, cfg.Seed) }
	d := e.details(nil)
	w.Details = func() map[string]float64 {
		m := d()
		m["output_bytes"] = float64(outSize)
		return m
	}
	return w, nil
}

// queryToFile runs the query job's processing (bmjob.Query) for one
// column of a version of the model, to a Parquet file on disk: the index
// columns i, j, k and the column, rows without a value left out (the
// default exclude_null_rows). It returns the file's size.
func queryToFile(e *bmEnv, version int, col bmstore.ColumnMeta, out string) (int64, error) {
	v, err := e.store.Version("m", version)
	if err != nil {
		return 0, err
	}
	q, err := bmwire.DecodeQuery([]byte(fmt.Sprintf(`{"columns": [%q]}`, col.Title)), bmjob.ModelInfo(e.geom, v))
	if err != nil {
		return 0, err
	}
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bmjob.Query(context.Background(), e.store, "m", e.geom, v, q, bw); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

// writeGrades adds the grade column to the model through the store.
func writeGrades(e *bmEnv, seed uint64) (*bmstore.Version, error) {
	tx, err := e.store.Begin("m")
	if err != nil {
		return nil, err
	}
	cw, err := tx.AddColumn(bmstore.ColumnMeta{Title: "grade", DataType: blockmodel.Float64})
	if err != nil {
		tx.Abort()
		return nil, err
	}
	const batch = 100_000
	c := bmstore.Column{Type: blockmodel.Float64, Floats: make([]float64, batch), Null: make([]bool, batch)}
	for lo := int64(0); lo < e.rows; lo += batch {
		k := min(e.rows-lo, batch)
		for r := range k {
			v, ok := bmGrade(seed, lo+r)
			c.Floats[r], c.Null[r] = v, !ok
		}
		if err := cw.Write(bmstore.Column{Type: c.Type, Floats: c.Floats[:k], Null: c.Null[:k]}); err != nil {
			tx.Abort()
			return nil, err
		}
	}
	if err := cw.Close(); err != nil {
		tx.Abort()
		return nil, err
	}
	return tx.Commit(bmstore.Meta{CreatedBy: "bench"})
}

// checkQueryFile reads the query output back with parquet-go and compares
// every value of its last column (the grade) with bmGrade, the blocks
// without a grade left out.
func checkQueryFile(path string, rows int64, seed uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	var want []float64
	for r := range rows {
		if v, ok := bmGrade(seed, r); ok {
			want = append(want, v)
		}
	}
	if pf.NumRows() != int64(len(want)) {
		return fmt.Errorf("query output has %d rows, want %d", pf.NumRows(), len(want))
	}
	buf := make([]parquet.Value, 8192)
	var r int
	for _, rg := range pf.RowGroups() {
		chunks := rg.ColumnChunks()
		pages := chunks[len(chunks)-1].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return err
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if r >= len(want) || v.IsNull() || v.Double() != want[r] {
						pages.Close()
						return fmt.Errorf("query row %d: %v, want %v", r, v, want[min(r, len(want)-1)])
					}
					r++
				}
				if errors.Is(err, io.EOF) || k == 0 {
					break
				}
				if err != nil {
					pages.Close()
					return err
				}
			}
		}
		pages.Close()
	}
	if r != len(want) {
		return fmt.Errorf("query output: %d values, want %d", r, len(want))
	}
	return nil
}
