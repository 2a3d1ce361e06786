package bmstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/objects"
)

// storeRowGroup is the row group size of the store's column files (bounds
// the pages parquet-go buffers while writing to one row group).
const storeRowGroup = 1 << 20

var zstdCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// leaf returns the Parquet node of a data type, optional and zstd-compressed.
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
	return parquet.Compressed(parquet.Optional(n), zstdCodec), nil
}

func is32(t DataType) bool {
	switch t {
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32, blockmodel.Date32:
		return true
	}
	return false
}

// toValue converts row r of c to a Parquet value of column index col.
func toValue(c *Column, r, col int) parquet.Value {
	if c.IsNull(r) {
		return parquet.Value{}.Level(0, 0, col)
	}
	var v parquet.Value
	switch c.Type {
	case blockmodel.Boolean:
		v = parquet.BooleanValue(c.Bools[r])
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
		v = parquet.Int32Value(int32(c.Ints[r]))
	case blockmodel.Int64, blockmodel.Timestamp:
		v = parquet.Int64Value(c.Ints[r])
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
		v = parquet.Int32Value(int32(uint32(c.Uints[r])))
	case blockmodel.UInt64:
		v = parquet.Int64Value(int64(c.Uints[r]))
	case blockmodel.Float16, blockmodel.Float32:
		v = parquet.FloatValue(float32(c.Floats[r]))
	case blockmodel.Float64:
		v = parquet.DoubleValue(c.Floats[r])
	case blockmodel.Utf8:
		v = parquet.ByteArrayValue([]byte(c.Strings[r]))
	}
	return v.Level(0, 1, col)
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

// tableWriter writes batches of several named columns to one Parquet stream.
type tableWriter struct {
	pw      *parquet.Writer
	group   int
	inGroup int
	rows    int64
	buf     []parquet.Value
}

func newTableWriter(w io.Writer, names []string, types []DataType, group int) (*tableWriter, error) {
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
	pw := parquet.NewWriter(w, schema, parquet.Compression(zstdCodec), parquet.CreatedBy("geostat", "1", ""))
	return &tableWriter{pw: pw, group: group}, nil
}

// write appends a batch: cols in schema order, equal lengths.
func (tw *tableWriter) write(cols []*Column) error {
	n := cols[0].Len()
	for i := range cols {
		if cols[i].Len() != n {
			return fmt.Errorf("column %d has %d rows, column 0 has %d", i, cols[i].Len(), n)
		}
	}
	cws := tw.pw.ColumnWriters()
	for lo := 0; lo < n; {
		hi := min(n, lo+tw.group-tw.inGroup, lo+8192)
		for c, col := range cols {
			tw.buf = tw.buf[:0]
			if col.Type == blockmodel.Float64 && col.Null == nil {
				// Fast path of the common type.
				for _, f := range col.Floats[lo:hi] {
					if f != f {
						tw.buf = append(tw.buf, parquet.Value{}.Level(0, 0, c))
					} else {
						tw.buf = append(tw.buf, parquet.DoubleValue(f).Level(0, 1, c))
					}
				}
			} else {
				for r := lo; r < hi; r++ {
					tw.buf = append(tw.buf, toValue(col, r, c))
				}
			}
			if _, err := cws[c].WriteRowValues(tw.buf); err != nil {
				return fmt.Errorf("parquet write: %w", err)
			}
		}
		tw.inGroup += hi - lo
		tw.rows += int64(hi - lo)
		lo = hi
		if tw.inGroup == tw.group {
			if err := tw.pw.Flush(); err != nil {
				return fmt.Errorf("parquet flush: %w", err)
			}
			tw.inGroup = 0
		}
	}
	return nil
}

func (tw *tableWriter) close() error {
	if err := tw.pw.Close(); err != nil {
		return fmt.Errorf("parquet close: %w", err)
	}
	return nil
}

// colReader streams one column file's values in row order.
type colReader struct {
	f      *os.File
	pf     *parquet.File
	typ    DataType
	rg     int
	pages  parquet.Pages
	values parquet.ValueReader
	page   parquet.Page
	buf    []parquet.Value
	pos    int // next unread index in buf
}

func openColReader(path string, t DataType) (*colReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open column file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open column file %s: %w", path, err)
	}
	return &colReader{f: f, pf: pf, typ: t, buf: make([]parquet.Value, 0, 8192)}, nil
}

// read appends up to n values to dst; it returns the number appended (less
// than n only at the end of the file).
func (r *colReader) read(dst *Column, n int) (int, error) {
	got := 0
	for got < n {
		if r.pos < len(r.buf) {
			k := min(n-got, len(r.buf)-r.pos)
			if dst.Type == blockmodel.Float64 {
				// Fast path of the common type.
				for _, v := range r.buf[r.pos : r.pos+k] {
					null := v.IsNull()
					f := math.NaN()
					if !null {
						f = v.Double()
					}
					dst.Floats = append(dst.Floats, f)
					dst.Null = append(dst.Null, null)
				}
			} else {
				for _, v := range r.buf[r.pos : r.pos+k] {
					appendValue(dst, v)
				}
			}
			r.pos += k
			got += k
			continue
		}
		if err := r.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return got, nil
			}
			return got, err
		}
	}
	return got, nil
}

func (r *colReader) fill() error {
	for {
		if r.values != nil {
			k, err := r.values.ReadValues(r.buf[:cap(r.buf)])
			r.buf, r.pos = r.buf[:k], 0
			if k > 0 {
				return nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read column values: %w", err)
			}
			parquet.Release(r.page)
			r.values, r.page = nil, nil
		}
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
		r.page, r.values = p, p.Values()
	}
}

func (r *colReader) close() error {
	if r.pages != nil {
		r.pages.Close()
	}
	return r.f.Close()
}
