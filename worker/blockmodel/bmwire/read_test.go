package bmwire

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regular is a test Locator of a regular model at origin 0 with blocks
// of 10 × 10 × 10, no rotation.
type regular struct{ n [3]uint32 }

func (g regular) NumRows() int64 { return int64(g.n[0]) * int64(g.n[1]) * int64(g.n[2]) }

func (g regular) Locate(i, j, k uint32, sub blockmodel.SubID) (int64, bool) {
	if i >= g.n[0] || j >= g.n[1] || k >= g.n[2] || sub != (blockmodel.SubID{}) {
		return 0, false
	}
	return int64(i) + int64(g.n[0])*(int64(j)+int64(g.n[1])*int64(k)), true
}

func (g regular) LocateXYZ(x, y, z, _, _, _ float64) (int64, [3]uint32, bool) {
	var ijk [3]uint32
	for a, w := range [3]float64{x, y, z} {
		f := w/10 - 0.5
		r := math.Round(f)
		if math.Abs(f-r) > 1e-3 || r < 0 || r >= float64(g.n[a]) {
			return 0, ijk, false
		}
		ijk[a] = uint32(r)
	}
	row, ok := g.Locate(ijk[0], ijk[1], ijk[2], blockmodel.SubID{})
	return row, ijk, ok
}

var grid = regular{n: [3]uint32{4, 3, 2}}

// writeParquet writes rows with parquet-go's generic writer (options
// opts).
func writeParquet[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) *bytes.Reader {
	return bytes.NewReader(parquetBytes(t, rows, opts...))
}

// parquetBytes is writeParquet's file as bytes.
func parquetBytes[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readAll(t *testing.T, r *bytes.Reader, spec FileSpec) (*Collector, Summary, error) {
	t.Helper()
	c := NewCollector(spec.Columns)
	s, err := Read(r, r.Size(), spec, grid, c)
	return c, s, err
}

func fileErr(t *testing.T, err error) *FileError {
	t.Helper()
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	return fe
}

func messages(fe *FileError) []string {
	var out []string
	for _, e := range fe.Errors {
		out = append(out, e.String())
	}
	return out
}

var cuSpec = FileSpec{Kind: blockmodel.Regular, Input: DefaultInput(), Columns: []ValueColumn{{"cu", blockmodel.Float64}}}

// Every block once, in any order, with index columns of several integer
// widths (OPEN-16).
func TestParquetIntegerWidths(t *testing.T) {
	type u32 struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	type i64 struct {
		I  int64   `parquet:"i"`
		J  int64   `parquet:"j"`
		K  int64   `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	type u8 struct {
		I  uint8   `parquet:"i"`
		J  int16   `parquet:"j"`
		K  uint64  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	var a []u32
	var b []i64
	var c []u8
	for r := int64(grid.NumRows()) - 1; r >= 0; r-- {
		i, j, k := r%4, r/4%3, r/12
		a = append(a, u32{uint32(i), uint32(j), uint32(k), float64(r)})
		b = append(b, i64{i, j, k, float64(r)})
		c = append(c, u8{uint8(i), int16(j), uint64(k), float64(r)})
	}
	for name, f := range map[string]*bytes.Reader{"uint32": writeParquet(t, a), "int64": writeParquet(t, b), "mixed": writeParquet(t, c)} {
		t.Run(name, func(t *testing.T) {
			spec := cuSpec
			spec.BatchRows = 5
			col, sum, err := readAll(t, f, spec)
			require.NoError(t, err)
			assert.Equal(t, int64(24), sum.Rows)
			assert.True(t, sum.IndexForm)
			box := blockmodel.NewIJKBox([3]int64{}, [3]int64{3, 2, 1})
			assert.Equal(t, &box, sum.BBox)
			require.Len(t, col.Rows, 24)
			for r, row := range col.Rows {
				assert.Equal(t, float64(row), col.Values[0].Float[r])
			}
			assert.Nil(t, col.Values[0].Valid)
		})
	}
}

// The parquet struct tags of the lower-case names.
type ijkCu struct {
	I  uint32   `parquet:"i"`
	J  uint32   `parquet:"j"`
	K  uint32   `parquet:"k"`
	Cu *float64 `parquet:"cu,optional"`
}

func fp(f float64) *float64 { return &f }

func TestParquetRowErrors(t *testing.T) {
	f := writeParquet(t, []ijkCu{{0, 0, 0, fp(1)}, {9, 0, 0, fp(2)}, {1, 1, 1, fp(3)}, {0, 0, 0, fp(4)}, {1, 1, 1, nil}})
	col, _, err := readAll(t, f, cuSpec)
	fe := fileErr(t, err)
	assert.Equal(t, []string{"row 2 (i 9, j 0, k 0): matches no block of the model",
		"row 4 (i 0, j 0, k 0): matches a block another row of the file matched (duplicate)",
		"row 5 (i 1, j 1, k 1): matches a block another row of the file matched (duplicate)"}, messages(fe))
	assert.Equal(t, int64(3), fe.Total)
	assert.Empty(t, col.Rows, "a bad file reaches the sink with nothing")
	var csv bytes.Buffer
	require.NoError(t, fe.WriteCSV(&csv))
	assert.Equal(t, "row,i,j,k,message\n2,9,0,0,matches no block of the model\n"+
		"4,0,0,0,matches a block another row of the file matched (duplicate)\n"+
		"5,1,1,1,matches a block another row of the file matched (duplicate)\n", csv.String())
	p := fe.Problem()
	assert.Equal(t, TypeJobUpdateError, p.Type)
	assert.Contains(t, p.Detail, "3 error(s): row 2 (i 9, j 0, k 0): matches no block")
}

// Nulls and NaN are nulls (OPEN-19).
func TestParquetNulls(t *testing.T) {
	f := writeParquet(t, []ijkCu{{0, 0, 0, fp(1)}, {1, 0, 0, nil}, {2, 0, 0, fp(math.NaN())}})
	col, _, err := readAll(t, f, cuSpec)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, col.Values[0].Valid)
	assert.Equal(t, 1.0, col.Values[0].Float[0])
	type dbl struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu float64 `parquet:"cu"`
	}
	col, _, err = readAll(t, writeParquet(t, []dbl{{0, 0, 0, 1}, {1, 0, 0, math.NaN()}}), cuSpec)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, col.Values[0].Valid)
}

func TestParquetTypeErrors(t *testing.T) {
	type floatIndex struct {
		I  float64 `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		Cu string  `parquet:"cu"`
	}
	_, _, err := readAll(t, writeParquet(t, []floatIndex{{0, 0, 0, "a"}}), cuSpec)
	assert.Equal(t, []string{`column "i" has type DOUBLE, which does not convert to UInt32`,
		`column "cu" has type STRING, which does not convert to Float64`}, messages(fileErr(t, err)))

	type values struct {
		I   int32   `parquet:"i"`
		J   uint32  `parquet:"j"`
		K   uint32  `parquet:"k"`
		A   int64   `parquet:"a"`
		F   float64 `parquet:"f"`
		U   int32   `parquet:"u"`
		Dom string  `parquet:"dom"`
	}
	spec := FileSpec{Kind: blockmodel.Regular, Input: DefaultInput(), Columns: []ValueColumn{{"a", blockmodel.Int8}, {"f", blockmodel.Float32}, {"u", blockmodel.UInt64}, {"dom", blockmodel.Utf8}}}
	rows := []values{{0, 0, 0, 127, 0.5, 1, "x"}, {1, 0, 0, 300, 0.1, -1, "y"}, {-1, 0, 0, 0, 0, 0, ""}}
	_, _, err = readAll(t, writeParquet(t, rows), spec)
	assert.Equal(t, []string{`row 3: column "i": -1 is out of range for UInt32`, `row 2: column "a": 300 is out of range for Int8`,
		`row 2: column "f": 0.1 is not exact as Float32`, `row 2: column "u": -1 is out of range for UInt64`}, messages(fileErr(t, err)))
	col, _, err := readAll(t, writeParquet(t, rows[:1]), spec)
	require.NoError(t, err)
	assert.Equal(t, []int64{127}, col.Values[0].Int)
	assert.Equal(t, []float64{0.5}, col.Values[1].Float)
	assert.Equal(t, []uint64{1}, col.Values[2].Uint)
	assert.Equal(t, []string{"x"}, col.Values[3].Str)

	_, _, err = readAll(t, writeParquet(t, []struct {
		X  float64 `parquet:"x"`
		Cu float64 `parquet:"CU"`
	}{{1, 1}}), cuSpec)
	assert.Equal(t, []string{"missing identity columns: the file needs i, j, k or x, y, z", `missing column "cu"`}, messages(fileErr(t, err)))
	_, _, err = readAll(t, bytes.NewReader([]byte("not parquet at all")), cuSpec)
	assert.Contains(t, messages(fileErr(t, err))[0], "not a readable Parquet file")
}

// Coordinates identify rows when the index form is incomplete; the index
// form wins when both are complete.
func TestParquetCoordinates(t *testing.T) {
	type xyz struct {
		X  float64 `parquet:"x"`
		Y  float64 `parquet:"y"`
		Z  int32   `parquet:"z"`
		I  uint32  `parquet:"i"`
		Cu float64 `parquet:"cu"`
	}
	col, sum, err := readAll(t, writeParquet(t, []xyz{{15, 25, 15, 0, 1}, {5, 5, 5, 0, 2}}), cuSpec)
	require.NoError(t, err)
	assert.False(t, sum.IndexForm)
	assert.Equal(t, []int64{1 + 4*(2+3*1), 0}, col.Rows)
	_, _, err = readAll(t, writeParquet(t, []xyz{{17, 25, 15, 0, 1}}), cuSpec)
	assert.Equal(t, []string{"row 1: matches no block of the model"}, messages(fileErr(t, err)))

	type both struct {
		I  uint32  `parquet:"i"`
		J  uint32  `parquet:"j"`
		K  uint32  `parquet:"k"`
		X  float64 `parquet:"x"`
		Y  float64 `parquet:"y"`
		Z  float64 `parquet:"z"`
		Cu float64 `parquet:"cu"`
	}
	col, sum, err = readAll(t, writeParquet(t, []both{{I: 3, J: 2, K: 1, X: 5, Y: 5, Z: 5, Cu: 1}}), cuSpec)
	require.NoError(t, err)
	assert.True(t, sum.IndexForm)
	assert.Equal(t, []int64{23}, col.Rows)
}

// A mapped file column (column_name_mapping) supplies a title.
func TestParquetMapping(t *testing.T) {
	type mapped struct {
		I     uint32  `parquet:"I"`
		J     uint32  `parquet:"J"`
		K     uint32  `parquet:"K"`
		Grade float64 `parquet:"CU_GRADE"`
	}
	spec := cuSpec
	spec.Input.Mapping = []Mapping{{FileColumn: "CU_GRADE", Title: "cu"}, {FileColumn: "I", Title: "i"}, {FileColumn: "J", Title: "j"}, {FileColumn: "K", Title: "k"}}
	col, _, err := readAll(t, writeParquet(t, []mapped{{1, 0, 0, 7}}), spec)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, col.Rows)
	assert.Equal(t, []float64{7}, col.Values[0].Float)
}

func csvSpec(t *testing.T, body string) FileSpec {
	t.Helper()
	u, err := DecodeUpdate([]byte(body), model)
	require.NoError(t, err)
	return FileSpec{Kind: blockmodel.Regular, Input: u.Input, Columns: u.ValueColumns(model)}
}

func readCSV(t *testing.T, text string, spec FileSpec) (*Collector, error) {
	t.Helper()
	c := NewCollector(spec.Columns)
	_, err := ReadCSV(strings.NewReader(text), spec, grid, c)
	return c, err
}

// The CSV dialect, both mapping shapes, empty = null, per-type parsing.
func TestCSVDialect(t *testing.T) {
	spec := csvSpec(t, `{"columns": {"new": [{"title": "grade", "data_type": "Float32"}, {"title": "ok", "data_type": "Boolean"},
	 {"title": "n", "data_type": "Int16"}, {"title": "when", "data_type": "Date32"}, {"title": "at", "data_type": "Timestamp"},
	 {"title": "name", "data_type": "Utf8"}], "update": ["domain"]},
	 "input_options": {"file_format": "csv", "delimiter": ";", "decimal_char": ",", "quote_char": "'", "skip_rows": 2, "skip_rows_after_headers": 1.0,
	  "column_name_mapping": [{"csv_name": "GRADE", "new_title": "grade"}, {"file_column_name": "DOM", "column_title": "domain"}]}}`)
	text := "exported by a tool\nsecond preamble line\n" +
		"i;j;k;GRADE;ok;n;when;at;name;DOM;ignored\n" +
		"units;;;;;;;;;;\n" +
		"0;0;0;1,5;True;-3;2024-02-29;2024-02-29T12:00:00Z;'a;b';LMS1;x\r\n" +
		"1;0;0;;;;;;'';;x\n" +
		"\n" +
		"2;0;0;0,1;false;7;1970-01-02;1970-01-01 00:00:01.5;'say ''hi''';LMS2;x"
	col, err := readCSV(t, text, spec)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2}, col.Rows)
	v := col.Values
	assert.Equal(t, []float64{1.5, 0, float64(float32(0.1))}, v[0].Float)
	assert.Equal(t, []bool{true, false, true}, v[0].Valid)
	assert.Equal(t, []bool{true, false, false}, v[1].Bool)
	assert.Equal(t, []int64{-3, 0, 7}, v[2].Int)
	assert.Equal(t, []int64{19782, 0, 1}, v[3].Int)
	assert.Equal(t, []int64{1709208000000000, 0, 1500000}, v[4].Int)
	assert.Equal(t, []string{"a;b", "", `say 'hi'`}, v[5].Str)
	assert.Nil(t, v[5].Valid, "a quoted empty string is a value")
	assert.Equal(t, []string{"LMS1", "", "LMS2"}, v[6].Str)
	assert.Equal(t, []bool{true, false, true}, v[6].Valid)
}

func TestCSVErrors(t *testing.T) {
	spec := csvSpec(t, `{"columns": {"new": [{"title": "n", "data_type": "UInt8"}]}, "input_options": {"file_format": "csv"}}`)
	_, err := readCSV(t, "i,j,k,n\n0,0,0,1\n1.0,0,0,2\n2,0,0,256\n3,0,0,x\n0,0,0,5\n3,,0,1\n", spec)
	assert.Equal(t, []string{`row 2: column "i": "1.0" is not an integer`, `row 3: column "n": 256 is out of range for UInt8`,
		`row 4: column "n": "x" is not an integer`, "row 5 (i 0, j 0, k 0): matches a block another row of the file matched (duplicate)",
		"row 6: j is empty"}, messages(fileErr(t, err)))
	_, err = readCSV(t, "x,y\n", spec)
	assert.Equal(t, []string{"missing identity columns: the file needs i, j, k or x, y, z", `missing column "n"`}, messages(fileErr(t, err)))
	_, err = readCSV(t, "", spec)
	assert.Equal(t, []string{"the file has no header row"}, messages(fileErr(t, err)))
	_, err = readCSV(t, "i,j,k,n\n0,0,0,\"1\n", spec)
	assert.Equal(t, []string{"row 1: a quoted field is not closed at the end of the file"}, messages(fileErr(t, err)))
}

// A row longer than MaxCSVRecord makes the file unusable there: a quoted
// field left open, a header, a line skipped by skip_rows. A row of exactly
// the bound is read.
func TestCSVLongRecords(t *testing.T) {
	spec := csvSpec(t, `{"columns": {"new": [{"title": "name", "data_type": "Utf8"}]}, "input_options": {"file_format": "csv"}}`)
	head := "i,j,k,name\n"
	fits := "0,0,0," + strings.Repeat("a", MaxCSVRecord-len("0,0,0,")-1) + "\n"
	col, err := readCSV(t, head+fits, spec)
	require.NoError(t, err)
	assert.Len(t, col.Values[0].Str[0], MaxCSVRecord-len("0,0,0,")-1)
	long := "0,0,0,\"" + strings.Repeat("a", 3*MaxCSVRecord) + "\n1,0,0,b\n"
	_, err = readCSV(t, head+long, spec)
	assert.Equal(t, []string{"row 1: a row is longer than 1048576 bytes: the rest of the file is not read"}, messages(fileErr(t, err)))
	_, err = readCSV(t, strings.Repeat("i,", MaxCSVRecord)+"\n", spec)
	assert.Equal(t, []string{"the header row is longer than 1048576 bytes"}, messages(fileErr(t, err)))
	skip := csvSpec(t, `{"columns": {"new": [{"title": "name", "data_type": "Utf8"}]}, "input_options": {"file_format": "csv", "skip_rows": 1}}`)
	_, err = readCSV(t, strings.Repeat("#", MaxCSVRecord+1)+"\n"+head, skip)
	assert.Equal(t, []string{"a row skipped by skip_rows is longer than 1048576 bytes"}, messages(fileErr(t, err)))
	col, err = readCSV(t, strings.Repeat("#", MaxCSVRecord-1)+"\n"+head+"1,0,0,b\n", skip)
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, col.Values[0].Str)
}

// The detail quotes the first 20 errors; the error file keeps 10,000 and
// reading stops there.
func TestFileErrorLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("i,j,k,cu\n")
	for range MaxFileErrors + 50 {
		b.WriteString("99,0,0,1\n")
	}
	spec := csvSpec(t, `{"columns": {"update": ["cu"]}, "input_options": {"file_format": "csv"}}`)
	_, err := readCSV(t, b.String(), spec)
	fe := fileErr(t, err)
	assert.Len(t, fe.Errors, MaxFileErrors)
	assert.True(t, fe.Stopped)
	d := fe.Detail()
	assert.Equal(t, DetailErrors, strings.Count(d, "matches no block"))
	assert.Contains(t, d, "more in the error file")
	var csv bytes.Buffer
	require.NoError(t, fe.WriteCSV(&csv))
	assert.Equal(t, MaxFileErrors+1, strings.Count(csv.String(), "\n"))
}

type failingSink struct{ Collector }

func (f *failingSink) Batch(*Batch) error { return errors.New("disk full") }

// A sink's error ends the read as it is (a fault, not a file error).
func TestSinkError(t *testing.T) {
	f := writeParquet(t, []ijkCu{{0, 0, 0, fp(1)}})
	_, err := Read(f, f.Size(), cuSpec, grid, &failingSink{})
	require.EqualError(t, err, "disk full")
	var fe *FileError
	assert.False(t, errors.As(err, &fe))
}

func TestExactFloat16(t *testing.T) {
	assert.True(t, exactFloat(65504, blockmodel.Float16))
	assert.False(t, exactFloat(65505, blockmodel.Float16))
	assert.True(t, exactFloat(1.0009765625, blockmodel.Float16)) // 1 + 2^-10
	assert.False(t, exactFloat(1.00048828125, blockmodel.Float16))
	assert.True(t, exactFloat(math.Ldexp(1, -24), blockmodel.Float16))
	assert.Equal(t, 1.0009765625, roundFloat16(1.0007))
}

// recorder is a Locator of one parent whose sub-blocks are rows 0…; it
// records what it was asked.
type recorder struct{ subs []blockmodel.SubID }

func (r *recorder) NumRows() int64 { return 100 }
func (r *recorder) Locate(i, j, k uint32, sub blockmodel.SubID) (int64, bool) {
	r.subs = append(r.subs, sub)
	return int64(len(r.subs) - 1), i == 0 && j == 0 && k == 0
}
func (r *recorder) LocateXYZ(x, y, z, dx, dy, dz float64) (int64, [3]uint32, bool) {
	r.subs = append(r.subs, blockmodel.SubID{Sidx: uint32(dx + dy + dz)})
	return int64(len(r.subs) - 1), [3]uint32{}, true
}

// Sub-blocked kinds identify rows by sidx, by flexible corners or by
// centroid and size.
func TestSubBlockedIdentity(t *testing.T) {
	spec := csvSpec(t, `{"columns": {"update": ["cu"]}, "input_options": {"file_format": "csv"}}`)
	read := func(kind blockmodel.ModelType, text string) []blockmodel.SubID {
		s := spec
		s.Kind = kind
		loc := &recorder{}
		_, err := ReadCSV(strings.NewReader(text), s, loc, NewCollector(s.Columns))
		require.NoError(t, err)
		return loc.subs
	}
	assert.Equal(t, []blockmodel.SubID{{Sidx: 13}}, read(blockmodel.FullySubBlocked, "i,j,k,sidx,cu\n0,0,0,13,1\n"))
	assert.Equal(t, []blockmodel.SubID{{Sidx: 5}}, read(blockmodel.VariableOctree, "i,j,k,sidx,cu\n0,0,0,5,1\n"))
	assert.Equal(t, []blockmodel.SubID{blockmodel.CornersID([3]uint8{0, 0, 2}, [3]uint8{2, 1, 4})},
		read(blockmodel.Flexible, "i,j,k,start_si,start_sj,start_sk,end_si,end_sj,end_sk,cu\n0,0,0,0,0,2,2,1,4,1\n"))
	assert.Equal(t, []blockmodel.SubID{{Sidx: 6}}, read(blockmodel.FullySubBlocked, "x,y,z,dx,dy,dz,cu\n1,1,1,1,2,3,1\n"), "coordinate form with sizes")
	// sidx missing: the coordinate form is incomplete too.
	s := spec
	s.Kind = blockmodel.FullySubBlocked
	_, err := ReadCSV(strings.NewReader("i,j,k,x,y,z,cu\n0,0,0,1,1,1,1\n"), s, &recorder{}, NewCollector(s.Columns))
	assert.Equal(t, []string{"missing identity columns: the file needs i, j, k, sidx or x, y, z, dx, dy, dz"}, messages(fileErr(t, err)))
	// start_si beyond UInt8.
	s.Kind = blockmodel.Flexible
	_, err = ReadCSV(strings.NewReader("i,j,k,start_si,start_sj,start_sk,end_si,end_sj,end_sk,cu\n0,0,0,0,0,0,256,1,1,1\n"), s, &recorder{}, NewCollector(s.Columns))
	assert.Equal(t, []string{`row 1: column "end_si": 256 is out of range for UInt8`}, messages(fileErr(t, err)))
}

// Batches cross page and row group boundaries.
func TestParquetRowGroups(t *testing.T) {
	var rows []ijkCu
	for r := range int64(24) {
		var cu *float64
		if r%5 != 0 {
			cu = fp(float64(r))
		}
		rows = append(rows, ijkCu{uint32(r % 4), uint32(r / 4 % 3), uint32(r / 12), cu})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[ijkCu](&buf, parquet.MaxRowsPerRowGroup(5), parquet.PageBufferSize(16))
	for lo := 0; lo < len(rows); lo += 3 {
		_, err := w.Write(rows[lo:min(lo+3, len(rows))])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	f := bytes.NewReader(buf.Bytes())
	pf, err := parquet.OpenFile(f, f.Size())
	require.NoError(t, err)
	require.Greater(t, len(pf.RowGroups()), 1)
	spec := cuSpec
	spec.BatchRows = 7
	col, sum, err := readAll(t, f, spec)
	require.NoError(t, err)
	assert.Equal(t, int64(24), sum.Rows)
	for r, row := range col.Rows {
		assert.Equal(t, int64(r), row)
		assert.Equal(t, r%5 != 0, col.Values[0].IsValid(r), r)
		if r%5 != 0 {
			assert.Equal(t, float64(r), col.Values[0].Float[r])
		}
	}
}

// A read ended early (here by its sink, at the first batch of a file of
// many row groups and pages) stops the columns' read-ahead goroutines.
func TestEarlyEndStopsReadAhead(t *testing.T) {
	var rows []ijkCu
	for r := range int64(24) {
		rows = append(rows, ijkCu{uint32(r % 4), uint32(r / 4 % 3), uint32(r / 12), fp(float64(r))})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[ijkCu](&buf, parquet.MaxRowsPerRowGroup(3), parquet.PageBufferSize(16))
	for _, row := range rows {
		_, err := w.Write([]ijkCu{row})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	f := bytes.NewReader(buf.Bytes())
	spec := cuSpec
	spec.BatchRows = 2
	before := runtime.NumGoroutine()
	for range 20 {
		_, err := Read(f, f.Size(), spec, grid, &failingSink{})
		require.EqualError(t, err, "disk full")
	}
	// Read returns once every read-ahead goroutine has closed its channel;
	// what is left of each is its return, which a loaded machine (the race
	// detector's CI phase) may delay: polled every millisecond, at most 5 s.
	for i := 0; i < 5000 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "read-ahead goroutines left running")
}

// Update files with damaged bytes (every byte of a file of several row
// groups and pages but its magic numbers, one at a time, set to each of a
// few values) are refused or read, never a crash: parquet-go may panic while
// decoding a damaged page in a column's read-ahead goroutine, and that
// panic must come back as an error of the file. Before, it killed the
// process (this test binary).
func TestDamagedParquetNeverCrashes(t *testing.T) {
	var rows []ijkCu
	for r := range int64(24) {
		rows = append(rows, ijkCu{uint32(r % 4), uint32(r / 4 % 3), uint32(r / 12), fp(float64(r) * 0.37)})
	}
	good := parquetBytes(t, rows, parquet.MaxRowsPerRowGroup(7), parquet.PageBufferSize(32))
	refused := 0
	for at := int64(4); at < int64(len(good))-8; at++ {
		for _, b := range []byte{0x00, 0xff, 0x7f, good[at] ^ 0x5a} {
			bad := bytes.Clone(good)
			bad[at] = b
			r := bytes.NewReader(bad)
			c := NewCollector(cuSpec.Columns)
			if _, err := ReadParquet(r, r.Size(), cuSpec, grid, c); err != nil {
				refused++
			}
		}
	}
	assert.Positive(t, refused, "damaged files must be refused")
}
