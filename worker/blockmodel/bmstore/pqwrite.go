package bmstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/objects"
)

// The store's column files and query outputs are written by tableWriter,
// a Parquet writer for flat tables of OPTIONAL columns: data pages v1,
// PLAIN values or a chunk's dictionary (floats of few distinct values, see
// floatDict; integers in long runs, see runDict),
// definition levels in the RLE/bit-packed hybrid, each page compressed on
// its own (Snappy, or not at all: see codecOf). It writes
// straight from the typed slices of Column (no value a cell) and encodes
// row groups on several goroutines. The schema elements are parquet-go's
// own (taken from an empty file it writes of the same schema), so a file
// has the schema parquet-go would give it, and any Parquet reader reads it.

// pageRows bounds the rows of a data page; pageBytes bounds the raw bytes
// of a page's values (reached by strings only).
const (
	pageRows  = 1 << 16
	pageBytes = 1 << 20
)

// slotBudget bounds the bytes of rows a tableWriter copies for its row
// groups in flight: a table too wide for two row groups in flight (a query
// of many columns) is encoded by the caller, one row group at a time.
const slotBudget = 64 << 20

// maxEncoders bounds the row groups of one tableWriter encoded at once.
const maxEncoders = 4

// rowBytes estimates the bytes of one row of the given types in a Column
// (value and null flag; a string's header and some of its bytes).
func rowBytes(types []DataType) int {
	n := 0
	for _, t := range types {
		switch k, _ := kindOf(t); k {
		case kBool:
			n += 2
		case kString:
			n += 33
		default:
			n += 9
		}
	}
	return n
}

// codecOf is the compression of a column's pages. Floating-point pages are
// stored uncompressed: estimates (a kriged grade) do not compress (Snappy
// gives 1.00 of raw on full-precision values), and on assays rounded to
// three decimals Snappy halves a page at 455 MB/s a core, too slow for the
// 200 MB/s an update must write on two cores. Other types are Snappy: index
// and code columns shrink to a few percent at several GB/s.
func codecOf(t DataType) format.CompressionCodec {
	switch t {
	case blockmodel.Float16, blockmodel.Float32, blockmodel.Float64:
		return format.Uncompressed
	}
	return format.Snappy
}

// schemaElements returns parquet-go's schema elements of a flat table of
// OPTIONAL columns of the given names and types, in that order.
func schemaElements(names []string, types []DataType) ([]format.SchemaElement, error) {
	g := parquet.Group{}
	for i, n := range names {
		l, err := leaf(types[i])
		if err != nil {
			return nil, err
		}
		if _, dup := g[n]; dup {
			return nil, fmt.Errorf("duplicate column name %q", n)
		}
		g[n] = l
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, objects.OrderedSchema(g, names))
	if err := pw.Close(); err != nil {
		return nil, fmt.Errorf("parquet schema: %w", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("parquet schema: %w", err)
	}
	schema := slices.Clone(pf.Metadata().Schema)
	if len(schema) != len(names)+1 {
		return nil, fmt.Errorf("parquet schema: %d elements for %d columns", len(schema), len(names))
	}
	for i, n := range names {
		if schema[i+1].Name != n {
			return nil, fmt.Errorf("parquet schema: column %d is %q, want %q", i, schema[i+1].Name, n)
		}
	}
	return schema, nil
}

// tableWriter writes batches of several named columns to one Parquet stream.
//
// Rows are copied (typed, in bulk) into the current row group's columns; a
// full row group is handed to a goroutine that encodes and compresses its
// pages into one buffer while the caller fills the next, and the buffers
// are written in row group order, so the bytes do not depend on the
// schedule. Memory is bounded by the row groups in flight (at most
// maxEncoders, and slotBudget); a table too wide for two is encoded by the
// caller as each row group fills (direct).
type tableWriter struct {
	out    *countWriter
	types  []DataType
	names  []string
	schema []format.SchemaElement
	codecs []format.CompressionCodec
	group  int
	// rowsHint, when positive, is the number of rows the caller will
	// write (sizes the buffers of a small table).
	rowsHint int64
	// free holds idle slots; a slot is taken to fill a row group and
	// returned after its bytes are written. Slots are made on first use,
	// up to cap(free) of them (made so far: made), an idle one preferred.
	free   chan *groupSlot
	made   int
	slot   *groupSlot
	direct bool
	// prev receives the outcome of the previously dispatched row group
	// once it is written (nil before the first).
	prev chan error
	err  error
	// failed holds the first error of an encoding goroutine, so that the
	// next write fails at once.
	failed atomic.Pointer[error]
	// rowGroups and rows are the written row groups' metadata, appended
	// in order by the goroutine writing each (after the previous one).
	rowGroups []format.RowGroup
	rows      int64
	closed    bool
}

// countWriter counts the bytes written through it: the file offsets of
// pages.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// groupSlot is one row group in flight: its rows, then its encoded pages.
type groupSlot struct {
	// cols are the rows to encode: own, filled by write, or a caller's,
	// lent by writeGroup until release is called.
	cols    []Column
	own     []Column
	release func()
	// buf holds the row group's pages, column after column; each page is
	// encoded headerRoom bytes past the end of the previous one and its
	// header put right before it, so a page is one segment of buf, written
	// without a copy.
	buf    []byte
	segs   [][2]int     // the pages' segments of buf, in order
	chunks []chunkBytes // each column's pages (segs[from:to])
	// scratch of page encoding
	nulls []bool
	raw   []byte
	dict  floatDict
	runs  runDict
}

// headerRoom is the room left for a page header before its body (a data
// page v1 header with a null count takes about 30 bytes).
const headerRoom = 64

// chunkBytes describes one column chunk encoded in a slot's buffer.
type chunkBytes struct {
	from, to     int   // its pages, segs[from:to]
	size         int64 // bytes of its pages as written, headers included
	uncompressed int64 // bytes of its pages uncompressed, headers included
	values       int64
	nulls        int64
	dict         bool // a dictionary page first, data pages RLE_DICTIONARY
	dictPages    int32
	dataPages    int32
}

// newTableWriter starts a Parquet stream of the named columns with row
// groups of group rows.
func newTableWriter(w io.Writer, names []string, types []DataType, group int) (*tableWriter, error) {
	schema, err := schemaElements(names, types)
	if err != nil {
		return nil, err
	}
	tw := &tableWriter{out: &countWriter{w: w}, types: types, names: names, schema: schema, group: group}
	for _, t := range types {
		tw.codecs = append(tw.codecs, codecOf(t))
	}
	if _, err := tw.out.Write([]byte("PAR1")); err != nil {
		return nil, fmt.Errorf("parquet write: %w", err)
	}
	slots := min(min(maxEncoders, runtime.GOMAXPROCS(0))+1, slotBudget/max(1, group*rowBytes(types)))
	if slots < 2 {
		slots, tw.direct = 1, true
	}
	tw.free = make(chan *groupSlot, slots)
	return tw, nil
}

// idle returns an idle slot: one made before when there is one, else a
// new one while fewer than cap(tw.free) exist, else the next one freed.
func (tw *tableWriter) idle() *groupSlot {
	select {
	case s := <-tw.free:
		return s
	default:
	}
	if tw.made < cap(tw.free) {
		tw.made++
		return &groupSlot{}
	}
	return <-tw.free
}

// take makes the next slot current, waiting for one to be free.
func (tw *tableWriter) take() {
	s := tw.idle()
	if s.own == nil {
		for _, t := range tw.types {
			size := tw.group
			if tw.rowsHint > 0 {
				size = int(min(int64(size), tw.rowsHint))
			}
			s.own = append(s.own, newColumn(t, size))
		}
	}
	for i := range s.own {
		s.own[i].Reset()
	}
	s.cols = s.own
	tw.slot = s
}

// writeGroup writes one row group of the caller's columns (schema order,
// equal lengths, at most the group size) without copying them: they are
// lent until release is called (from another goroutine, once the group is
// encoded, or failed). It must not follow a write of a partial group.
func (tw *tableWriter) writeGroup(cols []Column, release func()) error {
	fail := func(err error) error {
		release()
		return err
	}
	if tw.err != nil {
		return fail(tw.err)
	}
	if p := tw.failed.Load(); p != nil {
		return fail(*p)
	}
	if len(cols) != len(tw.types) {
		return fail(fmt.Errorf("%d columns, table has %d", len(cols), len(tw.types)))
	}
	n := cols[0].Len()
	for i := range cols {
		if cols[i].Type != tw.types[i] || cols[i].Len() != n {
			return fail(fmt.Errorf("column %d: %s of %d rows, want %s of %d", i, cols[i].Type, cols[i].Len(), tw.types[i], n))
		}
		if err := cols[i].check(); err != nil {
			return fail(err)
		}
	}
	if n == 0 || n > tw.group {
		return fail(fmt.Errorf("row group of %d rows (1 to %d)", n, tw.group))
	}
	if tw.slot != nil {
		if tw.slot.cols[0].Len() > 0 {
			return fail(errors.New("a row group lent after a partial one"))
		}
		tw.free <- tw.slot
		tw.slot = nil
	}
	s := tw.idle()
	s.cols, s.release = cols, release
	tw.slot = s
	return tw.dispatch()
}

// write appends a batch: cols in schema order, equal lengths.
func (tw *tableWriter) write(cols []*Column) error {
	if tw.err != nil {
		return tw.err
	}
	if p := tw.failed.Load(); p != nil {
		return *p
	}
	n := cols[0].Len()
	for i := range cols {
		if cols[i].Len() != n {
			return fmt.Errorf("column %d has %d rows, column 0 has %d", i, cols[i].Len(), n)
		}
	}
	for lo := 0; lo < n; {
		if tw.slot == nil {
			tw.take()
		}
		s := tw.slot
		in := s.cols[0].Len()
		hi := min(n, lo+tw.group-in)
		for c, col := range cols {
			s.cols[c].appendRange(col, lo, hi)
		}
		if in+(hi-lo) == tw.group {
			if err := tw.dispatch(); err != nil {
				return err
			}
		}
		lo = hi
	}
	return nil
}

// dispatch hands the current row group to an encoding goroutine (or, for
// a direct table, encodes and writes it at once).
func (tw *tableWriter) dispatch() error {
	s := tw.slot
	tw.slot = nil
	if tw.direct {
		err := geostat.Catch(func() error { return tw.encodeAndWrite(s) })
		release := s.done()
		tw.free <- s
		release()
		if err != nil {
			tw.err = err
		}
		return err
	}
	prev, done := tw.prev, make(chan error, 1)
	tw.prev = done
	go func() {
		err := geostat.Catch(func() error { return s.encode(tw.codecs) }) // a panic fails the write, never the process
		if prev != nil {
			if perr := <-prev; perr != nil && err == nil {
				err = perr
			}
		}
		if err == nil {
			err = geostat.Catch(func() error { return tw.commit(s) })
		}
		if err != nil {
			tw.failed.CompareAndSwap(nil, &err)
		}
		// The slot is idle before its lent columns go back, so that the
		// lender's next group finds it (no new slot for it), and both
		// before the group counts as written (Close returns after every
		// release).
		release := s.done()
		tw.free <- s
		release()
		done <- err
	}()
	return nil
}

// done ends the slot's loan of columns: the release to call (once the
// slot is idle), a no-op when the columns were its own.
func (s *groupSlot) done() (release func()) {
	release = s.release
	if release == nil {
		return func() {}
	}
	s.cols, s.release = nil, nil
	return release
}

func (tw *tableWriter) encodeAndWrite(s *groupSlot) error {
	if err := s.encode(tw.codecs); err != nil {
		return err
	}
	return tw.commit(s)
}

// commit writes an encoded row group and records its metadata; row groups
// are committed one at a time, in order.
func (tw *tableWriter) commit(s *groupSlot) error {
	base := tw.out.n
	for _, seg := range s.segs {
		if _, err := tw.out.Write(s.buf[seg[0]:seg[1]]); err != nil {
			return fmt.Errorf("parquet write: %w", err)
		}
	}
	rows := int64(s.cols[0].Len())
	rg := format.RowGroup{NumRows: rows, FileOffset: base, Ordinal: int16(len(tw.rowGroups))}
	off := base
	for c, ch := range s.chunks {
		typ, _ := tw.schema[c+1].Type.Get()
		md := format.ColumnMetaData{
			Type:                  typ,
			Encoding:              []format.Encoding{format.Plain, format.RLE},
			PathInSchema:          []string{tw.names[c]},
			Codec:                 tw.codecs[c],
			NumValues:             ch.values,
			TotalUncompressedSize: ch.uncompressed,
			TotalCompressedSize:   ch.size,
			DataPageOffset:        off,
			Statistics:            format.Statistics{NullCount: ch.nulls},
			EncodingStats:         []format.PageEncodingStats{{PageType: format.DataPage, Encoding: format.Plain, Count: ch.dataPages}},
		}
		if ch.dict {
			dp := s.segs[ch.from] // the dictionary page, before the data pages
			md.DictionaryPageOffset = off
			md.DataPageOffset = off + int64(dp[1]-dp[0])
			md.Encoding = []format.Encoding{format.Plain, format.RLE, format.RLEDictionary}
			md.EncodingStats = []format.PageEncodingStats{
				{PageType: format.DictionaryPage, Encoding: format.Plain, Count: ch.dictPages},
				{PageType: format.DataPage, Encoding: format.RLEDictionary, Count: ch.dataPages},
			}
		}
		rg.Columns = append(rg.Columns, format.ColumnChunk{FileOffset: off, MetaData: md})
		off += ch.size
		rg.TotalByteSize += ch.uncompressed
	}
	rg.TotalCompressedSize = off - base
	tw.rowGroups = append(tw.rowGroups, rg)
	tw.rows += rows
	return nil
}

// wait waits for every dispatched row group; it returns the first error.
func (tw *tableWriter) wait() error {
	if tw.prev != nil {
		if err := <-tw.prev; err != nil && tw.err == nil {
			tw.err = err
		}
		tw.prev = nil
	}
	return tw.err
}

// close writes the last row group and the footer.
func (tw *tableWriter) close() error {
	if tw.closed {
		return tw.err
	}
	tw.closed = true
	if tw.err == nil && tw.slot != nil && tw.slot.cols[0].Len() > 0 {
		tw.dispatch()
	}
	tw.slot = nil
	if err := tw.wait(); err != nil {
		return err
	}
	meta := format.FileMetaData{
		Version:   1,
		Schema:    tw.schema,
		NumRows:   tw.rows,
		RowGroups: tw.rowGroups,
		CreatedBy: "geostat version 1",
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &meta)
	if err != nil {
		tw.err = fmt.Errorf("parquet footer: %w", err)
		return tw.err
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)))
	b = append(b, "PAR1"...)
	if _, err := tw.out.Write(b); err != nil {
		tw.err = fmt.Errorf("parquet write: %w", err)
	}
	return tw.err
}

// discard waits for the row groups in flight and drops the stream.
func (tw *tableWriter) discard() {
	tw.slot = nil
	tw.closed = true
	tw.wait()
}

// encode encodes the slot's rows into its buffer, column after column,
// page after page.
func (s *groupSlot) encode(codecs []format.CompressionCodec) error {
	// Room for the pages of uncompressed columns (a dictionary's indices
	// take about 2 bytes a value); compressed pages are small and grow the
	// buffer as they come. A slot's buffer is kept for its next row group.
	size := 0
	for c := range s.cols {
		if n := s.cols[c].Len(); codecs[c] == format.Uncompressed {
			size += n*2 + n/8 + (n/pageRows+2)*(headerRoom+16)
		}
	}
	s.buf, s.segs, s.chunks = slices.Grow(s.buf[:0], size), s.segs[:0], s.chunks[:0]
	for c := range s.cols {
		col := &s.cols[c]
		n := col.Len()
		ch := chunkBytes{from: len(s.segs), values: int64(n)}
		var dict pageDict
		switch k, _ := kindOf(col.Type); {
		case k == kFloat && s.dict.build(col):
			dict = &s.dict
		case (k == kInt || k == kUint) && s.runs.build(col):
			dict = &s.runs
		}
		if dict != nil {
			ch.dict = true
			if err := s.dictPage(col.Type, codecs[c], &ch, dict.dictValues()); err != nil {
				return err
			}
		}
		for lo := 0; lo < n; {
			hi := pageEnd(col, lo, n)
			if err := s.page(col, lo, hi, codecs[c], &ch, dict); err != nil {
				return err
			}
			lo = hi
		}
		ch.to = len(s.segs)
		s.chunks = append(s.chunks, ch)
	}
	return nil
}

// pageEnd is the end of the page of col starting at row lo (of n rows).
func pageEnd(col *Column, lo, n int) int {
	hi := min(n, lo+pageRows)
	if col.Type != blockmodel.Utf8 {
		return hi
	}
	size := 0
	for r := lo; r < hi; r++ {
		size += 4 + len(col.Strings[r])
		if size >= pageBytes {
			return r + 1
		}
	}
	return hi
}

// page appends the data page of rows [lo, hi) of col to s.buf: PLAIN
// values, or indices into dict (RLE_DICTIONARY) when dict is not nil.
func (s *groupSlot) page(col *Column, lo, hi int, codec format.CompressionCodec, ch *chunkBytes, dict pageDict) error {
	n := hi - lo
	nulls, nullCount := s.pageNulls(col, lo, hi)
	at, raw := s.body(codec)
	start := len(raw)
	raw = append(raw, 0, 0, 0, 0)
	raw = appendLevels(raw, n, nulls, nullCount)
	binary.LittleEndian.PutUint32(raw[start:], uint32(len(raw)-start-4))
	enc := format.Plain
	if dict != nil {
		enc = format.RLEDictionary
		raw = dict.appendIndices(raw, n-nullCount)
	} else {
		raw = appendPlain(raw, col, lo, hi, nulls, nullCount)
	}
	return s.finish(at, raw, start, codec, ch, func(rawSize, bodySize int) format.PageHeader {
		return format.PageHeader{
			Type:                 format.DataPage,
			UncompressedPageSize: int32(rawSize),
			CompressedPageSize:   int32(bodySize),
			DataPageHeader: thrift.New(format.DataPageHeader{
				NumValues:               int32(n),
				Encoding:                enc,
				DefinitionLevelEncoding: format.RLE,
				RepetitionLevelEncoding: format.RLE,
				Statistics:              format.Statistics{NullCount: int64(nullCount)},
			}),
		}
	}, int64(nullCount))
}

// pageNulls returns the null flags of rows [lo, hi) of col (Null flags
// and NaN floats) and their count; nil flags when there is no null (found
// by a vectorised byte search and a NaN scan, without a pass per row).
func (s *groupSlot) pageNulls(col *Column, lo, hi int) ([]bool, int) {
	hasNull := col.Null != nil && bytes.IndexByte(asBytes(col.Null[lo:hi]), 1) >= 0
	if !hasNull && col.Floats != nil {
		for _, f := range col.Floats[lo:hi] {
			if f != f {
				hasNull = true
				break
			}
		}
	}
	if !hasNull {
		return nil, 0
	}
	n := hi - lo
	s.nulls = slices.Grow(s.nulls[:0], n)[:n]
	nulls := s.nulls
	if col.Null != nil {
		copy(nulls, col.Null[lo:hi])
	} else {
		clear(nulls)
	}
	if col.Floats != nil {
		for i, f := range col.Floats[lo:hi] {
			if f != f {
				nulls[i] = true
			}
		}
	}
	count := 0
	for _, x := range nulls {
		if x {
			count++
		}
	}
	return nulls, count
}

// dictPage appends the dictionary page of the values d (PLAIN values of
// type t, as bits: a float's, or an integer's).
func (s *groupSlot) dictPage(t DataType, codec format.CompressionCodec, ch *chunkBytes, d []uint64) error {
	at, raw := s.body(codec)
	start := len(raw)
	switch t {
	case blockmodel.Float64, blockmodel.Int64, blockmodel.Timestamp, blockmodel.UInt64:
		raw = put64(raw, d, nil, len(d))
	default:
		raw = put32(raw, d, nil, len(d))
	}
	return s.finish(at, raw, start, codec, ch, func(rawSize, bodySize int) format.PageHeader {
		return format.PageHeader{
			Type:                 format.DictionaryPage,
			UncompressedPageSize: int32(rawSize),
			CompressedPageSize:   int32(bodySize),
			DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(d)), Encoding: format.Plain}),
		}
	}, 0)
}

// body returns where the next page's body goes: at in s.buf, encoded in
// place (returned s.buf[:at]) when uncompressed, else in s.raw (returned
// empty) to be compressed to s.buf[at:].
func (s *groupSlot) body(codec format.CompressionCodec) (at int, raw []byte) {
	at = len(s.buf) + headerRoom
	if codec == format.Uncompressed {
		return at, slices.Grow(s.buf, headerRoom)[:at]
	}
	return at, s.raw[:0]
}

// finish completes a page whose raw body is raw[start:] (from body): it
// compresses it to s.buf[at:] if codec asks, puts its header (from
// header, given the raw and stored sizes) right before it and records the
// page's segment.
func (s *groupSlot) finish(at int, raw []byte, start int, codec format.CompressionCodec, ch *chunkBytes, header func(rawSize, bodySize int) format.PageHeader, nulls int64) error {
	rawSize := len(raw) - start
	if rawSize > math.MaxInt32 {
		return fmt.Errorf("parquet page of %d bytes", rawSize)
	}
	if codec == format.Uncompressed {
		s.buf = raw
	} else {
		s.raw = raw
		dst := slices.Grow(s.buf, headerRoom+s2.MaxEncodedLen(rawSize))
		comp := s2.EncodeSnappy(dst[at:at+s2.MaxEncodedLen(rawSize)], raw)
		s.buf = dst[:at+len(comp)]
	}
	bodySize := len(s.buf) - at
	h := header(rawSize, bodySize)
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		return fmt.Errorf("parquet page header: %w", err)
	}
	if len(hb) > headerRoom {
		return fmt.Errorf("parquet page header of %d bytes", len(hb))
	}
	copy(s.buf[at-len(hb):at], hb)
	s.segs = append(s.segs, [2]int{at - len(hb), len(s.buf)})
	ch.size += int64(len(hb) + bodySize)
	ch.uncompressed += int64(len(hb) + rawSize)
	ch.nulls += nulls
	if h.Type == format.DictionaryPage {
		ch.dictPages++
	} else {
		ch.dataPages++
	}
	return nil
}

// appendLevels appends the definition levels of a page of n rows (1 a
// value, 0 a null; bit width 1) in the RLE/bit-packed hybrid: runs of at
// least minRun equal levels as RLE runs, the rest bit-packed in groups of
// 8. nulls flags the null rows; it may be nil when nullCount is 0.
func appendLevels(b []byte, n int, nulls []bool, nullCount int) []byte {
	switch nullCount {
	case 0:
		return appendRLERun(b, n, 1)
	case n:
		return appendRLERun(b, n, 0)
	}
	const minRun = 16
	flags := asBytes(nulls[:n])
	runFrom := func(i int) int { // length of the run of equal levels at i (a vectorised search)
		if j := bytes.IndexByte(flags[i+1:], flags[i]^1); j >= 0 {
			return j + 1
		}
		return n - i
	}
	longRunAt := func(i int) bool { // whether a run of at least minRun starts at i
		return i+minRun <= n && bytes.IndexByte(flags[i+1:i+minRun], flags[i]^1) < 0
	}
	for i := 0; i < n; {
		if r := runFrom(i); r >= minRun {
			var level byte
			if !nulls[i] {
				level = 1
			}
			b = appendRLERun(b, r, level)
			i += r
			continue
		}
		// Bit-packed groups of 8 from i until a long run starts at a
		// group boundary (or the page ends: the last group is padded).
		end := i
		for {
			end += 8
			if end >= n || longRunAt(end) {
				break
			}
		}
		groups := (end - i) / 8
		b = binary.AppendUvarint(b, uint64(groups)<<1|1)
		for g := range groups {
			var x byte
			for k := range 8 {
				if r := i + 8*g + k; r < n && !nulls[r] {
					x |= 1 << k
				}
			}
			b = append(b, x)
		}
		i = min(end, n)
	}
	return b
}

// appendRLERun appends an RLE run of count levels of value level (bit
// width 1: one byte of value).
func appendRLERun(b []byte, count int, level byte) []byte {
	return append(binary.AppendUvarint(b, uint64(count)<<1), level)
}

// littleEndian reports whether the machine stores integers little-endian,
// as Parquet's PLAIN encoding does (a slice of values is then its bytes).
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// float64Bits views float64 values as their IEEE bits (the same memory).
func float64Bits(v []float64) []uint64 {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), len(v))
}

// asBytes is the memory of a slice of fixed-size values.
func asBytes[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0])))
}

// appendPlain appends the PLAIN encoding of the values of rows [lo, hi) of
// col that are not null (nulls[r-lo]; nulls is nil when nullCount is 0).
func appendPlain(b []byte, col *Column, lo, hi int, nulls []bool, nullCount int) []byte {
	m := hi - lo - nullCount
	dense := nullCount == 0 && littleEndian()
	switch col.Type {
	case blockmodel.Float64:
		if dense {
			return append(b, asBytes(col.Floats[lo:hi])...)
		}
		return put64(b, float64Bits(col.Floats[lo:hi]), nulls, m)
	case blockmodel.Float16, blockmodel.Float32:
		return putFloat(b, col.Floats[lo:hi], nulls, m)
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		return put32(b, col.Ints[lo:hi], nulls, m)
	case blockmodel.Int64, blockmodel.Timestamp:
		if dense {
			return append(b, asBytes(col.Ints[lo:hi])...)
		}
		return put64(b, col.Ints[lo:hi], nulls, m)
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		if col.U32 != nil {
			if dense {
				return append(b, asBytes(col.U32[lo:hi])...)
			}
			return put32(b, col.U32[lo:hi], nulls, m)
		}
		return put32(b, col.Uints[lo:hi], nulls, m)
	case blockmodel.UInt64:
		if dense {
			return append(b, asBytes(col.Uints[lo:hi])...)
		}
		return put64(b, col.Uints[lo:hi], nulls, m)
	case blockmodel.Boolean:
		var x byte
		k := 0
		for i, v := range col.Bools[lo:hi] {
			if nullCount > 0 && nulls[i] {
				continue
			}
			if v {
				x |= 1 << k
			}
			if k++; k == 8 {
				b, x, k = append(b, x), 0, 0
			}
		}
		if k > 0 {
			b = append(b, x)
		}
	case blockmodel.Utf8:
		for i, v := range col.Strings[lo:hi] {
			if nullCount == 0 || !nulls[i] {
				b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
				b = append(b, v...)
			}
		}
	}
	return b
}

// The put functions append the m values of vals that are not null
// (nulls[i]; every value when m is len(vals)) in PLAIN encoding: integers
// as their low 32 or 64 bits, floats as float64 or float32 bits.

func put32[T int64 | uint64 | uint32](b []byte, vals []T, nulls []bool, m int) []byte {
	if m == len(vals) && littleEndian() {
		// narrowed a chunk at a time into an aligned buffer, then copied
		b = slices.Grow(b, 4*m)
		var tmp [1024]uint32
		for lo := 0; lo < len(vals); lo += len(tmp) {
			chunk := vals[lo:min(len(vals), lo+len(tmp))]
			for i, x := range chunk {
				tmp[i] = uint32(x)
			}
			b = append(b, asBytes(tmp[:len(chunk)])...)
		}
		return b
	}
	at := len(b)
	b = slices.Grow(b, 4*m)[:at+4*m]
	d, w := b[at:], 0
	for i, x := range vals {
		if m == len(vals) || !nulls[i] {
			binary.LittleEndian.PutUint32(d[w:], uint32(x))
			w += 4
		}
	}
	return b
}

func put64[T int64 | uint64](b []byte, vals []T, nulls []bool, m int) []byte {
	at := len(b)
	b = slices.Grow(b, 8*m)[:at+8*m]
	d, w := b[at:], 0
	for i, x := range vals {
		if m == len(vals) || !nulls[i] {
			binary.LittleEndian.PutUint64(d[w:], uint64(x))
			w += 8
		}
	}
	return b
}

func putFloat(b []byte, vals []float64, nulls []bool, m int) []byte {
	at := len(b)
	b = slices.Grow(b, 4*m)[:at+4*m]
	d, w := b[at:], 0
	for i, x := range vals {
		if m == len(vals) || !nulls[i] {
			binary.LittleEndian.PutUint32(d[w:], math.Float32bits(float32(x)))
			w += 4
		}
	}
	return b
}

// pageDict is a column chunk's dictionary, as the pages write it.
type pageDict interface {
	// dictValues are the dictionary's values (bits), in index order.
	dictValues() []uint64
	// appendIndices appends the RLE_DICTIONARY data of the next m values
	// that are not null: the bit width, then the hybrid's runs.
	appendIndices(b []byte, m int) []byte
}

func (d *floatDict) dictValues() []uint64 { return d.values }

// runDict is the dictionary of an integer column chunk made of long runs
// of equal values (the j and k of a query of a regular model, a rock code
// along a row of blocks): its distinct values, in order of first
// appearance, and the chunk's values that are not null as runs of one
// index, written as RLE runs of the hybrid. A chunk is encoded so only
// when its runs average at least runDictMinRun values.
type runDict struct {
	values []uint64
	runs   []dictRun
	run    int   // the next run to write
	used   int32 // values of runs[run] written already
	// scratch of build: each run's value, and the values' indices
	keys  []uint64
	index map[uint64]int32
}

// dictRun is a run of n equal values of dictionary index at.
type dictRun struct {
	at, n int32
}

// runDictMinRun is the least mean run length of a run dictionary's chunk.
const runDictMinRun = 16

// build makes the run dictionary of an integer chunk (Ints, Uints or U32);
// false when its runs are too short or its distinct values too many. The runs
// are found in one pass, which stops once there are more than a chunk's
// share (the i of a query stops after a sixteenth of its rows); their
// indices are looked up a run at a time.
func (d *runDict) build(col *Column) bool {
	nulls := col.Null
	if len(nulls) != col.Len() || bytes.IndexByte(asBytes(nulls), 1) < 0 {
		nulls = nil // none null (Column.check keeps the lengths equal)
	}
	var ok bool
	switch {
	case col.Ints != nil:
		ok = findRuns(d, col.Ints, nulls)
	case col.U32 != nil:
		ok = findRuns(d, col.U32, nulls)
	default:
		ok = findRuns(d, col.Uints, nulls)
	}
	if !ok {
		return false
	}
	d.values = d.values[:0]
	if d.index == nil {
		d.index = make(map[uint64]int32)
	}
	clear(d.index)
	for i, v := range d.keys {
		at, ok := d.index[v]
		if !ok {
			if len(d.values) == dictMaxValues {
				return false
			}
			at = int32(len(d.values))
			d.index[v] = at
			d.values = append(d.values, v)
		}
		d.runs[i].at = at
	}
	return true
}

// findRuns records the runs of equal values of vals that are not null
// (nulls[r]; nil when none is) in d.runs and their values' bits in d.keys;
// false when there are none, or fewer than runDictMinRun values a run on
// average (given up as soon as that is certain).
func findRuns[T int64 | uint64 | uint32](d *runDict, vals []T, nulls []bool) bool {
	n := len(vals)
	if n < dictMinRows {
		return false
	}
	limit := n / runDictMinRun
	d.runs, d.run, d.used = d.runs[:0], 0, 0
	d.keys = d.keys[:0]
	for r := 0; r < n; {
		if nulls != nil && nulls[r] {
			r++
			continue
		}
		if len(d.runs) == limit {
			return false
		}
		v, k := vals[r], int32(1)
		if nulls == nil {
			start := r
			for r++; r < n && vals[r] == v; r++ {
			}
			k = int32(r - start)
		} else {
			for r++; r < n; r++ {
				if nulls[r] {
					continue
				}
				if vals[r] != v {
					break
				}
				k++
			}
		}
		d.runs = append(d.runs, dictRun{n: k})
		d.keys = append(d.keys, uint64(v))
	}
	return len(d.runs) > 0
}

func (d *runDict) dictValues() []uint64 { return d.values }

// appendIndices appends the next m indices as RLE_DICTIONARY data: the
// bit width, then an RLE run a run (split where a page ends), each index
// in the bytes its width needs.
func (d *runDict) appendIndices(b []byte, m int) []byte {
	w := max(1, bits.Len(uint(len(d.values)-1)))
	b = append(b, byte(w))
	size := (w + 7) / 8
	for m > 0 {
		run := d.runs[d.run]
		k := min(int(run.n-d.used), m)
		b = binary.AppendUvarint(b, uint64(k)<<1)
		for x := range size {
			b = append(b, byte(run.at>>(8*x)))
		}
		m -= k
		if d.used += int32(k); d.used == run.n {
			d.run, d.used = d.run+1, 0
		}
	}
	return b
}

// floatDict is the dictionary of a floating-point column chunk: its
// distinct values (bits, in order of first appearance) and, for each
// value of the chunk that is not null, its index.
type floatDict struct {
	values []uint64
	idx    []int32
	next   int // indices already written to pages
	// An open-addressing hash table of the values (linear probing): a
	// slot holds a value's index plus one, 0 when empty.
	table []int32
	shift uint
	zeros []bool  // no nulls, for chunks without flags
	remap []int32 // by code of a span's dictionary: its index plus one, 0 unseen
}

// dictMinRows is the least number of rows of a chunk worth a dictionary.
const dictMinRows = 1024

// dictMaxValues bounds a dictionary's values (indices of at most 16 bits).
const dictMaxValues = 1 << 16

// dictProbe is the number of a chunk's first values (not null) that, all
// distinct, make it PLAIN at once: full-precision estimates are given up
// after dictProbe values, not after a quarter of the chunk.
const dictProbe = 4096

// dictMinTable is the least size of floatDict's table (entries): a probe's
// values fit a quarter of it, so a table grows only for a dictionary.
const dictMinTable = 4 * dictProbe

// dictHash is the multiplier of floatDict's hash (Fibonacci hashing).
const dictHash = 0x9e3779b97f4a7c15

// build makes the dictionary of a floating-point chunk; false when it
// does not pay: more distinct values than a quarter of the chunk's values
// (or dictMaxValues), or its first dictProbe values all distinct, as
// full-precision estimates have. Float16 and Float32 values are keyed by
// their float32 bits. A chunk with codes (see Column) hashes one value a
// code of each span, not every value, and checks the other values of the
// code against it; codes that do not hold are dropped and every value is
// hashed. Either way the dictionary and indices are the same.
func (d *floatDict) build(col *Column) bool {
	n := len(col.Floats)
	if n < dictMinRows {
		return false
	}
	nulls := col.Null
	if len(nulls) != n {
		nulls = nil // Column.check keeps them equal
	}
	if nulls == nil {
		nulls = d.noNulls(n)
	}
	m, ok, valid := d.fill(col, nulls, col.coded())
	if !valid {
		m, ok, _ = d.fill(col, nulls, false)
	}
	d.idx = d.idx[:m]
	// a quarter of the values that are there, not of the rows: a chunk of
	// mostly nulls with distinct values is PLAIN
	return ok && len(d.values) > 0 && 4*len(d.values) <= m
}

// fill makes the dictionary and indices of the chunk from an empty one,
// by its code spans when withCodes; it returns the number of indices, ok
// false when the dictionary was given up, valid false when codes did not
// hold.
func (d *floatDict) fill(col *Column, nulls []bool, withCodes bool) (m int, ok, valid bool) {
	n := len(col.Floats)
	limit := min(dictMaxValues, n/4)
	d.next = 0
	d.idx = slices.Grow(d.idx[:0], n)[:n]
	// the table starts at the size the previous chunk's dictionary needed
	// (a failed one's, its limit's), within what this chunk's limit needs
	d.reset(max(dictMinTable, min(1<<bits.Len(uint(4*len(d.values))), 1<<bits.Len(uint(4*limit)))))
	d.values = d.values[:0]
	spans := []codeSpan{{}}
	if withCodes {
		spans = col.codeSpans
	}
	for i, sp := range spans {
		hi := n
		if i+1 < len(spans) {
			hi = spans[i+1].from
		}
		if sp.dict == nil {
			m, ok = d.hash(col, nulls, sp.from, hi, m, limit)
		} else if m, ok, valid = d.byCodes(col, nulls, sp, hi, m, limit); !valid {
			return m, false, false
		}
		if !ok {
			return m, false, true
		}
	}
	return m, true, true
}

// hash adds the values of rows [lo, hi) (not null) to the dictionary and
// their indices from idx[m]; it returns the new m, false when the
// dictionary is given up.
func (d *floatDict) hash(col *Column, nulls []bool, lo, hi, m, limit int) (int, bool) {
	wide := col.Type == blockmodel.Float64
	idx, table, shift, values := d.idx, d.table, d.shift, d.values
	mask := uint64(len(table) - 1)
	floats := col.Floats[lo:hi]
	nulls = nulls[lo:hi]
	nulls = nulls[:len(floats)]
	for r, f := range floats {
		if f != f || nulls[r] {
			continue
		}
		key := dictKey(f, wide)
		h := (key * dictHash) >> shift
		for {
			// h&mask < len(table), a power of two; a slot's index < len(values)
			slot := (*int32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(table)), uintptr(h&mask)*4))
			at := *slot
			if at != 0 && *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(values)), uintptr(at-1)*8)) == key {
				idx[m] = at - 1
				break
			}
			if at == 0 {
				d.values = values
				if !d.add(slot, key, m, limit) {
					return m, false
				}
				table, shift, values = d.table, d.shift, d.values
				mask = uint64(len(table) - 1)
				break
			}
			h++
		}
		m++
	}
	d.values = values
	return m, true
}

// dictKey is the key of a value in a dictionary: its bits, its float32
// bits when not wide (Float16 and Float32 columns).
func dictKey(f float64, wide bool) uint64 {
	if wide {
		return math.Float64bits(f)
	}
	return uint64(math.Float32bits(float32(f)))
}

// byCodes is hash for rows [sp.from, hi) coded by sp.dict: the first value
// of a code is looked up in the table (remap then holds its index plus
// one), the code's other values are checked against it. It returns valid
// false at the first row whose code does not hold.
func (d *floatDict) byCodes(col *Column, nulls []bool, sp codeSpan, hi, m, limit int) (_ int, ok, valid bool) {
	wide := col.Type == blockmodel.Float64
	if cap(d.remap) < sp.dict.size {
		d.remap = make([]int32, sp.dict.size)
	}
	remap := d.remap[:sp.dict.size]
	clear(remap)
	idx, values := d.idx, d.values
	floats, codes := col.Floats[sp.from:hi], col.codes[sp.from:hi]
	codes = codes[:len(floats)]
	nulls = nulls[sp.from:hi]
	nulls = nulls[:len(floats)]
	for r, f := range floats {
		if f != f || nulls[r] {
			continue
		}
		key := dictKey(f, wide)
		c := codes[r]
		if uint64(c) >= uint64(len(remap)) {
			return m, false, false
		}
		o := remap[c]
		switch {
		case o == 0:
			slot := d.slot(key)
			if o = *slot; o == 0 {
				if !d.add(slot, key, m, limit) {
					return m, false, true
				}
				values = d.values
				o = int32(len(values))
			}
			remap[c] = o
		case values[o-1] != key:
			return m, false, false
		}
		idx[m] = o - 1
		m++
	}
	return m, true, true
}

// slot returns the slot of the hash table holding key, or the empty one
// where it goes.
func (d *floatDict) slot(key uint64) *int32 {
	mask := uint64(len(d.table) - 1)
	for h := (key * dictHash) >> d.shift; ; h++ {
		if at := d.table[h&mask]; at == 0 || d.values[at-1] == key {
			return &d.table[h&mask]
		}
	}
}

// add makes key (absent) the next value of the dictionary, in slot, and
// the index of value m; false when the dictionary is given up: limit
// values already, or the first dictProbe values all distinct. It grows
// the table past a quarter full.
func (d *floatDict) add(slot *int32, key uint64, m, limit int) bool {
	if len(d.values) == limit {
		return false
	}
	d.values = append(d.values, key)
	*slot = int32(len(d.values))
	d.idx[m] = int32(len(d.values) - 1)
	if m+1 == dictProbe && len(d.values) == dictProbe {
		return false // the first dictProbe values all distinct
	}
	if 4*len(d.values) > len(d.table) { // at most a quarter full
		d.grow()
	}
	return true
}

// noNulls is n false flags, kept for the next chunk.
func (d *floatDict) noNulls(n int) []bool {
	if len(d.zeros) < n {
		d.zeros = make([]bool, n)
	}
	return d.zeros[:n]
}

// reset empties the hash table, sized for size slots (a power of two).
func (d *floatDict) reset(size int) {
	if cap(d.table) >= size {
		d.table = d.table[:size]
		clear(d.table)
	} else {
		d.table = make([]int32, size)
	}
	d.shift = uint(64 - bits.Len(uint(size-1)))
}

// grow doubles the hash table and re-inserts the values.
func (d *floatDict) grow() {
	d.reset(2 * len(d.table))
	mask := uint64(len(d.table) - 1)
	for i, key := range d.values {
		h := (key * dictHash) >> d.shift
		for d.table[h&mask] != 0 {
			h++
		}
		d.table[h&mask] = int32(i + 1)
	}
}

// appendIndices appends the next m indices as RLE_DICTIONARY data: the
// bit width, then one bit-packed run (the last group padded with zeros).
func (d *floatDict) appendIndices(b []byte, m int) []byte {
	w := max(1, bits.Len(uint(len(d.values)-1)))
	b = append(b, byte(w))
	if m == 0 {
		return b
	}
	idx := d.idx[d.next : d.next+m]
	d.next += m
	groups := (m + 7) / 8
	b = binary.AppendUvarint(b, uint64(groups)<<1|1)
	at := len(b)
	// A bit-packed run is the values' bits one after another, lowest bit
	// first, whole words stored as they fill (8 bytes of room past the
	// run for the last one); the last group's padding values are zeros.
	b = slices.Grow(b, groups*w+8)[:at+groups*w+8]
	out := b[at:]
	var acc uint64
	nb, o, uw := uint(0), 0, uint(w)
	for _, x := range idx {
		acc |= uint64(x) << nb
		nb += uw
		if nb >= 64 {
			binary.LittleEndian.PutUint64(out[o:], acc)
			o += 8
			nb -= 64
			acc = uint64(x) >> (uw - nb) // the bits that did not fit (none when nb is 0: x < 1<<w)
		}
	}
	binary.LittleEndian.PutUint64(out[o:], acc)
	return b[:at+groups*w]
}
