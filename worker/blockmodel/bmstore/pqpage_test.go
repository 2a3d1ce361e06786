package bmstore

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// writeColumnFile writes c to a column file at path with tableWriter, in
// row groups of group rows, as the store does.
func writeColumnFile(t *testing.T, path string, c *Column, group int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	tw, err := newTableWriter(f, []string{"v"}, []DataType{c.Type}, group)
	require.NoError(t, err)
	for lo := 0; lo < c.Len(); lo += 33_333 {
		b := slice(c, lo, min(c.Len(), lo+33_333))
		require.NoError(t, tw.write([]*Column{&b}))
	}
	require.NoError(t, tw.close())
	require.NoError(t, f.Close())
}

// requireReadFrom reads the column file at path (of want's rows) from row
// from to its end in batches of 1 to most rows, through chunkReader where
// it can, and requires want's rows from there.
func requireReadFrom(t *testing.T, rng *rand.Rand, path string, want *Column, from, most int, what string) {
	t.Helper()
	n := want.Len()
	got, _ := readColumnFile(t, path, want.Type, n, from, func() int { return 1 + rng.IntN(most) }, true)
	sub := slice(want, from, n)
	requireSameFast(t, &sub, &got, fmt.Sprintf("%s from %d", what, from))
}

// readStats are the chunks a read took each way.
type readStats struct{ fast, pq int }

// readColumnFile reads a column file of n rows from row from to the end in
// batches of batch() rows, with chunkReader (fast) or through parquet-go
// only, and checks the file then ends.
func readColumnFile(t *testing.T, path string, typ DataType, n, from int, batch func() int, fast bool) (Column, readStats) {
	t.Helper()
	cr, err := openColReader(path, typ)
	require.NoError(t, err)
	defer cr.close()
	if !fast {
		cr.fast = nil
	}
	require.NoError(t, cr.skip(int64(from)))
	got := newColumn(typ, n-from)
	for got.Len() < n-from {
		want := min(batch(), n-from-got.Len())
		k, err := cr.read(&got, want)
		require.NoError(t, err)
		require.Equal(t, want, k)
	}
	k, err := cr.read(&got, 10)
	require.NoError(t, err)
	require.Zero(t, k, "the file ends")
	require.NoError(t, got.check())
	return got, readStats{cr.fastChunks, cr.pqChunks}
}

// requireSameRead checks that two reads of a column are the same, null
// flag for null flag and value for value (floats bit for bit: NaN nulls).
func requireSameRead(t *testing.T, want, got *Column, what string) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len(), what)
	require.Equal(t, len(want.Null), len(got.Null), what)
	for r := range want.Len() {
		same := want.Null[r] == got.Null[r]
		switch k, _ := kindOf(want.Type); k {
		case kBool:
			same = same && want.Bools[r] == got.Bools[r]
		case kInt:
			same = same && want.Ints[r] == got.Ints[r]
		case kUint:
			same = same && want.Uints[r] == got.Uints[r]
		case kFloat:
			same = same && math.Float64bits(want.Floats[r]) == math.Float64bits(got.Floats[r])
		default:
			same = same && want.Strings[r] == got.Strings[r]
		}
		if !same {
			t.Fatalf("%s row %d: want %s (null %v), got %s (null %v)", what, r, cell(want, r), want.Null[r], cell(got, r), got.Null[r])
		}
	}
}

// fixedBatch is a batch size function of n rows.
func fixedBatch(n int) func() int { return func() int { return n } }

// TestChunkReaderAgainstWriter: column files of every type and null
// layout written by tableWriter (row groups of two pages, the second
// short, and a short last row group; strings pages cut by bytes; float
// chunks with and without dictionaries) are read by chunkReader, every
// chunk, with the values and nulls written and those parquet-go's path
// reads, from the start in batches that split pages and from arbitrary
// rows in batches of random sizes.
func TestChunkReaderAgainstWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	const group = 70_000
	n := 2*group + 123
	dir := t.TempDir()
	for name, pattern := range nullPatterns {
		var cols []Column
		for _, typ := range allTypes {
			cols = append(cols, patterned(rng, typ, n, pattern))
		}
		long := newColumn(blockmodel.Utf8, n)
		for r := range n {
			long.Strings = append(long.Strings, fmt.Sprintf("%050d", r))
			long.Null = append(long.Null, pattern(r, rng))
		}
		cols = append(cols, long)
		for _, typ := range []DataType{blockmodel.Float64, blockmodel.Float32, blockmodel.Float16} {
			c := patterned(rng, typ, n, pattern)
			for r := range 2 * group { // dictionary chunks, then a plain one
				c.Floats[r] = float64(rng.IntN(3000)-1000) / 8
			}
			cols = append(cols, c)
		}
		runsFrom := len(cols)
		for _, typ := range allTypes { // integers in runs: run dictionaries, then a plain chunk
			if k, _ := kindOf(typ); k != kInt && k != kUint {
				continue
			}
			c := patterned(rng, typ, n, pattern)
			for r := range 2 * group {
				v := int64(r / 30 % 50)
				if c.Ints != nil {
					c.Ints[r] = v - 20
				} else {
					c.Uints[r] = uint64(v)
				}
			}
			cols = append(cols, c)
		}
		for i := range cols {
			want := &cols[i]
			what := fmt.Sprintf("%s column %d (%s)", name, i, want.Type)
			path := filepath.Join(dir, fmt.Sprintf("c%d.parquet", i))
			writeColumnFile(t, path, want, group)
			if k, _ := kindOf(want.Type); (k == kInt || k == kUint) && name != "all" {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
				require.NoError(t, err)
				dict := pf.Metadata().RowGroups[0].Columns[0].MetaData.DictionaryPageOffset != 0
				require.Equal(t, i >= runsFrom, dict, "%s: a run dictionary for the columns of runs only", what)
			}

			got, st := readColumnFile(t, path, want.Type, n, 0, fixedBatch(100_000), true)
			require.Equal(t, readStats{fast: 3}, st, "%s: every chunk read by chunkReader", what)
			requireSameFast(t, want, &got, what)
			old, st := readColumnFile(t, path, want.Type, n, 0, fixedBatch(100_000), false)
			require.Equal(t, readStats{pq: 3}, st, what)
			requireSameRead(t, &old, &got, what+" against parquet-go")

			for _, from := range []int{1 + rng.IntN(pageRows), pageRows + rng.IntN(2*group-pageRows), 2*group + rng.IntN(123), n} {
				requireReadFrom(t, rng, path, want, from, 80_000, what)
			}
		}
	}
}

// craft describes a column file written by craftFile: row groups of group
// rows, pages of page rows, values dictionary-encoded (indices in RLE and
// bit-packed runs) or PLAIN, and hooks that damage it.
type craft struct {
	codec       format.CompressionCodec
	gzipGroup   int // 1 + the row group written with GZIP instead (0: none)
	group, page int
	dict        bool
	// hooks, each optional: a data page's raw body (rg, page index
	// among data pages, last page of its chunk), its dictionary indices
	// (dictionary size given), its stored body (the header gives its
	// size), its header (page -1: the dictionary page), the header's
	// bytes, the footer
	raw     func(rg, p int, last bool, raw []byte) []byte
	indices func(rg, p int, idx []uint32, dictLen int)
	header  func(rg, p int, last bool, h *format.PageHeader)
	hbytes  func(rg, p int, b []byte) []byte
	stored  func(rg, p int, b []byte) []byte
	meta    func(m *format.FileMetaData)
}

// craftFile writes c as a column file of the layout chunkReader reads (see
// craft), independently of tableWriter: dictionaries of any type, and
// indices with RLE runs as well as bit-packed ones.
func craftFile(t *testing.T, c *Column, o craft) []byte {
	t.Helper()
	schema, err := schemaElements([]string{"v"}, []DataType{c.Type})
	require.NoError(t, err)
	typ, _ := schema[1].Type.Get()
	out := []byte("PAR1")
	meta := format.FileMetaData{Version: 1, Schema: schema, NumRows: int64(c.Len()), CreatedBy: "craftFile"}
	page := func(rg, p int, last bool, h format.PageHeader, raw []byte) []byte {
		if o.raw != nil && p >= 0 {
			raw = o.raw(rg, p, last, raw)
		}
		stored := raw
		switch {
		case o.gzipGroup == rg+1:
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, err := zw.Write(raw)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			stored = z.Bytes()
		case o.codec == format.Snappy:
			stored = s2.EncodeSnappy(nil, raw)
		}
		if o.stored != nil {
			stored = o.stored(rg, p, stored)
		}
		h.UncompressedPageSize, h.CompressedPageSize = int32(len(raw)), int32(len(stored))
		if o.header != nil {
			o.header(rg, p, last, &h)
		}
		hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		require.NoError(t, err)
		if o.hbytes != nil {
			hb = o.hbytes(rg, p, hb)
		}
		return append(hb, stored...)
	}
	for rg, lo := 0, 0; lo < c.Len(); rg, lo = rg+1, lo+o.group {
		hi := min(c.Len(), lo+o.group)
		start := len(out)
		md := format.ColumnMetaData{Type: typ, Encoding: []format.Encoding{format.Plain, format.RLE}, PathInSchema: []string{"v"},
			Codec: o.codec, NumValues: int64(hi - lo), DataPageOffset: int64(start)}
		if o.gzipGroup == rg+1 {
			md.Codec = format.Gzip
		}
		// the dictionary: distinct values in order of first appearance
		var dict Column
		var idx []uint32
		if o.dict {
			dict = newColumn(c.Type, 0)
			at := map[string]uint32{}
			for r := lo; r < hi; r++ {
				if c.IsNull(r) {
					continue
				}
				key := cell(c, r)
				if c.Type == blockmodel.Float32 || c.Type == blockmodel.Float16 {
					key = fmt.Sprint(math.Float32bits(float32(c.Floats[r])))
				}
				i, ok := at[key]
				if !ok {
					i = uint32(dict.Len())
					at[key] = i
					dict.appendFrom(c, r)
				}
				idx = append(idx, i)
			}
			raw := appendPlain(nil, &dict, 0, dict.Len(), nil, 0)
			out = append(out, page(rg, -1, false, format.PageHeader{Type: format.DictionaryPage,
				DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(dict.Len()), Encoding: format.Plain})}, raw)...)
			md.DictionaryPageOffset, md.DataPageOffset = int64(start), int64(len(out))
			md.Encoding = append(md.Encoding, format.RLEDictionary)
		}
		next := 0 // the next index
		for p, plo := 0, lo; plo < hi; p, plo = p+1, plo+o.page {
			phi := min(hi, plo+o.page)
			var nulls []bool
			nullCount := 0
			for r := plo; r < phi; r++ {
				nulls = append(nulls, c.IsNull(r))
				if c.IsNull(r) {
					nullCount++
				}
			}
			raw := []byte{0, 0, 0, 0}
			raw = appendLevels(raw, phi-plo, nulls, nullCount)
			binary.LittleEndian.PutUint32(raw, uint32(len(raw)-4))
			enc := format.Plain
			if o.dict {
				enc = format.RLEDictionary
				pidx := idx[next : next+phi-plo-nullCount]
				next += len(pidx)
				if o.indices != nil {
					pidx = append([]uint32(nil), pidx...)
					o.indices(rg, p, pidx, dict.Len())
				}
				width := 0
				for _, i := range pidx {
					width = max(width, bits.Len32(i))
				}
				raw = append(raw, byte(width))
				raw = appendHybrid(raw, pidx, width)
			} else {
				raw = appendPlain(raw, c, plo, phi, nulls, nullCount)
			}
			out = append(out, page(rg, p, phi == hi, format.PageHeader{Type: format.DataPage,
				DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(phi - plo), Encoding: enc,
					DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})}, raw)...)
		}
		md.TotalCompressedSize = int64(len(out) - start)
		md.TotalUncompressedSize = md.TotalCompressedSize
		meta.RowGroups = append(meta.RowGroups, format.RowGroup{NumRows: int64(hi - lo), FileOffset: int64(start),
			TotalByteSize: md.TotalCompressedSize, TotalCompressedSize: md.TotalCompressedSize, Ordinal: int16(rg),
			Columns: []format.ColumnChunk{{FileOffset: int64(start), MetaData: md}}})
	}
	if o.meta != nil {
		o.meta(&meta)
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &meta)
	require.NoError(t, err)
	out = append(out, b...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
	return append(out, "PAR1"...)
}

// appendHybrid appends vals (of width bits) in the RLE/bit-packed hybrid:
// runs of 8 or more equal values as RLE runs, the rest bit-packed in
// groups of 8 (the last padded).
func appendHybrid(b []byte, vals []uint32, width int) []byte {
	run := func(i int) int {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		return j - i
	}
	for i := 0; i < len(vals); {
		if r := run(i); r >= 8 {
			b = binary.AppendUvarint(b, uint64(r)<<1)
			for k := range (width + 7) / 8 {
				b = append(b, byte(vals[i]>>(8*k)))
			}
			i += r
			continue
		}
		end := i
		for {
			end += 8
			if end >= len(vals) || run(end) >= 8 {
				break
			}
		}
		groups := (end - i) / 8
		b = binary.AppendUvarint(b, uint64(groups)<<1|1)
		var acc uint64
		nb := 0
		for k := range 8 * groups {
			var v uint32
			if i+k < len(vals) {
				v = vals[i+k]
			}
			acc |= uint64(v) << nb
			for nb += width; nb >= 8; nb -= 8 {
				b = append(b, byte(acc))
				acc >>= 8
			}
		}
		i = min(end, len(vals))
	}
	return b
}

// fewValues is a column of type t whose values are drawn from a few, in
// runs (long and short), nulls following pattern.
func fewValues(rng *rand.Rand, t DataType, n int, pattern func(int, *rand.Rand) bool) Column {
	pool := randColumn(rng, t, 300)
	c := newColumn(t, n)
	for r := 0; r < n; {
		k := 1 + rng.IntN(3)
		if rng.IntN(4) == 0 {
			k = 8 + rng.IntN(40)
		}
		from := rng.IntN(pool.Len())
		for ; k > 0 && r < n; k, r = k-1, r+1 {
			if pattern(r, rng) {
				c.appendNull()
			} else {
				c.appendFrom(&pool, from)
			}
		}
	}
	return c
}

// TestChunkReaderDictionaries: files of every type but Boolean with
// dictionary pages and indices in RLE as well as bit-packed runs,
// uncompressed and Snappy, several row groups and pages, every null
// layout, read by chunkReader (and by parquet-go) from the start and from
// arbitrary rows.
func TestChunkReaderDictionaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2))
	dir := t.TempDir()
	const group, page = 20_000, 7_000
	n := 3*group + 77
	for name, pattern := range nullPatterns {
		if name == "edge" || name == "page" { // laid out for pages of pageRows rows
			at := pattern
			pattern = func(r int, rng *rand.Rand) bool { return at(r*pageRows/page, rng) }
		}
		for _, typ := range allTypes {
			for _, codec := range []format.CompressionCodec{format.Uncompressed, format.Snappy} {
				dict := typ != blockmodel.Boolean
				want := fewValues(rng, typ, n, pattern)
				what := fmt.Sprintf("%s %s codec %v dict %v", name, typ, codec, dict)
				path := filepath.Join(dir, "c.parquet")
				require.NoError(t, os.WriteFile(path, craftFile(t, &want, craft{codec: codec, group: group, page: page, dict: dict}), 0o600))
				got, st := readColumnFile(t, path, typ, n, 0, fixedBatch(9_999), true)
				require.Equal(t, readStats{fast: 4}, st, what)
				requireSameFast(t, &want, &got, what)
				old, _ := readColumnFile(t, path, typ, n, 0, fixedBatch(9_999), false)
				requireSameRead(t, &old, &got, what+" against parquet-go")
				requireReadFrom(t, rng, path, &want, rng.IntN(n), 12_000, what)
			}
		}
	}
}

// TestChunkReaderFallback: files written by parquet-go's own writer (data
// pages v2, zstd, DELTA encodings, and pages v1 with Snappy, PLAIN or
// dictionary) read right; the chunks chunkReader does not decode are read
// through parquet-go.
func TestChunkReaderFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3))
	dir := t.TempDir()
	n := 50_000
	type variant struct {
		name string
		enc  func(parquet.Node) parquet.Node
		opts []parquet.WriterOption
		fast bool // chunkReader reads its chunks
	}
	plain := func(n parquet.Node) parquet.Node { return n }
	variants := []variant{
		{"default", plain, nil, false},
		{"v2 snappy", plain, []parquet.WriterOption{parquet.DataPageVersion(2), parquet.Compression(&snappy.Codec{})}, false},
		{"v1 zstd", plain, []parquet.WriterOption{parquet.DataPageVersion(1), parquet.Compression(&zstd.Codec{})}, false},
		{"v1 snappy", plain, []parquet.WriterOption{parquet.DataPageVersion(1), parquet.Compression(&snappy.Codec{})}, true},
		{"v1 dictionary", func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.RLEDictionary) },
			[]parquet.WriterOption{parquet.DataPageVersion(1), parquet.Compression(&snappy.Codec{})}, true},
	}
	for _, typ := range []DataType{blockmodel.Float64, blockmodel.Float32, blockmodel.Int32, blockmodel.Int64, blockmodel.UInt16, blockmodel.Utf8, blockmodel.Boolean} {
		for _, v := range variants {
			if v.name == "v1 dictionary" && typ == blockmodel.Boolean {
				continue
			}
			want := fewValues(rng, typ, n, nullPatterns["fifth"])
			l, err := leaf(typ)
			require.NoError(t, err)
			node := parquet.Optional(v.enc(parquet.Required(l)))
			path := filepath.Join(dir, "c.parquet")
			f, err := os.Create(path)
			require.NoError(t, err)
			opts := append([]parquet.WriterOption{parquet.MaxRowsPerRowGroup(20_000), parquet.PageBufferSize(16 << 10)}, v.opts...)
			w := parquet.NewWriter(f, append(opts, parquet.NewSchema("t", parquet.Group{"v": node}))...)
			rows := make([]parquet.Row, 0, n)
			for r := range n {
				rows = append(rows, parquet.Row(appendValues(nil, &want, r, r+1, 0)))
			}
			_, err = w.WriteRows(rows)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			require.NoError(t, f.Close())

			what := fmt.Sprintf("%s %s", typ, v.name)
			got, st := readColumnFile(t, path, typ, n, 0, fixedBatch(7_777), true)
			requireSameFast(t, &want, &got, what)
			if v.fast && (typ != blockmodel.Utf8 || v.name != "v1 snappy") { // parquet-go's strings are DELTA_LENGTH_BYTE_ARRAY
				require.Equal(t, readStats{fast: 3}, st, what)
			} else {
				require.Equal(t, readStats{pq: 3}, st, what)
			}
			requireReadFrom(t, rng, path, &want, rng.IntN(n), 9_000, what)
		}
	}
}

// TestChunkReaderMixedFile: a file whose first row group chunkReader
// leaves to parquet-go (GZIP pages; parquet-go takes a column's codec from
// its first chunk) reads right from the start and from any row, in
// batches across the row groups, each chunk read its way.
func TestChunkReaderMixedFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	const group, page = 10_000, 3_000
	n := 4*group - 5
	path := filepath.Join(t.TempDir(), "c.parquet")
	for _, typ := range []DataType{blockmodel.Float64, blockmodel.Int32, blockmodel.Utf8} {
		for _, dict := range []bool{false, true} {
			want := fewValues(rng, typ, n, nullPatterns["sparse"])
			require.NoError(t, os.WriteFile(path, craftFile(t, &want, craft{codec: format.Snappy, gzipGroup: 1, group: group, page: page, dict: dict}), 0o600))
			what := fmt.Sprintf("%s dict %v", typ, dict)
			got, st := readColumnFile(t, path, typ, n, 0, fixedBatch(7_000), true)
			require.Equal(t, readStats{fast: 3, pq: 1}, st, what)
			requireSameFast(t, &want, &got, what)
			for range 5 {
				requireReadFrom(t, rng, path, &want, rng.IntN(n), 15_000, what)
			}
		}
	}
}

// TestChunkReaderLongHeader: a chunk with a page header longer than
// chunkReader reads (statistics of 20 KB) is left to parquet-go and reads
// right; the others are chunkReader's.
func TestChunkReaderLongHeader(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 8))
	const group, page = 10_000, 3_000
	n := 3 * group
	want := fewValues(rng, blockmodel.Utf8, n, nullPatterns["fifth"])
	long := bytes.Repeat([]byte("x"), 20_000)
	path := filepath.Join(t.TempDir(), "c.parquet")
	require.NoError(t, os.WriteFile(path, craftFile(t, &want, craft{group: group, page: page,
		header: func(rg, p int, last bool, h *format.PageHeader) {
			if rg == 1 && p == 2 {
				h.DataPageHeader.V.Statistics.MaxValue = long
			}
		}}), 0o600))
	got, st := readColumnFile(t, path, blockmodel.Utf8, n, 0, fixedBatch(4_000), true)
	require.Equal(t, readStats{fast: 2, pq: 1}, st)
	requireSameFast(t, &want, &got, "long header")
}

// readErr reads a whole column file in batches; it returns the first
// error, and the chunks read each way.
func readErr(path string, typ DataType) (readStats, error) {
	cr, err := openColReader(path, typ)
	if err != nil {
		return readStats{}, err
	}
	defer cr.close()
	c := newColumn(typ, 0)
	for {
		c.Reset()
		k, err := cr.read(&c, 3_000)
		if err != nil || k == 0 {
			return readStats{cr.fastChunks, cr.pqChunks}, err
		}
	}
}

// TestChunkReaderDamagedFiles: damaged column files (a chunk cut short or
// past the file, a page past its chunk, garbage page headers, bad runs of
// levels, an index outside the dictionary, values or levels past the page,
// corrupt Snappy, more values than rows, a dictionary larger than its
// page) give an error from chunkReader, never a panic or a hang, and are
// not handed to parquet-go.
func TestChunkReaderDamagedFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	const group, page = 5_000, 2_000
	n := 3*group + 10
	want := fewValues(rng, blockmodel.Int64, n, nullPatterns["fifth"])
	levels := func(raw, lv []byte) []byte { // raw with its levels replaced by lv
		old := binary.LittleEndian.Uint32(raw)
		out := binary.LittleEndian.AppendUint32(nil, uint32(len(lv)))
		out = append(out, lv...)
		return append(out, raw[4+old:]...)
	}
	on := func(rg0, p0 int) func(rg, p int) bool { return func(rg, p int) bool { return rg == rg0 && p == p0 } }
	at := on(1, 1)
	cases := []struct {
		name string
		o    craft
		msg  string
	}{
		{"chunk cut short", craft{meta: func(m *format.FileMetaData) { m.RowGroups[0].Columns[0].MetaData.TotalCompressedSize -= 10 }}, "past the column chunk"},
		{"chunk of two bytes", craft{meta: func(m *format.FileMetaData) { m.RowGroups[1].Columns[0].MetaData.TotalCompressedSize = 2 }}, "page header"},
		{"chunk past the file", craft{meta: func(m *format.FileMetaData) { m.RowGroups[2].Columns[0].MetaData.TotalCompressedSize += 1 << 40 }}, "past the file"},
		{"page past the chunk", craft{header: func(rg, p int, last bool, h *format.PageHeader) {
			if rg == 1 && last {
				h.CompressedPageSize += 100
			}
		}}, "past the column chunk"},
		{"garbage page header", craft{hbytes: func(rg, p int, b []byte) []byte {
			if at(rg, p) {
				return bytes.Repeat([]byte{0xff}, len(b))
			}
			return b
		}}, "page header"},
		{"page header cut short", craft{hbytes: func(rg, p int, b []byte) []byte {
			if at(rg, p) {
				return b[:3]
			}
			return b
		}}, "page header"},
		{"more values than rows", craft{header: func(rg, p int, last bool, h *format.PageHeader) {
			if rg == 1 && last {
				h.DataPageHeader.V.NumValues += 3
			}
		}}, "rows"},
		{"fewer values than rows", craft{header: func(rg, p int, last bool, h *format.PageHeader) {
			if rg == 1 && p == 0 {
				h.DataPageHeader.V.NumValues--
			}
		}}, "values for"},
		{"unterminated run header", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return levels(raw, bytes.Repeat([]byte{0xff}, 11))
			}
			return raw
		}}, "run header"},
		{"runs end early", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return levels(raw, []byte{5 << 1, 1})
			}
			return raw
		}}, "runs end"},
		{"bit-packed run past the page", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return levels(raw, append(binary.AppendUvarint(nil, 1000<<1|1), 0xff, 0xff))
			}
			return raw
		}}, "runs end"},
		{"level wider than its bits", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return levels(raw, append(binary.AppendUvarint(nil, page<<1), 2))
			}
			return raw
		}}, "wider"},
		{"levels past the page", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				binary.LittleEndian.PutUint32(raw, 1<<31)
			}
			return raw
		}}, "past the page"},
		{"values past the page", craft{raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return raw[:len(raw)-5]
			}
			return raw
		}}, "ends before its values"},
		{"index outside the dictionary", craft{dict: true, indices: func(rg, p int, idx []uint32, dictLen int) {
			if at(rg, p) {
				idx[len(idx)/2] = uint32(dictLen)
			}
		}}, "dictionary index"},
		{"RLE index outside the dictionary", craft{dict: true, indices: func(rg, p int, idx []uint32, dictLen int) {
			if at(rg, p) {
				for i := range idx[:20] {
					idx[i] = uint32(dictLen + 7)
				}
			}
		}}, "dictionary index"},
		{"indices end early", craft{dict: true, raw: func(rg, p int, last bool, raw []byte) []byte {
			if at(rg, p) {
				return raw[:len(raw)-3]
			}
			return raw
		}}, "runs end"},
		{"dictionary larger than its page", craft{dict: true, header: func(rg, p int, last bool, h *format.PageHeader) {
			if rg == 1 && p == -1 {
				h.DictionaryPageHeader.V.NumValues = 1 << 30
			}
		}}, "dictionary of"},
		{"snappy length", craft{codec: format.Snappy, stored: func(rg, p int, b []byte) []byte {
			if at(rg, p) {
				n, _ := s2.DecodedLen(b)
				raw, _ := s2.Decode(nil, b)
				return s2.EncodeSnappy(nil, raw[:n-1])
			}
			return b
		}}, "declares"},
		{"snappy corrupt", craft{codec: format.Snappy, stored: func(rg, p int, b []byte) []byte {
			if at(rg, p) {
				n, _ := s2.DecodedLen(b)
				out := binary.AppendUvarint(nil, uint64(n))
				return append(out, bytes.Repeat([]byte{0xff}, len(b)-len(out))...)
			}
			return b
		}}, "snappy"},
		{"snappy past its ratio", craft{codec: format.Snappy, stored: func(rg, p int, b []byte) []byte {
			if at(rg, p) {
				return binary.AppendUvarint(nil, 1<<30)
			}
			return b
		}}, "decodes to"},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		o := tc.o
		o.group, o.page = group, page
		path := filepath.Join(dir, fmt.Sprintf("d%d.parquet", i))
		require.NoError(t, os.WriteFile(path, craftFile(t, &want, o), 0o600))
		st, err := readErr(path, blockmodel.Int64)
		require.ErrorContains(t, err, tc.msg, tc.name)
		require.Zero(t, st.pq, "%s: not read by parquet-go", tc.name)
		// and from any row: an error or the rows, never a panic
		for _, from := range []int{group + page + 1, n - 1} {
			cr, err := openColReader(path, blockmodel.Int64)
			if err != nil {
				continue
			}
			if err := cr.skip(int64(from)); err == nil {
				c := newColumn(blockmodel.Int64, 0)
				_, _ = cr.read(&c, n)
			}
			cr.close()
		}
	}
	// the undamaged file reads
	for _, o := range []craft{{}, {dict: true}, {codec: format.Snappy}} {
		o.group, o.page = group, page
		path := filepath.Join(dir, "good.parquet")
		require.NoError(t, os.WriteFile(path, craftFile(t, &want, o), 0o600))
		st, err := readErr(path, blockmodel.Int64)
		require.NoError(t, err)
		require.Equal(t, readStats{fast: 4}, st)
	}
}

// TestChunkReaderCorruptBytes flips random bytes of the column chunks of
// good files (every kind of page, both codecs) and reads them with
// chunkReader, from the start and after a skip: an error or some rows,
// never a panic, a hang or an allocation beyond the chunk's bounds.
func TestChunkReaderCorruptBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	const group, page = 4_000, 1_500
	n := 2*group + 10
	files := []struct {
		typ DataType
		o   craft
	}{
		{blockmodel.Int64, craft{dict: true, codec: format.Snappy}},
		{blockmodel.Float64, craft{dict: true}},
		{blockmodel.Utf8, craft{codec: format.Snappy}},
		{blockmodel.Utf8, craft{dict: true}},
		{blockmodel.Boolean, craft{}},
		{blockmodel.UInt16, craft{}},
	}
	for _, f := range files {
		want := fewValues(rng, f.typ, n, nullPatterns["fifth"])
		o := f.o
		o.group, o.page = group, page
		good := craftFile(t, &want, o)
		pf, err := parquet.OpenFile(bytes.NewReader(good), int64(len(good)))
		require.NoError(t, err)
		meta := pf.Metadata()
		end := meta.RowGroups[len(meta.RowGroups)-1].Columns[0].MetaData.DataPageOffset
		end += meta.RowGroups[len(meta.RowGroups)-1].Columns[0].MetaData.TotalCompressedSize
		for range 400 {
			b := bytes.Clone(good)
			for range 1 + rng.IntN(4) {
				b[4+rng.Int64N(end-4)] ^= byte(1 + rng.IntN(255))
			}
			c := newChunkReader(bytes.NewReader(b), int64(len(b)), f.typ)
			for g := range meta.RowGroups {
				rows := meta.RowGroups[g].NumRows
				if err := c.open(&meta.RowGroups[g].Columns[0], rows); err != nil {
					continue
				}
				require.LessOrEqual(t, cap(c.page), int(end))
				require.LessOrEqual(t, len(c.dictF)+len(c.dictI)+len(c.dictU)+len(c.dictS), int(end))
				if rng.IntN(2) == 0 {
					if _, err := c.skip(rng.Int64N(rows)); err != nil {
						continue
					}
				}
				col := newColumn(f.typ, 0)
				for !c.done() {
					k, err := c.read(&col, 1+rng.IntN(2_000))
					if err != nil {
						break
					}
					require.Positive(t, k)
				}
				require.LessOrEqual(t, cap(c.raw), snappyRatio*int(end)+16)
			}
		}
	}
}

// BenchmarkReadColumn reads a column file of 2,000,000 rows (BMSTORE_BENCH_ROWS)
// through colReader in batches of 100,000 rows, with chunkReader ("fast")
// and through parquet-go only ("parquet-go"): floats of a few thousand
// values with 2 % nulls (dictionary chunks, as BenchmarkQuery10M's),
// distinct floats (PLAIN), and int64 codes (Snappy).
func BenchmarkReadColumn(b *testing.B) {
	n := 2_000_000
	if v := benchRows(b); v != 10_000_000 {
		n = int(v)
	}
	rng := rand.New(rand.NewPCG(31, 6))
	kinds := []struct {
		name string
		typ  DataType
		val  func(r int) (float64, int64)
	}{
		{"dict-float64", blockmodel.Float64, func(int) (float64, int64) {
			return math.Round(math.Exp(0.8*rng.NormFloat64())*1000) / 1000, 0
		}},
		{"plain-float64", blockmodel.Float64, func(int) (float64, int64) { return rng.NormFloat64(), 0 }},
		{"int64", blockmodel.Int64, func(r int) (float64, int64) { return 0, int64(r / 7 % 1000) }},
	}
	for _, k := range kinds {
		c := newColumn(k.typ, n)
		for r := range n {
			f, i := k.val(r)
			c.Null = append(c.Null, rng.IntN(50) == 0)
			if k.typ == blockmodel.Float64 {
				c.Floats = append(c.Floats, f)
			} else {
				c.Ints = append(c.Ints, i)
			}
		}
		path := filepath.Join(b.TempDir(), "c.parquet")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		tw, err := newTableWriter(f, []string{"v"}, []DataType{k.typ}, storeRowGroup)
		if err != nil {
			b.Fatal(err)
		}
		if err := tw.write([]*Column{&c}); err != nil {
			b.Fatal(err)
		}
		if err := tw.close(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		for _, fast := range []bool{true, false} {
			name := k.name + "/fast"
			if !fast {
				name = k.name + "/parquet-go"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(8 * int64(n))
				b.ReportAllocs()
				dst := newColumn(k.typ, 100_000)
				for b.Loop() {
					cr, err := openColReader(path, k.typ)
					if err != nil {
						b.Fatal(err)
					}
					if !fast {
						cr.fast = nil
					}
					for got := 0; got < n; {
						dst.Reset()
						m, err := cr.read(&dst, 100_000)
						if err != nil || m == 0 {
							b.Fatal(err, m)
						}
						got += m
					}
					cr.close()
				}
			})
		}
	}
}

// TestHybridDecoder decodes RLE/bit-packed hybrid streams of every bit
// width up to 16 (identity dictionaries) and of levels, in random pieces
// with skips between them, against the values encoded; run headers out of
// range are errors.
func TestHybridDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 9))
	for width := 0; width <= 16; width++ {
		dict := make([]uint32, 1<<width)
		for i := range dict {
			dict[i] = uint32(i)
		}
		for range 20 {
			n := 1 + rng.IntN(3000)
			vals := make([]uint32, 0, n)
			for len(vals) < n {
				v := uint32(rng.IntN(len(dict)))
				for k := 1 + rng.IntN(20); k > 0 && len(vals) < n; k-- {
					vals = append(vals, v)
					if rng.IntN(3) == 0 {
						v = uint32(rng.IntN(len(dict)))
					}
				}
			}
			var h hybrid
			h.reset(appendHybrid(nil, vals, width), uint(width))
			for at := 0; at < n; {
				k := min(n-at, 1+rng.IntN(100))
				if rng.IntN(4) == 0 {
					require.NoError(t, h.skipValues(k))
				} else {
					out := make([]uint32, k)
					require.NoError(t, lookup(&h, dict, out))
					require.Equal(t, vals[at:at+k], out, "width %d at %d", width, at)
				}
				at += k
			}
			require.Error(t, lookup(&h, dict, make([]uint32, 8+rng.IntN(8))), "past the values") // a bit-packed run's padding at most
		}
	}
	// levels: nulls and skip against the flags
	for range 200 {
		n := 1 + rng.IntN(5000)
		nulls := make([]bool, n)
		count := 0
		for i, p := 0, rng.Float64(); i < n; i++ {
			if nulls[i] = rng.Float64() < p; nulls[i] {
				count++
			}
		}
		var h hybrid
		h.reset(appendLevels(nil, n, nulls, count), 1)
		for at := 0; at < n; {
			k := min(n-at, 1+rng.IntN(300))
			want := 0
			for _, x := range nulls[at : at+k] {
				if !x {
					want++
				}
			}
			if rng.IntN(3) == 0 {
				got, err := h.skip(k)
				require.NoError(t, err)
				require.Equal(t, want, got)
			} else {
				out := make([]bool, k)
				got, err := h.nulls(out)
				require.NoError(t, err)
				require.Equal(t, want, got)
				require.Equal(t, nulls[at:at+k], out)
			}
			at += k
		}
	}
	// bit-packed run headers of huge counts: the values there are, then
	// an error (an RLE run of such a count is only a long run)
	for _, head := range []uint64{1<<63 | 1, 1<<62 | 1, 1<<61 | 1, math.MaxUint64} {
		var h hybrid
		h.reset(append(binary.AppendUvarint(nil, head), 0xff, 0xff, 0xff), 8)
		out := make([]uint32, 10)
		require.Error(t, lookup(&h, make([]uint32, 300), out), "%x", head)
	}
}
