package bmstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// StoreRowGroup is the number of rows of a row group of the store's column
// files: a batch of that many rows, at a row group's start, can be lent to
// a ColumnWriter instead of copied (ColumnWriter.WriteLent).
const StoreRowGroup = 1 << 18

// storeRowGroup is StoreRowGroup, the row group size of the store's column
// files. It bounds the rows a tableWriter holds (a row group being filled
// and the row groups being encoded).
const storeRowGroup = StoreRowGroup

// valueChunk is the number of parquet.Values a colReader reads at a time
// from a page without a typed view.
const valueChunk = 8192

// leaf returns the Parquet node of a data type, optional.
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
	return parquet.Optional(n), nil
}

// colReader streams one column file's values in row order. A column chunk
// of the layout the store writes is decoded by fast (pqpage.go); any other
// is read through parquet-go's pages, as typed slices (page.Data()) with
// their definition levels, so a value costs a slice copy, not a
// parquet.Value; a page without a typed view is read value by value.
type colReader struct {
	f      *os.File
	pf     *parquet.File
	typ    DataType
	maxDef byte
	rg     int
	// fast decodes the chunks of the store's own layout (nil when the
	// file's column is not an OPTIONAL one of maximum definition level
	// 1); inFast: the current chunk is fast's. fastChunks and pqChunks
	// count the chunks read each way.
	fast       *chunkReader
	inFast     bool
	fastChunks int
	pqChunks   int
	pages      parquet.Pages
	page       parquet.Page
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
	// mat64, mat32 hold the values of a dictionary-encoded page.
	mat64 []float64
	mat32 []float32
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
	r := &colReader{f: f, pf: pf, typ: t, maxDef: byte(cols[0].MaxDefinitionLevel())}
	if r.maxDef == 1 {
		r.fast = newChunkReader(f, st.Size(), t)
	}
	return r, nil
}

// physical is the kind of the page data of a data type's values:
// parquet-go's encoding.Kind numbers the physical types as format.Type
// does, one up (0 is Undefined; TestPhysicalKinds).
func physical(t DataType) encoding.Kind {
	return encoding.Kind(formatType(t)) + 1
}

// read appends up to n values to dst; it returns the number appended (less
// than n only at the end of the file).
func (r *colReader) read(dst *Column, n int) (int, error) {
	got := 0
	for got < n {
		if r.inFast {
			k, err := r.fast.read(dst, n-got)
			got += k
			if err != nil {
				return got, fmt.Errorf("read column file %s, row group %d: %w", r.f.Name(), r.rg-1, err)
			}
			r.inFast = !r.fast.done()
			continue
		}
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
		if r.inFast {
			k, err := r.fast.skip(n)
			n -= k
			if err != nil {
				return fmt.Errorf("read column file %s, row group %d: %w", r.f.Name(), r.rg-1, err)
			}
			r.inFast = !r.fast.done()
			continue
		}
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

// nextPage makes the next page with rows current (io.EOF at the end), or
// the next chunk fast's (inFast).
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
			if ok, err := r.openFast(); ok || err != nil {
				return err
			}
			r.pqChunks++
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

// openFast makes the next row group's chunk fast's when it has the
// store's layout (true); false leaves it to parquet-go.
func (r *colReader) openFast() (bool, error) {
	if r.fast == nil {
		return false, nil
	}
	rgs := r.pf.Metadata().RowGroups
	if r.rg >= len(rgs) || len(rgs[r.rg].Columns) != 1 {
		return false, nil
	}
	err := r.fast.open(&rgs[r.rg].Columns[0], rgs[r.rg].NumRows)
	if errors.Is(err, errUnsupported) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read column file %s, row group %d: %w", r.f.Name(), r.rg, err)
	}
	r.rg++
	r.fastChunks++
	r.inFast = true
	return true, nil
}

// typed sets the typed view of page p; false if it has none.
func (r *colReader) typed(p parquet.Page) bool {
	data := p.Data()
	if dict := p.Dictionary(); dict != nil {
		var ok bool
		if data, ok = r.undict(data, dict); !ok {
			return false
		}
	}
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

// undict turns the indices of a dictionary-encoded page of floating-point
// values into the values (the store writes dictionaries of floats only);
// ok false for other types or an index out of the dictionary.
func (r *colReader) undict(data encoding.Values, dict parquet.Dictionary) (encoding.Values, bool) {
	if data.Kind() != encoding.Int32 {
		return data, false
	}
	idx := data.Int32()
	dv := dict.Page().Data()
	switch {
	case r.typ == blockmodel.Float64 && dv.Kind() == encoding.Double:
		r.mat64 = gather(r.mat64[:0], dv.Double(), idx)
		return encoding.DoubleValues(r.mat64), r.mat64 != nil || len(idx) == 0
	case (r.typ == blockmodel.Float32 || r.typ == blockmodel.Float16) && dv.Kind() == encoding.Float:
		r.mat32 = gather(r.mat32[:0], dv.Float(), idx)
		return encoding.FloatValues(r.mat32), r.mat32 != nil || len(idx) == 0
	}
	return data, false
}

// gather appends dict[i] for each index i to dst; nil if an index is out
// of the dictionary.
func gather[T any](dst, dict []T, idx []int32) []T {
	dst = slices.Grow(dst, len(idx))
	for _, i := range idx {
		if uint32(i) >= uint32(len(dict)) {
			return nil
		}
		dst = append(dst, dict[i])
	}
	return dst
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
		dst.Floats = spread(dst.Floats, r.data.Double(), &r.val, levels, k, r.maxDef, math.NaN())
	case blockmodel.Float16, blockmodel.Float32:
		dst.Floats = spread(dst.Floats, r.data.Float(), &r.val, levels, k, r.maxDef, math.NaN())
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		dst.Ints = spread(dst.Ints, r.data.Int32(), &r.val, levels, k, r.maxDef, 0)
	case blockmodel.Int64, blockmodel.Timestamp:
		dst.Ints = spread(dst.Ints, r.data.Int64(), &r.val, levels, k, r.maxDef, 0)
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		dst.Uints = spread(dst.Uints, r.data.Uint32(), &r.val, levels, k, r.maxDef, 0)
	case blockmodel.UInt64:
		dst.Uints = spread(dst.Uints, r.data.Uint64(), &r.val, levels, k, r.maxDef, 0)
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
// (one a row), a row whose level is below maxDef gets null; values are
// converted to D (widened).
func spread[S int32 | uint32 | int64 | uint64 | float32 | float64, D int64 | uint64 | float64](dst []D, src []S, val *int, levels []byte, k int, maxDef byte, null D) []D {
	at := len(dst)
	dst = slices.Grow(dst, k)[:at+k]
	out := dst[at:]
	v := *val
	if levels == nil {
		for i, x := range src[v : v+k] {
			out[i] = D(x)
		}
		*val = v + k
		return dst
	}
	for i, l := range levels[:k] {
		if l == maxDef {
			out[i] = D(src[v])
			v++
		} else {
			out[i] = null
		}
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
