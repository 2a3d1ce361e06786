package bmstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/objects"
)

// storeRowGroup is the row group size of the store's column files. It
// bounds the rows a tableWriter holds (a row group being filled and
// encodeWorkers being encoded) and the pages parquet-go buffers per row
// group.
const storeRowGroup = 1 << 18

// pageCodec is the codec of the pages of the store's column files and of
// query outputs: Snappy, encoded by s2's fast Snappy encoder (pageSnappy).
// On a page of grades with three decimals (256 KiB) it encodes at about
// twice zstd SpeedFastest's speed (460 against 210 MB/s on one core) for
// pages 0.49 of raw against 0.34; decoding is as fast. Snappy is Parquet's
// most widely read codec (pyarrow's default).
var pageCodec compress.Codec = &pageSnappy{}

// leaf returns the Parquet node of a data type, optional and compressed
// with pageCodec.
func leaf(t DataType) (parquet.Node, error) {
	var n parquet.Node
	switch t {
	case blockmodel.Boolean:
		n = parquet.Leaf(parquet.BooleanType)
	case blockmodel.Int8:
		n = parquet.Int(8)
	case blockmodel.Int16:
		n = parquet.Int(16)
	case blockmodel.Int32:
		n = parquet.Int(32)
	case blockmodel.Int64:
		n = parquet.Int(64)
	case blockmodel.UInt8:
		n = parquet.Uint(8)
	case blockmodel.UInt16:
		n = parquet.Uint(16)
	case blockmodel.UInt32:
		n = parquet.Uint(32)
	case blockmodel.UInt64:
		n = parquet.Uint(64)
	case blockmodel.Float16, blockmodel.Float32:
		n = parquet.Leaf(parquet.FloatType)
	case blockmodel.Float64:
		n = parquet.Leaf(parquet.DoubleType)
	case blockmodel.Utf8:
		n = parquet.String()
	case blockmodel.Date32:
		n = parquet.Date()
	case blockmodel.Timestamp:
		n = parquet.Timestamp(parquet.Microsecond)
	default:
		return nil, fmt.Errorf("unknown data type %q", string(t))
	}
	return parquet.Compressed(parquet.Optional(n), pageCodec), nil
}

// encodeWorkers bounds the row groups of one tableWriter encoded at once.
const encodeWorkers = 2

// valueChunk is the number of parquet.Values built per column write.
const valueChunk = 8192

// slotBudget bounds the bytes of rows a tableWriter copies for its row
// groups in flight. A table whose row groups are too wide for two slots
// (a query of many columns) is written directly from the caller's batches,
// one row group at a time, as parquet-go buffers it.
const slotBudget = 64 << 20

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

// tableWriter writes batches of several named columns to one Parquet stream.
//
// Rows are copied (typed, in bulk) into the current row group's columns;
// a full row group is handed to a goroutine that builds its Parquet values
// and encodes and compresses its pages on a parquet.ConcurrentRowGroupWriter
// while the caller fills the next one. Row groups are committed in order,
// so the bytes do not depend on the schedule. At most encodeWorkers row
// groups are encoded at once while the caller fills one more, which bounds
// memory to encodeWorkers+1 row groups, and to slotBudget: a table whose row
// groups are wider is written directly, batch by batch, to one row group
// writer.
type tableWriter struct {
	pw    *parquet.Writer
	types []DataType
	group int
	// rowsHint, when positive, is the number of rows the caller will
	// write (sizes the buffers of a small table).
	rowsHint int64
	// free holds idle slots (a row group writer and its column buffers),
	// up to encodeWorkers+1 of them; a slot is taken to fill a row group
	// and returned after its commit.
	free chan *groupSlot
	slot *groupSlot
	// direct, for a table too wide for two slots, writes batches straight
	// to one row group writer (no copy, no goroutine); inGroup counts its
	// rows.
	direct  *parquet.ConcurrentRowGroupWriter
	inGroup int
	buf     []parquet.Value
	// prev receives the outcome of the previously dispatched row group
	// once it is committed (nil before the first).
	prev chan error
	err  error
	// failed holds the first error of an encoding goroutine, so that the
	// next write fails at once.
	failed atomic.Pointer[error]
}

// groupSlot is the state of one row group in flight.
type groupSlot struct {
	rg   *parquet.ConcurrentRowGroupWriter
	cols []Column
	buf  []parquet.Value
}

// newTableWriter starts a Parquet stream of the named columns with row
// groups of group rows; opts are further parquet-go writer options.
func newTableWriter(w io.Writer, names []string, types []DataType, group int, opts ...parquet.WriterOption) (*tableWriter, error) {
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
	schema := objects.OrderedSchema(g, names)
	opts = append([]parquet.WriterOption{schema, parquet.Compression(pageCodec), parquet.CreatedBy("geostat", "1", "")}, opts...)
	pw := parquet.NewWriter(w, opts...)
	tw := &tableWriter{pw: pw, types: types, group: group}
	slots := min(encodeWorkers+1, slotBudget/max(1, group*rowBytes(types)))
	if slots < 2 {
		tw.direct = pw.BeginRowGroup()
		return tw, nil
	}
	tw.free = make(chan *groupSlot, slots)
	for range slots {
		tw.free <- nil // slots are made on first use
	}
	return tw, nil
}

// writeDirect writes a batch straight to the row group writer, committing
// each full row group.
func (tw *tableWriter) writeDirect(cols []*Column, n int) error {
	cws := tw.direct.ColumnWriters()
	for lo := 0; lo < n; {
		hi := min(n, lo+tw.group-tw.inGroup)
		for c, col := range cols {
			for a := lo; a < hi; a += valueChunk {
				b := min(hi, a+valueChunk)
				tw.buf = appendValues(tw.buf[:0], col, a, b, c)
				if _, err := cws[c].WriteRowValues(tw.buf); err != nil {
					tw.err = fmt.Errorf("parquet write: %w", err)
					return tw.err
				}
			}
		}
		tw.inGroup += hi - lo
		lo = hi
		if tw.inGroup == tw.group {
			if err := tw.commitDirect(); err != nil {
				return err
			}
		}
	}
	return nil
}

// commitDirect writes the direct row group to the file.
func (tw *tableWriter) commitDirect() error {
	if err := tw.direct.Flush(); err != nil {
		tw.err = fmt.Errorf("parquet flush: %w", err)
		return tw.err
	}
	if _, err := tw.direct.Commit(); err != nil {
		tw.err = fmt.Errorf("parquet commit: %w", err)
		return tw.err
	}
	tw.inGroup = 0
	return nil
}

// take makes the next slot current, waiting for one to be free.
func (tw *tableWriter) take() {
	s := <-tw.free
	if s == nil {
		s = &groupSlot{rg: tw.pw.BeginRowGroup(), buf: make([]parquet.Value, 0, valueChunk)}
		for _, t := range tw.types {
			size := tw.group
			if tw.rowsHint > 0 {
				size = int(min(int64(size), tw.rowsHint))
			}
			s.cols = append(s.cols, newColumn(t, size))
		}
	}
	for i := range s.cols {
		s.cols[i].reset()
	}
	tw.slot = s
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
	if tw.direct != nil {
		return tw.writeDirect(cols, n)
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
			tw.dispatch()
		}
		lo = hi
	}
	return nil
}

// dispatch hands the current row group to an encoding goroutine.
func (tw *tableWriter) dispatch() {
	s, prev, done := tw.slot, tw.prev, make(chan error, 1)
	tw.slot, tw.prev = nil, done
	go func() {
		err := geostat.Catch(s.encode) // a panic fails the write, never the process
		if prev != nil {
			if perr := <-prev; perr != nil && err == nil {
				err = perr
			}
		}
		if err == nil {
			err = geostat.Catch(func() error {
				if _, cerr := s.rg.Commit(); cerr != nil {
					return fmt.Errorf("parquet commit: %w", cerr)
				}
				return nil
			})
		}
		if err != nil {
			tw.failed.CompareAndSwap(nil, &err)
		}
		done <- err
		tw.free <- s
	}()
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

func (tw *tableWriter) close() error {
	if tw.direct != nil && tw.err == nil && tw.inGroup > 0 {
		if err := tw.commitDirect(); err != nil {
			return err
		}
	}
	if tw.slot != nil && tw.slot.cols[0].Len() > 0 {
		tw.dispatch()
	}
	if err := tw.wait(); err != nil {
		return err
	}
	if err := tw.pw.Close(); err != nil {
		return fmt.Errorf("parquet close: %w", err)
	}
	return nil
}

// discard waits for the row groups in flight and drops the stream.
func (tw *tableWriter) discard() {
	tw.slot = nil
	tw.wait()
}

// encode writes the slot's rows to its row group writer, column by column.
func (s *groupSlot) encode() error {
	cws := s.rg.ColumnWriters()
	for c := range s.cols {
		col := &s.cols[c]
		n := col.Len()
		for lo := 0; lo < n; lo += valueChunk {
			hi := min(n, lo+valueChunk)
			s.buf = appendValues(s.buf[:0], col, lo, hi, c)
			if _, err := cws[c].WriteRowValues(s.buf); err != nil {
				return fmt.Errorf("parquet write: %w", err)
			}
		}
	}
	if err := s.rg.Flush(); err != nil {
		return fmt.Errorf("parquet flush: %w", err)
	}
	return nil
}

// appendValues appends the Parquet values of rows [lo, hi) of c, column
// index col, to buf: a null (Null flag, NaN) has definition level 0. Each
// value is built and levelled in one pass over the rows (a second pass over
// the 24-byte values cost as much as building them); the levels are set in
// place (Value.Level copies the value and does not inline).
func appendValues(buf []parquet.Value, c *Column, lo, hi, col int) []parquet.Value {
	null := parquet.Value{}.Level(0, 0, col)
	var nulls []bool
	if c.Null != nil {
		nulls = c.Null[lo:hi]
		if !slices.Contains(nulls, true) {
			nulls = nil
		}
	}
	at := len(buf)
	buf = slices.Grow(buf, hi-lo)[:at+hi-lo]
	out := buf[at:]
	switch c.Type {
	case blockmodel.Float64:
		for i, f := range c.Floats[lo:hi] {
			v := parquet.DoubleValue(f)
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
			if f != f {
				out[i] = null
			}
		}
	case blockmodel.Float16, blockmodel.Float32:
		for i, f := range c.Floats[lo:hi] {
			v := parquet.FloatValue(float32(f))
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
			if f != f {
				out[i] = null
			}
		}
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		for i, x := range c.Ints[lo:hi] {
			v := parquet.Int32Value(int32(x))
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	case blockmodel.Int64, blockmodel.Timestamp:
		for i, x := range c.Ints[lo:hi] {
			v := parquet.Int64Value(x)
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		for i, x := range c.Uints[lo:hi] {
			v := parquet.Int32Value(int32(uint32(x)))
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	case blockmodel.UInt64:
		for i, x := range c.Uints[lo:hi] {
			v := parquet.Int64Value(int64(x))
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	case blockmodel.Boolean:
		for i, x := range c.Bools[lo:hi] {
			v := parquet.BooleanValue(x)
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	case blockmodel.Utf8:
		for i, x := range c.Strings[lo:hi] {
			v := parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(x), len(x)))
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(col)
			out[i] = v
		}
	}
	for i, n := range nulls {
		if n {
			out[i] = null
		}
	}
	return buf
}

// colReader streams one column file's values in row order. Pages are read
// as typed slices (page.Data()) with their definition levels, so a value
// costs a slice copy, not a parquet.Value; a page whose data is not plain
// (a dictionary page, or a file of another layout) is read value by value.
type colReader struct {
	f      *os.File
	pf     *parquet.File
	typ    DataType
	maxDef byte
	rg     int
	pages  parquet.Pages
	page   parquet.Page
	// The current page: rows, next row, definition levels (nil: every
	// row has a value), its values and the next value index.
	rows   int
	row    int
	levels []byte
	data   encoding.Values
	val    int
	// values reads the current page value by value when it has no typed
	// view; buf holds values read.
	values parquet.ValueReader
	buf    []parquet.Value
}

func openColReader(path string, t DataType) (*colReader, error) {
	if _, err := kindOf(t); err != nil {
		return nil, fmt.Errorf("open column file %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open column file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open column file %s: %w", path, err)
	}
	cols := pf.Root().Columns()
	if len(cols) != 1 || len(cols[0].Columns()) != 0 || cols[0].MaxRepetitionLevel() != 0 {
		f.Close()
		return nil, fmt.Errorf("open column file %s: not a file of one flat column", path)
	}
	return &colReader{f: f, pf: pf, typ: t, maxDef: byte(cols[0].MaxDefinitionLevel())}, nil
}

// physical is the kind of the page data of a data type's values.
func physical(t DataType) encoding.Kind {
	switch t {
	case blockmodel.Boolean:
		return encoding.Boolean
	case blockmodel.Int64, blockmodel.Timestamp, blockmodel.UInt64:
		return encoding.Int64
	case blockmodel.Float16, blockmodel.Float32:
		return encoding.Float
	case blockmodel.Float64:
		return encoding.Double
	case blockmodel.Utf8:
		return encoding.ByteArray
	}
	return encoding.Int32
}

// read appends up to n values to dst; it returns the number appended (less
// than n only at the end of the file).
func (r *colReader) read(dst *Column, n int) (int, error) {
	got := 0
	for got < n {
		if r.row == r.rows {
			if err := r.nextPage(); err != nil {
				if errors.Is(err, io.EOF) {
					return got, nil
				}
				return got, err
			}
			continue
		}
		k := min(n-got, r.rows-r.row)
		if r.values != nil {
			if err := r.readValues(dst, k); err != nil {
				return got, err
			}
		} else {
			r.readTyped(dst, k)
		}
		r.row += k
		got += k
	}
	return got, nil
}

// skip moves n rows forward without decoding values where it can: whole
// row groups are skipped from their metadata.
func (r *colReader) skip(n int64) error {
	for n > 0 {
		if r.pages == nil && r.row == r.rows {
			rgs := r.pf.RowGroups()
			if r.rg < len(rgs) && rgs[r.rg].NumRows() <= n {
				n -= rgs[r.rg].NumRows()
				r.rg++
				continue
			}
		}
		if r.row == r.rows {
			if err := r.nextPage(); err != nil {
				if errors.Is(err, io.EOF) {
					return fmt.Errorf("read column: file ended %d rows early", n)
				}
				return err
			}
			continue
		}
		k := int(min(n, int64(r.rows-r.row)))
		if r.values != nil {
			tmp := newColumn(r.typ, 0)
			if err := r.readValues(&tmp, k); err != nil {
				return err
			}
		} else {
			present := k
			if r.levels != nil {
				present = 0
				for _, l := range r.levels[r.row : r.row+k] {
					if l == r.maxDef {
						present++
					}
				}
			}
			r.val += present
		}
		r.row += k
		n -= int64(k)
	}
	return nil
}

// nextPage makes the next page with rows current (io.EOF at the end).
func (r *colReader) nextPage() error {
	if r.page != nil {
		parquet.Release(r.page)
		r.page = nil
	}
	r.values, r.levels, r.rows, r.row, r.val = nil, nil, 0, 0, 0
	for {
		if r.pages == nil {
			rgs := r.pf.RowGroups()
			if r.rg >= len(rgs) {
				return io.EOF
			}
			r.pages = rgs[r.rg].ColumnChunks()[0].Pages()
			r.rg++
		}
		p, err := r.pages.ReadPage()
		if err != nil {
			r.pages.Close()
			r.pages = nil
			if errors.Is(err, io.EOF) {
				continue
			}
			return fmt.Errorf("read column page: %w", err)
		}
		if p.NumValues() == 0 {
			parquet.Release(p)
			continue
		}
		r.page, r.rows = p, int(p.NumValues())
		if r.maxDef > 1 || !r.typed(p) {
			r.values = p.Values()
		}
		return nil
	}
}

// typed sets the typed view of page p; false if it has none.
func (r *colReader) typed(p parquet.Page) bool {
	if p.Dictionary() != nil {
		return false
	}
	data := p.Data()
	if data.Kind() != physical(r.typ) {
		return false
	}
	levels := p.DefinitionLevels()
	present := r.rows
	if r.maxDef == 1 {
		if len(levels) != r.rows {
			return false
		}
		present -= int(p.NumNulls())
	} else if len(levels) != 0 {
		return false
	}
	var have int
	switch data.Kind() {
	case encoding.Boolean:
		have = len(data.Boolean()) * 8
		if have < present || have >= present+8 {
			return false
		}
		have = present
	case encoding.Int32:
		have = len(data.Int32())
	case encoding.Int64:
		have = len(data.Int64())
	case encoding.Float:
		have = len(data.Float())
	case encoding.Double:
		have = len(data.Double())
	case encoding.ByteArray:
		_, offsets := data.ByteArray()
		have = len(offsets) - 1
	}
	if have != present {
		return false
	}
	if present == r.rows {
		levels = nil
	}
	r.data, r.levels = data, levels
	return true
}

// readTyped appends the next k rows of the current page from its typed
// view.
func (r *colReader) readTyped(dst *Column, k int) {
	var levels []byte
	if r.levels != nil {
		levels = r.levels[r.row : r.row+k]
	}
	at := len(dst.Null)
	dst.Null = slices.Grow(dst.Null, k)[:at+k]
	nulls := dst.Null[at:]
	if levels == nil {
		clear(nulls)
	} else {
		for i, l := range levels {
			nulls[i] = l != r.maxDef
		}
	}
	if levels == nil {
		// Every row has a value: copy the page's slice.
		v := r.val
		r.val += k
		switch r.typ {
		case blockmodel.Float64:
			dst.Floats = append(dst.Floats, r.data.Double()[v:v+k]...)
			return
		case blockmodel.Int64, blockmodel.Timestamp:
			dst.Ints = append(dst.Ints, r.data.Int64()[v:v+k]...)
			return
		case blockmodel.UInt64:
			dst.Uints = append(dst.Uints, r.data.Uint64()[v:v+k]...)
			return
		}
		r.val = v
	}
	switch r.typ {
	case blockmodel.Float64:
		dst.Floats = spread(dst.Floats, r.data.Double(), &r.val, levels, k, r.maxDef, math.NaN(), func(x float64) float64 { return x })
	case blockmodel.Float16, blockmodel.Float32:
		dst.Floats = spread(dst.Floats, r.data.Float(), &r.val, levels, k, r.maxDef, math.NaN(), func(x float32) float64 { return float64(x) })
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		dst.Ints = spread(dst.Ints, r.data.Int32(), &r.val, levels, k, r.maxDef, 0, func(x int32) int64 { return int64(x) })
	case blockmodel.Int64, blockmodel.Timestamp:
		dst.Ints = spread(dst.Ints, r.data.Int64(), &r.val, levels, k, r.maxDef, 0, func(x int64) int64 { return x })
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		dst.Uints = spread(dst.Uints, r.data.Uint32(), &r.val, levels, k, r.maxDef, 0, func(x uint32) uint64 { return uint64(x) })
	case blockmodel.UInt64:
		dst.Uints = spread(dst.Uints, r.data.Uint64(), &r.val, levels, k, r.maxDef, 0, func(x uint64) uint64 { return x })
	case blockmodel.Boolean:
		bits := r.data.Boolean()
		for i := range k {
			if levels != nil && levels[i] != r.maxDef {
				dst.Bools = append(dst.Bools, false)
				continue
			}
			dst.Bools = append(dst.Bools, bits[r.val>>3]>>(r.val&7)&1 != 0)
			r.val++
		}
	case blockmodel.Utf8:
		data, offsets := r.data.ByteArray()
		for i := range k {
			if levels != nil && levels[i] != r.maxDef {
				dst.Strings = append(dst.Strings, "")
				continue
			}
			dst.Strings = append(dst.Strings, string(data[offsets[r.val]:offsets[r.val+1]]))
			r.val++
		}
	}
}

// spread appends k rows of values from src at *val to dst: with levels
// (one a row), a row whose level is below maxDef gets null; conv widens a
// value.
func spread[S, D any](dst []D, src []S, val *int, levels []byte, k int, maxDef byte, null D, conv func(S) D) []D {
	v := *val
	if levels == nil {
		for _, x := range src[v : v+k] {
			dst = append(dst, conv(x))
		}
		*val = v + k
		return dst
	}
	for _, l := range levels {
		if l != maxDef {
			dst = append(dst, null)
			continue
		}
		dst = append(dst, conv(src[v]))
		v++
	}
	*val = v
	return dst
}

// readValues appends k rows of the current page value by value.
func (r *colReader) readValues(dst *Column, k int) error {
	if cap(r.buf) == 0 {
		r.buf = make([]parquet.Value, valueChunk)
	}
	for k > 0 {
		m, err := r.values.ReadValues(r.buf[:min(k, len(r.buf))])
		for _, v := range r.buf[:m] {
			appendValue(dst, v)
		}
		k -= m
		if k > 0 && m == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read column values: %w", err)
		}
	}
	return nil
}

// appendValue appends a Parquet value to c.
func appendValue(c *Column, v parquet.Value) {
	if v.IsNull() {
		c.appendNull()
		return
	}
	c.Null = append(c.Null, false)
	switch c.Type {
	case blockmodel.Boolean:
		c.Bools = append(c.Bools, v.Boolean())
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		c.Ints = append(c.Ints, int64(v.Int32()))
	case blockmodel.Int64, blockmodel.Timestamp:
		c.Ints = append(c.Ints, v.Int64())
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		c.Uints = append(c.Uints, uint64(v.Uint32()))
	case blockmodel.UInt64:
		c.Uints = append(c.Uints, v.Uint64())
	case blockmodel.Float16, blockmodel.Float32:
		c.Floats = append(c.Floats, float64(v.Float()))
	case blockmodel.Float64:
		c.Floats = append(c.Floats, v.Double())
	case blockmodel.Utf8:
		c.Strings = append(c.Strings, string(v.ByteArray()))
	}
}

func (r *colReader) close() error {
	if r.page != nil {
		parquet.Release(r.page)
		r.page = nil
	}
	if r.pages != nil {
		r.pages.Close()
	}
	return r.f.Close()
}
