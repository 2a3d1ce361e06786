package bmstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// ref is the brute-force model: column title → full column.
type ref map[string]*Column

func randColumn(rng *rand.Rand, t DataType, n int) Column {
	c := newColumn(t, n)
	for r := 0; r < n; r++ {
		if rng.IntN(5) == 0 {
			c.appendNull()
			continue
		}
		c.Null = append(c.Null, false)
		switch t {
		case blockmodel.Boolean:
			c.Bools = append(c.Bools, rng.IntN(2) == 0)
		case blockmodel.Int8:
			c.Ints = append(c.Ints, int64(rng.IntN(256)-128))
		case blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
			c.Ints = append(c.Ints, int64(rng.Int32()))
		case blockmodel.Int64, blockmodel.Timestamp:
			c.Ints = append(c.Ints, rng.Int64()-math.MaxInt64/2)
		case blockmodel.UInt8:
			c.Uints = append(c.Uints, uint64(rng.IntN(256)))
		case blockmodel.UInt16, blockmodel.UInt32:
			c.Uints = append(c.Uints, uint64(rng.Uint32()))
		case blockmodel.UInt64:
			c.Uints = append(c.Uints, rng.Uint64())
		case blockmodel.Float16, blockmodel.Float32:
			c.Floats = append(c.Floats, float64(float32(rng.NormFloat64())))
		case blockmodel.Float64:
			c.Floats = append(c.Floats, rng.NormFloat64())
		case blockmodel.Utf8:
			c.Strings = append(c.Strings, fmt.Sprintf("s%d,\"x", rng.IntN(1000)))
		}
	}
	// narrow types hold values of their width
	if t == blockmodel.Int16 {
		for i := range c.Ints {
			c.Ints[i] = int64(int16(c.Ints[i]))
		}
	}
	if t == blockmodel.UInt16 {
		for i := range c.Uints {
			c.Uints[i] = uint64(uint16(c.Uints[i]))
		}
	}
	return c
}

// slice returns rows [lo, hi) of c as a batch.
func slice(c *Column, lo, hi int) Column {
	b := Column{Type: c.Type, Null: c.Null[lo:hi]}
	if c.Given != nil {
		b.Given = c.Given[lo:hi]
	}
	switch k, _ := kindOf(c.Type); k {
	case kBool:
		b.Bools = c.Bools[lo:hi]
	case kInt:
		b.Ints = c.Ints[lo:hi]
	case kUint:
		b.Uints = c.Uints[lo:hi]
	case kFloat:
		b.Floats = c.Floats[lo:hi]
	default:
		b.Strings = c.Strings[lo:hi]
	}
	return b
}

func writeAll(t *testing.T, w *ColumnWriter, c *Column, batch int) {
	t.Helper()
	n := c.Len()
	for lo := 0; lo < n; lo += batch {
		require.NoError(t, w.Write(slice(c, lo, min(n, lo+batch))))
	}
	require.NoError(t, w.Close())
}

// readAll reads a whole column of a version.
func readAll(t *testing.T, s *Store, id string, v int, col string, batch int) Column {
	t.Helper()
	ver, err := s.Version(id, v)
	require.NoError(t, err)
	sc, err := s.Scan(id, v, []string{col}, 0, ver.Rows, batch)
	require.NoError(t, err)
	defer sc.Close()
	var typ DataType = blockmodel.Int64
	if c, ok := ver.Column(col); ok {
		typ = c.DataType
	}
	return drain(t, sc, typ, int(ver.Rows))
}

// drain reads a scan of one column of type typ (about n rows) to its end.
func drain(t *testing.T, sc *Scanner, typ DataType, n int) Column {
	t.Helper()
	out := newColumn(typ, n)
	for {
		b, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for r := 0; r < b[0].Len(); r++ {
			out.appendFrom(&b[0], r)
		}
	}
	return out
}

func requireSame(t *testing.T, want, got *Column, what string) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len(), what)
	for r := 0; r < want.Len(); r++ {
		require.Equal(t, want.IsNull(r), got.IsNull(r), "%s row %d null", what, r)
		if want.IsNull(r) {
			continue
		}
		switch k, _ := kindOf(want.Type); k {
		case kBool:
			require.Equal(t, want.Bools[r], got.Bools[r], "%s row %d", what, r)
		case kInt:
			require.Equal(t, want.Ints[r], got.Ints[r], "%s row %d", what, r)
		case kUint:
			require.Equal(t, want.Uints[r], got.Uints[r], "%s row %d", what, r)
		case kFloat:
			require.Equal(t, want.Floats[r], got.Floats[r], "%s row %d", what, r)
		default:
			require.Equal(t, want.Strings[r], got.Strings[r], "%s row %d", what, r)
		}
	}
}

var allTypes = []DataType{blockmodel.Boolean, blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Int64, blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32, blockmodel.UInt64, blockmodel.Float16, blockmodel.Float32, blockmodel.Float64, blockmodel.Utf8, blockmodel.Date32, blockmodel.Timestamp}

func TestVersionsAgainstBruteForce(t *testing.T) {
	const n = 2345
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)

	// Version 1 with an internal column.
	tx, err := s.Create(Model{ID: "m1", Data: []byte(`{"name":"a"}`)}, n)
	require.NoError(t, err)
	parent := randColumn(rng, blockmodel.UInt64, n)
	w, err := tx.AddColumn(ColumnMeta{ColID: "_parent", Title: "_parent", DataType: blockmodel.UInt64, Internal: true})
	require.NoError(t, err)
	writeAll(t, w, &parent, 1000)
	v1, err := tx.Commit(Meta{CreatedBy: "u"})
	require.NoError(t, err)
	require.Equal(t, 1, v1.VersionID)
	require.Empty(t, v1.UserColumns())

	// Version 2: one column of every type.
	want := map[int]ref{}
	ids := map[string]string{}
	tx, err = s.Begin("m1")
	require.NoError(t, err)
	cur := ref{}
	for _, typ := range allTypes {
		c := randColumn(rng, typ, n)
		title := "c_" + string(typ)
		w, err := tx.AddColumn(ColumnMeta{Title: title, DataType: typ})
		require.NoError(t, err)
		writeAll(t, w, &c, 777)
		cur[title] = &c
	}
	v2, err := tx.Commit(Meta{Comment: "all types", BBox: &BBox{I: MinMax{0, 9}}})
	require.NoError(t, err)
	require.Equal(t, 2, v2.VersionID)
	require.Len(t, v2.Changes.New, len(allTypes))
	for _, c := range v2.Columns {
		ids[c.Title] = c.ColID
	}
	want[2] = cloneRef(cur)

	// Version 3: merge update of blockmodel.Float64 on some rows, replace of blockmodel.Int32 on some rows.
	tx, err = s.Begin("m1")
	require.NoError(t, err)
	upd := randColumn(rng, blockmodel.Float64, n)
	upd.Given = make([]bool, n)
	rep := randColumn(rng, blockmodel.Int32, n)
	rep.Given = make([]bool, n)
	touched := make([]bool, n)
	for r := 0; r < n; r++ {
		upd.Given[r] = r%3 == 0
		rep.Given[r] = r%5 == 0
		touched[r] = upd.Given[r] || rep.Given[r]
	}
	w, err = tx.UpdateColumn(ids["c_Float64"], false)
	require.NoError(t, err)
	writeAll(t, w, &upd, 500)
	w, err = tx.UpdateColumn(ids["c_Int32"], true)
	require.NoError(t, err)
	writeAll(t, w, &rep, 500)
	v3, err := tx.Commit(Meta{BBox: &BBox{I: MinMax{5, 6}}})
	require.NoError(t, err)
	f := newColumn(blockmodel.Float64, n)
	i32 := newColumn(blockmodel.Int32, n)
	for r := 0; r < n; r++ {
		if upd.Given[r] {
			f.appendFrom(&upd, r)
		} else {
			f.appendFrom(cur["c_Float64"], r)
		}
		if rep.Given[r] {
			i32.appendFrom(&rep, r)
		} else {
			i32.appendNull()
		}
	}
	cur["c_Float64"], cur["c_Int32"] = &f, &i32
	want[3] = cloneRef(cur)
	require.ElementsMatch(t, []string{"c_Float64", "c_Int32"}, v3.Changes.Updated)

	// Version 4: delete blockmodel.Utf8, rename blockmodel.Boolean (col_id kept), edit a unit.
	tx, err = s.Begin("m1")
	require.NoError(t, err)
	require.NoError(t, tx.DeleteColumn(ids["c_Utf8"]))
	require.NoError(t, tx.Rename(ids["c_Boolean"], "flag"))
	unit := "g/t"
	require.NoError(t, tx.SetColumnMeta(ids["c_Float64"], &unit, nil))
	require.Error(t, tx.Rename(ids["c_Int8"], "FLAG"), "titles are unique case-insensitively")
	v4, err := tx.Commit(Meta{})
	require.NoError(t, err)
	delete(cur, "c_Utf8")
	cur["flag"] = cur["c_Boolean"]
	delete(cur, "c_Boolean")
	want[4] = cloneRef(cur)
	require.Equal(t, []Renamed{{"c_Boolean", "flag"}}, v4.Changes.Renamed)
	c, ok := v4.Column("flag")
	require.True(t, ok)
	require.Equal(t, ids["c_Boolean"], c.ColID)
	require.Equal(t, v2.Columns[1+0].File, c.File, "an unchanged column is referenced, not copied")
	fc, _ := v4.Column("c_Float64")
	require.Equal(t, "g/t", *fc.UnitID)

	// Reopen: every version reads back as written.
	s, err = Open(dir)
	require.NoError(t, err)
	for v := 2; v <= 4; v++ {
		ver, err := s.Version("m1", v)
		require.NoError(t, err)
		require.Len(t, ver.UserColumns(), len(want[v]))
		for title, wc := range want[v] {
			got := readAll(t, s, "m1", v, title, 999)
			requireSame(t, wc, &got, fmt.Sprintf("v%d %s", v, title))
		}
	}
	gp := readAll(t, s, "m1", 4, "_parent", 1000)
	requireSame(t, &parent, &gp, "_parent")

	// version_id per row.
	for v, exp := range map[int]func(r int) int64{
		1: func(int) int64 { return 1 },
		2: func(int) int64 { return 2 },
		3: func(r int) int64 {
			if touched[r] {
				return 3
			}
			return 2
		},
	} {
		got := readAll(t, s, "m1", v, VersionIDColumn, 600)
		for r := 0; r < n; r++ {
			require.Equal(t, exp(r), got.Ints[r], "v%d row %d", v, r)
		}
	}
	g4 := readAll(t, s, "m1", 4, VersionIDColumn, 600)
	g3 := readAll(t, s, "m1", 3, VersionIDColumn, 600)
	require.Equal(t, g3.Ints, g4.Ints, "a rename/delete version writes no row")

	// Row-range scan.
	sc, err := s.Scan("m1", 3, []string{"c_Float64", "c_Int64"}, 1000, 1234, 100)
	require.NoError(t, err)
	row := 1000
	for {
		b, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for r := 0; r < b[0].Len(); r++ {
			require.Equal(t, want[3]["c_Float64"].IsNull(row), b[0].IsNull(r))
			require.Equal(t, want[3]["c_Int64"].Ints[row], b[1].Ints[r])
			row++
		}
	}
	require.Equal(t, 1234, row)
	sc.Close()

	// Deltas.
	nv, uv, dv, err := s.Deltas("m1", 1, 0, []string{ids["c_Float64"]}, &BBox{I: MinMax{0, 1}, J: MinMax{0, 0}, K: MinMax{0, 0}})
	require.NoError(t, err)
	require.Equal(t, []int{2}, vnums(nv))
	require.Empty(t, uv, "v3's box does not intersect")
	require.Empty(t, dv)
	_, uv, dv, err = s.Deltas("m1", 2, 0, []string{"*"}, &BBox{I: MinMax{6, 8}})
	require.NoError(t, err)
	require.Equal(t, []int{3}, vnums(uv))
	require.Equal(t, []int{4}, vnums(dv))
}

func vnums(vs []*Version) []int {
	var out []int
	for _, v := range vs {
		out = append(out, v.VersionID)
	}
	return out
}

func cloneRef(r ref) ref {
	out := ref{}
	for k, v := range r {
		out[k] = v
	}
	return out
}

func newModel(t *testing.T, s *Store, id string, n int64) {
	t.Helper()
	tx, err := s.Create(Model{ID: id}, n)
	require.NoError(t, err)
	_, err = tx.Commit(Meta{})
	require.NoError(t, err)
}

func TestConcurrentCommits(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	const n = 1000
	newModel(t, s, "m", n)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := s.Begin("m")
			if err != nil {
				errs <- err
				return
			}
			w, err := tx.AddColumn(ColumnMeta{Title: fmt.Sprintf("g%d", g), DataType: blockmodel.Float64})
			if err != nil {
				tx.Abort()
				errs <- err
				return
			}
			c := Column{Type: blockmodel.Float64, Floats: make([]float64, n)}
			for r := range c.Floats {
				c.Floats[r] = float64(g*n + r)
			}
			if err = w.Write(c); err == nil {
				err = w.Close()
			}
			if err == nil {
				_, err = tx.Commit(Meta{})
			} else {
				tx.Abort()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	l, err := s.Latest("m")
	require.NoError(t, err)
	require.Equal(t, 5, l)
	v, err := s.Version("m", 5)
	require.NoError(t, err)
	require.Len(t, v.UserColumns(), 4)
	for g := range 4 {
		got := readAll(t, s, "m", 5, fmt.Sprintf("g%d", g), 300)
		require.Equal(t, float64(g*n+7), got.Floats[7])
	}
}

func TestWriterErrors(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", 10)
	tx, err := s.Begin("m")
	require.NoError(t, err)
	w, err := tx.AddColumn(ColumnMeta{Title: "a", DataType: blockmodel.Float64})
	require.NoError(t, err)
	require.Error(t, w.Write(Column{Type: blockmodel.Int32, Ints: []int64{1}}), "wrong type")
	require.NoError(t, w.Write(Column{Type: blockmodel.Float64, Floats: make([]float64, 4)}))
	require.Error(t, w.Close(), "too few rows")
	_, err = tx.AddColumn(ColumnMeta{Title: "b", DataType: "Decimal"})
	require.Error(t, err)
	_, err = tx.AddColumn(ColumnMeta{Title: "version_id", DataType: blockmodel.Int64})
	require.Error(t, err)
	tx.Abort()
	l, _ := s.Latest("m")
	require.Equal(t, 1, l, "an aborted change leaves the model as it was")
	ents, _ := os.ReadDir(filepath.Join(s.modelDir("m"), "tmp"))
	require.Empty(t, ents)
}

func TestJobStateMachine(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	j, err := s.CreateJob(Job{ModelID: "m", Kind: JobUpdate, Status: PendingUpload, Payload: []byte(`{"upload_url":"u"}`)})
	require.NoError(t, err)
	_, err = s.TransitionJob(j.ID, PendingUpload, Complete, nil)
	require.ErrorIs(t, err, ErrConflict)
	_, err = s.TransitionJob(j.ID, PendingUpload, Queued, nil)
	require.NoError(t, err)
	_, err = s.TransitionJob(j.ID, PendingUpload, Queued, nil)
	require.ErrorIs(t, err, ErrConflict, "a second /uploaded is a conflict")
	_, err = s.TransitionJob(j.ID, Queued, Processing, nil)
	require.NoError(t, err)
	_, err = s.TransitionJob(j.ID, Processing, Complete, []byte(`{"version_id":2}`))
	require.NoError(t, err)
	s2, err := Open(s.root)
	require.NoError(t, err)
	got, err := s2.GetJob(j.ID)
	require.NoError(t, err)
	require.Equal(t, Complete, got.Status)
	require.JSONEq(t, `{"version_id":2}`, string(got.Payload))
	_, err = s2.TransitionJob(j.ID, Complete, Failed, nil)
	require.ErrorIs(t, err, ErrConflict)
	_, err = s.CreateJob(Job{Kind: JobQuery, Status: Processing})
	require.Error(t, err)
}

func TestQueryWriter(t *testing.T) {
	names := []string{"x", "a", "s"}
	types := []DataType{blockmodel.Float64, blockmodel.Int32, blockmodel.Utf8}
	cols := []Column{
		{Type: blockmodel.Float64, Floats: []float64{1, 2, 3}},
		{Type: blockmodel.Int32, Ints: []int64{5, 0, 7}, Null: []bool{false, true, false}},
		{Type: blockmodel.Utf8, Strings: []string{"p", "", "a,b"}, Null: []bool{true, true, false}},
	}
	var buf bytes.Buffer
	q, err := NewQueryWriter(&buf, names, types, QueryOptions{Format: "csv"})
	require.NoError(t, err)
	require.NoError(t, q.Write(cols))
	require.NoError(t, q.Close())
	require.Equal(t, "x,a,s\n1,5,\n2,,\n3,7,\"a,b\"\n", buf.String(), "every row, nulls as empty fields")

	buf.Reset()
	q, err = NewQueryWriter(&buf, names, types, QueryOptions{})
	require.NoError(t, err)
	require.NoError(t, q.Write(cols))
	require.NoError(t, q.Close())
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.Equal(t, int64(3), f.NumRows())
	require.Equal(t, "x", f.Schema().Fields()[0].Name())
	rows := make([]parquet.Row, 3)
	r := parquet.NewReader(bytes.NewReader(buf.Bytes()))
	k, _ := r.ReadRows(rows)
	require.Equal(t, 3, k)
	require.True(t, rows[1][1].IsNull())
	require.Equal(t, "a,b", string(rows[2][2].ByteArray()))
}

// TestCrashSafety kills a child process (os.Exit, no deferred clean-up) at
// each point of a commit; the reopened store shows the previous version or
// the new one whole, and no leftover.
func TestCrashSafety(t *testing.T) {
	if dir := os.Getenv("BMSTORE_CRASH_DIR"); dir != "" {
		s, err := Open(dir)
		if err != nil {
			os.Exit(3)
		}
		point := os.Getenv("BMSTORE_CRASH_POINT")
		s.testHook = func(p string) {
			if p == point {
				os.Exit(7)
			}
		}
		tx, err := s.Begin("m")
		if err != nil {
			os.Exit(3)
		}
		w, _ := tx.AddColumn(ColumnMeta{Title: "new", DataType: blockmodel.Float64})
		w.Write(Column{Type: blockmodel.Float64, Floats: make([]float64, 500)})
		w.Close()
		tx.Commit(Meta{})
		os.Exit(0)
	}
	for _, point := range []string{"columns", "manifest", "latest", "done"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			require.NoError(t, err)
			newModel(t, s, "m", 500)
			cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashSafety$")
			cmd.Env = append(os.Environ(), "BMSTORE_CRASH_DIR="+dir, "BMSTORE_CRASH_POINT="+point)
			err = cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, 7, ee.ExitCode())
			s, err = Open(dir)
			require.NoError(t, err)
			l, err := s.Latest("m")
			require.NoError(t, err)
			wantV := 1
			if point == "done" {
				wantV = 2
			}
			require.Equal(t, wantV, l)
			v, err := s.Version("m", l)
			require.NoError(t, err)
			require.Len(t, v.UserColumns(), wantV-1)
			cents, _ := os.ReadDir(filepath.Join(dir, "models", "m", "c"))
			require.Len(t, cents, wantV-1, "no orphan column file")
			tents, _ := os.ReadDir(filepath.Join(dir, "models", "m", "tmp"))
			require.Empty(t, tents)
			vents, _ := os.ReadDir(filepath.Join(dir, "models", "m", "v"))
			require.Len(t, vents, wantV)
			// The store works on: a commit after recovery.
			tx, err := s.Begin("m")
			require.NoError(t, err)
			w, err := tx.AddColumn(ColumnMeta{Title: "after", DataType: blockmodel.Int8})
			require.NoError(t, err)
			require.NoError(t, w.Write(Column{Type: blockmodel.Int8, Ints: make([]int64, 500)}))
			require.NoError(t, w.Close())
			nv, err := tx.Commit(Meta{})
			require.NoError(t, err)
			require.Equal(t, wantV+1, nv.VersionID)
		})
	}
}

func TestGeometryChangeRewritesEveryColumn(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", 5)
	tx, err := s.Begin("m")
	require.NoError(t, err)
	w, err := tx.AddColumn(ColumnMeta{Title: "a", DataType: blockmodel.Int16})
	require.NoError(t, err)
	require.NoError(t, w.Write(Column{Type: blockmodel.Int16, Ints: []int64{1, 2, 3, 4, 5}}))
	require.NoError(t, w.Close())
	v2, err := tx.Commit(Meta{})
	require.NoError(t, err)

	tx, err = s.Begin("m")
	require.NoError(t, err)
	require.NoError(t, tx.SetRows(3))
	_, err = tx.Commit(Meta{})
	require.Error(t, err, "column a not rewritten for the new row count")

	tx, err = s.Begin("m")
	require.NoError(t, err)
	require.NoError(t, tx.SetRows(3))
	w, err = tx.UpdateColumn(v2.Columns[0].ColID, false)
	require.NoError(t, err)
	require.NoError(t, w.Write(Column{Type: blockmodel.Int16, Ints: []int64{7, 8, 9}, Given: []bool{true, false, true}}))
	require.NoError(t, w.Close())
	v3, err := tx.Commit(Meta{})
	require.NoError(t, err)
	require.Equal(t, int64(3), v3.Rows)
	got := readAll(t, s, "m", 3, "a", 2)
	require.Equal(t, []bool{false, true, false}, got.Null, "no old row to merge from after a geometry change")
	require.Equal(t, int64(7), got.Ints[0])
	old := readAll(t, s, "m", 2, "a", 2)
	require.Equal(t, []int64{1, 2, 3, 4, 5}, old.Ints)
}

func TestNaNIsNull(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", 3)
	tx, err := s.Begin("m")
	require.NoError(t, err)
	for _, typ := range []DataType{blockmodel.Float64, blockmodel.Float32} {
		w, err := tx.AddColumn(ColumnMeta{Title: string(typ), DataType: typ})
		require.NoError(t, err)
		require.NoError(t, w.Write(Column{Type: typ, Floats: []float64{1, math.NaN(), 3}}))
		require.NoError(t, w.Close())
	}
	_, err = tx.Commit(Meta{})
	require.NoError(t, err)
	for _, typ := range []string{"Float64", "Float32"} {
		got := readAll(t, s, "m", 2, typ, 2)
		require.Equal(t, []bool{false, true, false}, got.Null, typ)
		require.Equal(t, 3.0, got.Floats[2])
	}
}
