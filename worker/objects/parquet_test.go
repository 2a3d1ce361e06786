package objects

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readBytes(t *testing.T, data []byte, spec TableSpec) (*Table, error) {
	t.Helper()
	return ReadTable(bytes.NewReader(data), int64(len(data)), spec)
}

func TestTableWriterRoundTripRowGroups(t *testing.T) {
	const n = 10_007
	cols := make([][]float64, 3)
	for c := range cols {
		cols[c] = make([]float64, n)
		for i := range cols[c] {
			cols[c][i] = float64(i)*0.5 + float64(c)*1e6
		}
	}
	cols[1][17] = math.NaN()
	for _, comp := range []Compression{Zstd, Snappy} {
		var buf bytes.Buffer
		tw, err := NewTableWriter(&buf, []DataType{TypeFloat64, TypeFloat64, TypeFloat64}, []string{"z_last", "a_first", "m"}, &WriteOptions{Compression: comp, RowGroupRows: 1000})
		require.NoError(t, err)
		// Stream in uneven blocks, crossing row-group boundaries.
		for from := 0; from < n; {
			to := min(n, from+777)
			block := [][]float64{cols[0][from:to], cols[1][from:to], cols[2][from:to]}
			require.NoError(t, tw.WriteFloat64Columns(block))
			from = to
		}
		blob, err := tw.Close()
		require.NoError(t, err)
		sum := sha256.Sum256(buf.Bytes())
		assert.Equal(t, hex.EncodeToString(sum[:]), blob.Key, "key is the SHA-256 of the bytes")
		assert.Equal(t, int64(buf.Len()), blob.Size)
		assert.Equal(t, int64(n), blob.Rows)

		f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		assert.Len(t, f.RowGroups(), 11, "row groups of 1000 rows")
		names := []string{}
		for _, c := range f.Root().Columns() {
			names = append(names, c.Name())
		}
		assert.Equal(t, []string{"z_last", "a_first", "m"}, names, "column order is kept, not sorted")

		tab, err := readBytes(t, buf.Bytes(), Float64Spec("x", 3, n))
		require.NoError(t, err)
		got, err := tab.Float64Columns("x", false)
		require.NoError(t, err)
		for c := range cols {
			for i := range cols[c] {
				if math.IsNaN(cols[c][i]) {
					assert.True(t, math.IsNaN(got[c][i]))
					continue
				}
				require.Equal(t, cols[c][i], got[c][i], "column %d row %d", c, i)
			}
		}
	}
}

func TestTableWriterDeterministicAndRowMajor(t *testing.T) {
	flat := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	b1, k1, err := EncodeXYZ(flat, nil)
	require.NoError(t, err)
	b2, k2, err := EncodeFloat64([][]float64{{1, 4, 7}, {2, 5, 8}, {3, 6, 9}}, []string{"x", "y", "z"}, nil)
	require.NoError(t, err)
	assert.Equal(t, b1, b2, "row-major and column-major writes give the same bytes")
	assert.Equal(t, k1, k2)
	tab, err := readBytes(t, b1, Float64Spec("locations.coordinates", 3, 3))
	require.NoError(t, err)
	cols, err := tab.Float64Columns("c", false)
	require.NoError(t, err)
	assert.Equal(t, flat, InterleaveXYZ(cols[0], cols[1], cols[2]))
}

func TestEncodeTableAllTypesRoundTrip(t *testing.T) {
	cols := []Column{
		{Type: TypeFloat64, Float64: []float64{1.5, -2, 3}},
		{Type: TypeBool, Bool: []bool{true, false, true}},
		{Type: TypeInt32, Int64: []int64{-1, 0, math.MaxInt32}},
		{Type: TypeInt64, Int64: []int64{math.MinInt64, 0, 7}},
		{Type: TypeUint64, Uint64: []uint64{0, 1, math.MaxUint64}},
		{Type: TypeString, String: []string{"DH-1", "", "ünïcode"}},
	}
	data, blob, err := EncodeTable(cols, nil, &WriteOptions{Compression: Snappy})
	require.NoError(t, err)
	assert.Equal(t, int64(3), blob.Rows)
	spec := TableSpec{Element: "e", Types: []DataType{TypeFloat64, TypeBool, TypeInt32, TypeInt64, TypeUint64, TypeString}, Rows: 3}
	tab, err := readBytes(t, data, spec)
	require.NoError(t, err)
	assert.Equal(t, cols, tab.Columns)

	_, _, err = EncodeTable([]Column{{Type: TypeInt32, Int64: []int64{1 << 40}}}, nil, nil)
	assert.ErrorContains(t, err, "does not fit int32")
}

func TestEmptyTable(t *testing.T) {
	data, blob, err := EncodeFloat64([][]float64{{}}, []string{"v"}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(0), blob.Rows)
	tab, err := readBytes(t, data, Float64Spec("v", 1, 0))
	require.NoError(t, err)
	assert.Equal(t, 0, tab.Columns[0].Len())
}

// writeWith writes rows with an arbitrary parquet-go schema, standing in for
// files produced by other writers (pyarrow writes OPTIONAL columns, gzip, and
// dictionary encoding by default).
func writeWith(t *testing.T, group parquet.Group, codec compress.Codec, rows []parquet.Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts := []parquet.WriterOption{parquet.NewSchema("schema", group), parquet.MaxRowsPerRowGroup(4)}
	if codec != nil {
		opts = append(opts, parquet.Compression(codec))
	}
	w := parquet.NewWriter(&buf, opts...)
	_, err := w.WriteRows(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestReadForeignEncodingsAndCodecs(t *testing.T) {
	vals := []float64{0.1, 0.1, 2.5, -3, 0.1, 1e300, 7, 8, 9, 10}
	encodings := map[string]func(parquet.Node) parquet.Node{
		"plain":             func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.Plain) },
		"rle-dictionary":    func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.RLEDictionary) },
		"byte-stream-split": func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.ByteStreamSplit) },
	}
	codecs := map[string]compress.Codec{"gzip": &gzip.Codec{}, "snappy": &snappy.Codec{}, "zstd": &zstd.Codec{}, "none": nil}
	for en, enc := range encodings {
		for cn, codec := range codecs {
			for _, optional := range []bool{false, true} {
				node := enc(parquet.Leaf(parquet.DoubleType))
				if optional {
					node = parquet.Optional(node)
				}
				var rows []parquet.Row
				for i, v := range vals {
					pv := parquet.DoubleValue(v).Level(0, 0, 0)
					if optional {
						pv = parquet.DoubleValue(v).Level(0, 1, 0)
						if i == 3 {
							pv = parquet.NullValue().Level(0, 0, 0)
						}
					}
					rows = append(rows, parquet.Row{pv})
				}
				data := writeWith(t, parquet.Group{"grade": node}, codec, rows)
				if en == "byte-stream-split" {
					f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
					require.NoError(t, err)
					assert.Contains(t, f.Metadata().RowGroups[0].Columns[0].MetaData.Encoding, format.ByteStreamSplit, "the file really uses byte-stream-split")
				}
				tab, err := readBytes(t, data, Float64Spec("locations.attributes[0].values", 1, int64(len(vals))))
				require.NoError(t, err, "%s/%s optional=%v", en, cn, optional)
				got := tab.Columns[0].Float64
				for i, v := range vals {
					if optional && i == 3 {
						assert.True(t, math.IsNaN(got[i]), "null reads as NaN")
						assert.True(t, tab.Columns[0].Null[i])
						continue
					}
					assert.Equal(t, v, got[i], "%s/%s optional=%v row %d", en, cn, optional, i)
				}
				if optional {
					_, err := tab.Float64Columns("e", false)
					assert.ErrorContains(t, err, "nulls")
				}
			}
		}
	}
}

func TestReadOptionalOtherTypes(t *testing.T) {
	group := parquet.Group{
		"a_mask": parquet.Optional(parquet.Leaf(parquet.BooleanType)),
		"b_key":  parquet.Optional(parquet.Encoded(parquet.Int(32), &parquet.RLEDictionary)),
		"c_name": parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary)),
	}
	rows := []parquet.Row{
		{parquet.BooleanValue(true).Level(0, 1, 0), parquet.Int32Value(5).Level(0, 1, 1), parquet.ByteArrayValue([]byte("DH1")).Level(0, 1, 2)},
		{parquet.NullValue().Level(0, 0, 0), parquet.Int32Value(5).Level(0, 1, 1), parquet.ByteArrayValue([]byte("DH1")).Level(0, 1, 2)},
		{parquet.BooleanValue(false).Level(0, 1, 0), parquet.NullValue().Level(0, 0, 1), parquet.ByteArrayValue([]byte("DH2")).Level(0, 1, 2)},
	}
	data := writeWith(t, group, &gzip.Codec{}, rows)
	tab, err := readBytes(t, data, TableSpec{Element: "e", Types: []DataType{TypeBool, TypeInt32, TypeString}, Rows: 3})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, tab.Columns[0].Bool)
	assert.Equal(t, []bool{false, true, false}, tab.Columns[0].Null)
	assert.Equal(t, []int64{5, 5, 0}, tab.Columns[1].Int64)
	assert.Equal(t, []bool{false, false, true}, tab.Columns[1].Null)
	assert.Equal(t, []string{"DH1", "DH1", "DH2"}, tab.Columns[2].String)
	assert.Nil(t, tab.Columns[2].Null)
}

func TestReadRejectsMismatch(t *testing.T) {
	data, _, err := EncodeFloat64([][]float64{{1, 2}, {3, 4}}, []string{"a", "b"}, nil)
	require.NoError(t, err)
	cases := []struct {
		name string
		spec TableSpec
		want string
	}{
		{"width", Float64Spec("locations.coordinates", 3, 2), "has 2 columns, want 3"},
		{"rows", Float64Spec("cdf.values", 2, 5), "has 2 rows, want length 5"},
		{"type", TableSpec{Element: "mask.values", Types: []DataType{TypeBool, TypeFloat64}, Rows: 2}, "column 0"},
		{"bad type", TableSpec{Element: "x", Types: []DataType{"timestamp", TypeFloat64}, Rows: 2}, "unsupported data type"},
	}
	for _, c := range cases {
		_, err := readBytes(t, data, c.spec)
		require.Error(t, err, c.name)
		var be *BlobError
		require.True(t, errors.As(err, &be), c.name)
		assert.Equal(t, c.spec.Element, be.Element)
		assert.Contains(t, err.Error(), c.spec.Element, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	_, err = readBytes(t, []byte("PAR1 not really"), Float64Spec("e", 1, 0))
	assert.ErrorContains(t, err, "e: parquet blob")
}

func TestReadTypeAnnotations(t *testing.T) {
	rows := []parquet.Row{{parquet.Int64Value(1).Level(0, 0, 0)}}
	plainInt64 := writeWith(t, parquet.Group{"i": parquet.Leaf(parquet.Int64Type)}, nil, rows)
	_, err := readBytes(t, plainInt64, TableSpec{Element: "e", Types: []DataType{TypeUint64}, Rows: 1})
	assert.ErrorContains(t, err, "unsigned", "uint64 needs the unsigned annotation")
	_, err = readBytes(t, plainInt64, TableSpec{Element: "e", Types: []DataType{TypeInt64}, Rows: 1})
	assert.NoError(t, err)
	unsigned := writeWith(t, parquet.Group{"i": parquet.Uint(64)}, nil, rows)
	_, err = readBytes(t, unsigned, TableSpec{Element: "e", Types: []DataType{TypeInt64}, Rows: 1})
	assert.ErrorContains(t, err, "signed")

	brows := []parquet.Row{{parquet.ByteArrayValue([]byte("x")).Level(0, 0, 0)}}
	binary := writeWith(t, parquet.Group{"s": parquet.Leaf(parquet.ByteArrayType)}, nil, brows)
	_, err = readBytes(t, binary, TableSpec{Element: "e", Types: []DataType{TypeString}, Rows: 1})
	assert.ErrorContains(t, err, "UTF8")
}

func TestReadRejectsNested(t *testing.T) {
	group := parquet.Group{"l": parquet.Repeated(parquet.Leaf(parquet.DoubleType))}
	rows := []parquet.Row{{parquet.DoubleValue(1).Level(0, 1, 0), parquet.DoubleValue(2).Level(1, 1, 0)}}
	data := writeWith(t, group, nil, rows)
	_, err := readBytes(t, data, Float64Spec("e", 1, 1))
	assert.ErrorContains(t, err, "repeated")
}

// A fuzzer finding: a forged footer length made parquet-go allocate a buffer
// of about 1 GB before failing. The envelope check rejects it up front.
func TestReadRejectsForgedFooterLength(t *testing.T) {
	_, err := readBytes(t, []byte("PAR17\x04\x00\x009PAR1"), Float64Spec("e", 1, 0))
	assert.ErrorContains(t, err, "footer length")
	_, err = readBytes(t, []byte("PAR1"), Float64Spec("e", 1, 0))
	assert.ErrorContains(t, err, "not a parquet file")
	_, err = readBytes(t, []byte("XXXX\x00\x00\x00\x00\x00\x00\x00\x00PAR1"), Float64Spec("e", 1, 0))
	assert.ErrorContains(t, err, "magic")
}

// Columns are written concurrently; the bytes must not depend on GOMAXPROCS.
func TestTableWriterDeterministicAcrossGOMAXPROCS(t *testing.T) {
	cols := make([][]float64, 7)
	for c := range cols {
		cols[c] = make([]float64, 20_000)
		for i := range cols[c] {
			cols[c][i] = math.Sin(float64(i*(c+1))) * 1e3
		}
	}
	var outs [][]byte
	for _, procs := range []int{1, 2, 5} {
		prev := runtime.GOMAXPROCS(procs)
		data, _, err := EncodeFloat64(cols, EnsembleColumnNames("sim", len(cols)), &WriteOptions{RowGroupRows: 3000})
		runtime.GOMAXPROCS(prev)
		require.NoError(t, err)
		outs = append(outs, data)
	}
	assert.Equal(t, outs[0], outs[1])
	assert.Equal(t, outs[0], outs[2])
}
