package bmstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// boundaryColumn is a column of n rows of type t with nulls where the
// typed reader and writer change state: random nulls, a long run without
// nulls (pages without definition levels to honour), a long run of nulls
// (pages without values), and nulls on either side of the value chunk, the
// scan batch and the row group boundaries and on the last row.
func boundaryColumn(rng *rand.Rand, t DataType, n int) Column {
	c := randColumn(rng, t, n)
	full := randColumn(rng, t, n)
	for r := 10_000; r < 90_000; r++ { // no nulls
		if full.IsNull(r) {
			continue
		}
		c.Null[r] = false
		switch k, _ := kindOf(t); k {
		case kBool:
			c.Bools[r] = full.Bools[r]
		case kInt:
			c.Ints[r] = full.Ints[r]
		case kUint:
			c.Uints[r] = full.Uints[r]
		case kFloat:
			c.Floats[r] = full.Floats[r]
		default:
			c.Strings[r] = full.Strings[r]
		}
	}
	setNull := func(r int) {
		c.Null[r] = true
		if c.Floats != nil {
			c.Floats[r] = 0 // the flag alone makes the null
		}
	}
	for r := 120_000; r < 200_000; r++ { // only nulls
		setNull(r)
	}
	for _, r := range []int{valueChunk - 1, valueChunk, 2*valueChunk - 1, batchRows - 1, batchRows, storeRowGroup - 1, storeRowGroup, n - 1} {
		setNull(r)
	}
	return c
}

// TestEveryTypeRoundTripAtBoundaries writes a column of every data type,
// with nulls at batch, page and row group boundaries, through AddColumn and
// UpdateColumn (merge: the old file is read while the new one is written)
// and reads it back with Scan from several first rows and batch sizes,
// comparing every row with the brute-force column.
func TestEveryTypeRoundTripAtBoundaries(t *testing.T) {
	n := storeRowGroup + 40_000
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", int64(n))
	rng := rand.New(rand.NewPCG(7, 11))
	for _, typ := range allTypes {
		want := boundaryColumn(rng, typ, n)
		tx, err := s.Begin("m")
		require.NoError(t, err)
		w, err := tx.AddColumn(ColumnMeta{Title: string(typ), DataType: typ})
		require.NoError(t, err)
		writeAll(t, w, &want, 7777)
		v, err := tx.Commit(Meta{})
		require.NoError(t, err)
		col, ok := v.Column(string(typ))
		require.True(t, ok)

		requireCodec(t, s.colPath("m", col.File), codecOf(typ), string(typ))
		got := readAll(t, s, "m", v.VersionID, col.ColID, 0)
		requireSameFast(t, &want, &got, string(typ))
		got = readAll(t, s, "m", v.VersionID, col.ColID, 4099)
		requireSameFast(t, &want, &got, string(typ)+" batch 4099")
		for _, span := range [][2]int{{storeRowGroup - 1, n}, {150_000, 200_001}, {valueChunk + 3, batchRows + 5}, {n, n}} {
			part := scanRange(t, s, v.VersionID, col.ColID, typ, span[0], span[1])
			sub := slice(&want, span[0], span[1])
			requireSameFast(t, &sub, &part, string(typ)+" range")
		}

		// Merge: every third row given (new values, nulls included).
		upd := boundaryColumn(rng, typ, n)
		upd.Given = make([]bool, n)
		merged := newColumn(typ, n)
		for r := range n {
			upd.Given[r] = r%3 == 0
			if upd.Given[r] {
				merged.appendFrom(&upd, r)
			} else {
				merged.appendFrom(&want, r)
			}
		}
		tx, err = s.Begin("m")
		require.NoError(t, err)
		w, err = tx.UpdateColumn(col.ColID, false)
		require.NoError(t, err)
		writeAll(t, w, &upd, 65_536)
		v, err = tx.Commit(Meta{})
		require.NoError(t, err)
		got = readAll(t, s, "m", v.VersionID, col.ColID, 0)
		requireSameFast(t, &merged, &got, string(typ)+" merged")
	}
}

// requireCodec checks that every column chunk of a Parquet file of one
// column is compressed with codec.
func requireCodec(t *testing.T, path string, codec format.CompressionCodec, msg string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	requireCodecOf(t, data, []format.CompressionCodec{codec}, msg)
}

// requireCodecOf checks that the column chunks of column c of a Parquet
// file are compressed with codecs[c].
func requireCodecOf(t *testing.T, data []byte, codecs []format.CompressionCodec, msg string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err, msg)
	require.NotEmpty(t, f.Metadata().RowGroups, msg)
	for _, rg := range f.Metadata().RowGroups {
		for c, cc := range rg.Columns {
			require.Equal(t, codecs[c], cc.MetaData.Codec, msg)
		}
	}
}

// scanRange reads rows [from, to) of a column with Scan.
func scanRange(t *testing.T, s *Store, v int, col string, typ DataType, from, to int) Column {
	t.Helper()
	sc, err := s.Scan("m", v, []string{col}, int64(from), int64(to), 33_333)
	require.NoError(t, err)
	defer sc.Close()
	return drain(t, sc, typ, to-from)
}

// TestQueryParquetEveryType writes one column of every data type through
// the Parquet query writer and reads the file back with parquet-go's
// generic row reader: the physical and logical types are those of the
// store's schema, nulls are definition levels, every value is the one
// written, row groups hold QueryRowGroup rows and data pages are v1 (as
// the client's query documentation says).
func TestQueryParquetEveryType(t *testing.T) {
	n := QueryRowGroup + 1234
	rng := rand.New(rand.NewPCG(3, 5))
	var names []string
	var want []Column
	for _, typ := range allTypes {
		names = append(names, "c_"+string(typ))
		want = append(want, randColumn(rng, typ, n))
	}
	var buf bytes.Buffer
	q, err := NewQueryWriter(&buf, names, allTypes, QueryOptions{})
	require.NoError(t, err)
	for lo := 0; lo < n; lo += 30_001 {
		hi := min(n, lo+30_001)
		batch := make([]Column, len(want))
		for i := range want {
			batch[i] = slice(&want[i], lo, hi)
		}
		require.NoError(t, q.Write(batch))
	}
	require.NoError(t, q.Close())
	require.Equal(t, int64(n), q.Rows())

	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.Equal(t, int64(n), f.NumRows())
	require.Len(t, f.RowGroups(), 2)
	require.Equal(t, int64(QueryRowGroup), f.RowGroups()[0].NumRows())
	var codecs []format.CompressionCodec
	for _, typ := range allTypes {
		codecs = append(codecs, codecOf(typ))
	}
	requireCodecOf(t, buf.Bytes(), codecs, "query output")
	for _, rg := range f.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			require.NotEmpty(t, cc.MetaData.EncodingStats)
			for _, st := range cc.MetaData.EncodingStats {
				require.Equal(t, format.DataPage, st.PageType, "query output has data pages v1")
			}
		}
	}
	fields := f.Schema().Fields()
	require.Len(t, fields, len(allTypes))
	physical := map[DataType]parquet.Kind{
		blockmodel.Boolean: parquet.Boolean, blockmodel.Int8: parquet.Int32, blockmodel.Int16: parquet.Int32,
		blockmodel.Int32: parquet.Int32, blockmodel.Int64: parquet.Int64, blockmodel.UInt8: parquet.Int32,
		blockmodel.UInt16: parquet.Int32, blockmodel.UInt32: parquet.Int32, blockmodel.UInt64: parquet.Int64,
		blockmodel.Float16: parquet.Float, blockmodel.Float32: parquet.Float, blockmodel.Float64: parquet.Double,
		blockmodel.Utf8: parquet.ByteArray, blockmodel.Date32: parquet.Int32, blockmodel.Timestamp: parquet.Int64,
	}
	logical := map[DataType]string{
		blockmodel.Int8: "INT(8,true)", blockmodel.Int16: "INT(16,true)", blockmodel.Int32: "INT(32,true)",
		blockmodel.Int64: "INT(64,true)", blockmodel.UInt8: "INT(8,false)", blockmodel.UInt16: "INT(16,false)",
		blockmodel.UInt32: "INT(32,false)", blockmodel.UInt64: "INT(64,false)", blockmodel.Utf8: "STRING",
		blockmodel.Date32: "DATE", blockmodel.Timestamp: "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)",
	}
	for i, typ := range allTypes {
		fl := fields[i]
		require.Equal(t, names[i], fl.Name())
		require.True(t, fl.Optional(), "%s optional", typ)
		require.Equal(t, physical[typ], fl.Type().Kind(), "%s physical type", typ)
		lt := ""
		if l := fl.Type().LogicalType(); l != nil {
			lt = l.String()
		}
		require.Equal(t, logical[typ], lt, "%s logical type", typ)
	}

	r := parquet.NewReader(bytes.NewReader(buf.Bytes()))
	defer r.Close()
	rows := make([]parquet.Row, 1000)
	at := 0
	for {
		k, err := r.ReadRows(rows)
		for _, row := range rows[:k] {
			require.Len(t, row, len(allTypes))
			for i, v := range row {
				if msg := valueMismatch(&want[i], at, i, v); msg != "" {
					t.Fatalf("%s row %d: %s", allTypes[i], at, msg)
				}
			}
			at++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	require.Equal(t, n, at)
}

// TestColumnFileWriteErrorIsReported checks that a failure of the file
// under a column (written by the encoding goroutines) surfaces as an error
// of Close, not as a committed column.
func TestColumnFileWriteErrorIsReported(t *testing.T) {
	n := 2*storeRowGroup + 5
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	newModel(t, s, "m", int64(n))
	tx, err := s.Begin("m")
	require.NoError(t, err)
	w, err := tx.AddColumn(ColumnMeta{Title: "x", DataType: blockmodel.Float64})
	require.NoError(t, err)
	require.NoError(t, w.f.Close()) // every write to the file now fails
	c := randColumn(rand.New(rand.NewPCG(1, 1)), blockmodel.Float64, n)
	for lo := 0; lo < n; lo += 50_000 {
		if err = w.Write(slice(&c, lo, min(n, lo+50_000))); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Close()
	}
	require.ErrorIs(t, err, os.ErrClosed)
}

// requireSameFast is requireSame without a testify call per row (which
// makes columns of 300,000 rows slow to compare).
func requireSameFast(t *testing.T, want, got *Column, what string) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len(), what)
	for r := 0; r < want.Len(); r++ {
		wn, gn := want.IsNull(r), got.IsNull(r)
		same := wn == gn
		if same && !wn {
			switch k, _ := kindOf(want.Type); k {
			case kBool:
				same = want.Bools[r] == got.Bools[r]
			case kInt:
				same = want.Ints[r] == got.Ints[r]
			case kUint:
				same = want.Uints[r] == got.Uints[r]
			case kFloat:
				same = want.Floats[r] == got.Floats[r]
			default:
				same = want.Strings[r] == got.Strings[r]
			}
		}
		if !same {
			t.Fatalf("%s row %d: want %s, got %s", what, r, cell(want, r), cell(got, r))
		}
	}
}

// cell formats row r of c for a failure message.
func cell(c *Column, r int) string {
	if c.IsNull(r) {
		return "null"
	}
	return string(appendCSV(nil, c, r, ','))
}

// valueMismatch compares row r of c with the Parquet value v of column i;
// it describes a difference, or returns "".
func valueMismatch(c *Column, r, i int, v parquet.Value) string {
	if v.Column() != i {
		return fmt.Sprintf("column index %d", v.Column())
	}
	if c.IsNull(r) || v.IsNull() {
		if c.IsNull(r) != v.IsNull() {
			return fmt.Sprintf("want null %v, got %v", c.IsNull(r), v)
		}
		return ""
	}
	var same bool
	switch c.Type {
	case blockmodel.Boolean:
		same = c.Bools[r] == v.Boolean()
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		same = c.Ints[r] == int64(v.Int32())
	case blockmodel.Int64, blockmodel.Timestamp:
		same = c.Ints[r] == v.Int64()
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		same = c.Uints[r] == uint64(v.Uint32())
	case blockmodel.UInt64:
		same = c.Uints[r] == v.Uint64()
	case blockmodel.Float16, blockmodel.Float32:
		same = c.Floats[r] == float64(v.Float())
	case blockmodel.Float64:
		same = c.Floats[r] == v.Double()
	case blockmodel.Utf8:
		same = c.Strings[r] == string(v.ByteArray())
	}
	if !same {
		return fmt.Sprintf("want %s, got %v", cell(c, r), v)
	}
	return ""
}

// TestColReaderReadsOtherLayouts reads column files of layouts the store
// does not write itself (dictionary-encoded pages, data pages v1, small
// pages and row groups, a REQUIRED column, zstd pages as the store wrote
// before Snappy) through the value-by-value path
// and the typed one, with a skip, and compares every row.
func TestColReaderReadsOtherLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 5000
	for _, typ := range []DataType{blockmodel.Float64, blockmodel.Utf8, blockmodel.Int32, blockmodel.Boolean} {
		for _, layout := range []string{"dictionary", "v1", "required", "zstd"} {
			want := randColumn(rng, typ, n)
			if layout == "required" {
				for r := range want.Null {
					if want.Null[r] {
						c := randColumn(rng, typ, 1)
						for c.IsNull(0) {
							c = randColumn(rng, typ, 1)
						}
						want.Null[r] = false
						switch k, _ := kindOf(typ); k {
						case kBool:
							want.Bools[r] = c.Bools[0]
						case kInt:
							want.Ints[r] = c.Ints[0]
						case kFloat:
							want.Floats[r] = c.Floats[0]
						default:
							want.Strings[r] = c.Strings[0]
						}
					}
				}
			}
			node, err := leaf(typ)
			require.NoError(t, err)
			opts := []parquet.WriterOption{parquet.PageBufferSize(1024), parquet.MaxRowsPerRowGroup(1500)}
			switch layout {
			case "dictionary":
				if typ != blockmodel.Boolean {
					node = parquet.Optional(parquet.Encoded(parquet.Required(node), &parquet.RLEDictionary))
				}
			case "v1":
				opts = append(opts, parquet.DataPageVersion(1))
			case "required":
				node = parquet.Required(node)
			case "zstd": // as the store wrote its pages before Snappy (parquet-go decodes any codec a chunk records)
				node = parquet.Compressed(node, &zstd.Codec{Level: zstd.SpeedFastest})
			}
			schema := parquet.NewSchema("t", parquet.Group{"v": node})
			path := t.TempDir() + "/c.parquet"
			f, err := os.Create(path)
			require.NoError(t, err)
			pw := parquet.NewWriter(f, append(opts, schema)...)
			for r := 0; r < n; r++ {
				v := parquet.Value{}
				if !want.IsNull(r) {
					one := slice(&want, r, r+1)
					v = appendValues(nil, &one, 0, 1, 0)[0]
					if layout == "required" {
						v = v.Level(0, 0, 0)
					}
				}
				_, err := pw.WriteRows([]parquet.Row{{v}})
				require.NoError(t, err)
			}
			require.NoError(t, pw.Close())
			require.NoError(t, f.Close())
			if layout == "zstd" {
				requireCodec(t, path, format.Zstd, "zstd layout")
			}

			for _, from := range []int{0, 1777} {
				cr, err := openColReader(path, typ)
				require.NoError(t, err)
				require.NoError(t, cr.skip(int64(from)))
				got := newColumn(typ, n)
				for got.Len() < n-from {
					k, err := cr.read(&got, 999)
					require.NoError(t, err)
					require.Positive(t, k)
				}
				k, err := cr.read(&got, 1)
				require.NoError(t, err)
				require.Zero(t, k, "end of file")
				require.NoError(t, cr.close())
				sub := slice(&want, from, n)
				requireSameFast(t, &sub, &got, fmt.Sprintf("%s %s from %d", typ, layout, from))
			}
		}
	}
}

// TestQueryWriterWideTable writes a query too wide for row groups in
// flight (38 Float64 columns of QueryRowGroup rows exceed slotBudget
// twice): it is written directly from the batches, and every value reads
// back.
func TestQueryWriterWideTable(t *testing.T) {
	const width = 38
	n := QueryRowGroup + 777
	rng := rand.New(rand.NewPCG(4, 4))
	names := make([]string, width)
	types := make([]DataType, width)
	want := make([]Column, width)
	for i := range width {
		names[i], types[i] = fmt.Sprintf("c%d", i), blockmodel.Float64
		want[i] = randColumn(rng, blockmodel.Float64, n)
	}
	var buf bytes.Buffer
	q, err := NewQueryWriter(&buf, names, types, QueryOptions{})
	require.NoError(t, err)
	require.True(t, q.tw.direct, "a table this wide is encoded by the caller")
	for lo := 0; lo < n; lo += 40_000 {
		batch := make([]Column, width)
		for i := range want {
			batch[i] = slice(&want[i], lo, min(n, lo+40_000))
		}
		require.NoError(t, q.Write(batch))
	}
	require.NoError(t, q.Close())

	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	require.Equal(t, int64(n), f.NumRows())
	require.Len(t, f.RowGroups(), 2)
	for c := range width {
		got := newColumn(blockmodel.Float64, n)
		for _, rg := range f.RowGroups() {
			pages := rg.ColumnChunks()[c].Pages()
			for {
				p, err := pages.ReadPage()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				vals, v := p.Data(), 0
				for _, l := range p.DefinitionLevels() {
					if l == 0 {
						got.appendNull()
						continue
					}
					got.Floats = append(got.Floats, vals.Double()[v])
					got.Null = append(got.Null, false)
					v++
				}
			}
			require.NoError(t, pages.Close())
		}
		requireSameFast(t, &want[c], &got, names[c])
	}
}

// TestPhysicalKinds: physical gives each data type the encoding.Kind of
// its Parquet physical type, the kind parquet-go's pages report.
func TestPhysicalKinds(t *testing.T) {
	want := map[format.Type]encoding.Kind{format.Boolean: encoding.Boolean, format.Int32: encoding.Int32,
		format.Int64: encoding.Int64, format.Float: encoding.Float, format.Double: encoding.Double,
		format.ByteArray: encoding.ByteArray}
	for _, typ := range allTypes {
		require.Equal(t, want[formatType(typ)], physical(typ), typ)
	}
	require.Equal(t, encoding.Double, physical(blockmodel.Float64))
	require.Equal(t, encoding.Int32, physical(blockmodel.Date32))
}
