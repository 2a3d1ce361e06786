package objects

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Compression selects the codec of written Parquet files.
type Compression string

// Supported write codecs. Readers also accept gzip and uncompressed files.
const (
	Zstd   Compression = "zstd"
	Snappy Compression = "snappy"
)

// Row group sizes of written files. The issue asks for row groups of 64k to
// 128k rows: large enough for good compression, small enough that a streaming
// writer holds only one group per column in memory.
const (
	MinRowGroupRows     = 64 * 1024
	DefaultRowGroupRows = 128 * 1024
)

// zstdCodec is the zstd codec of every TableWriter. A codec keeps a pool of
// encoders (each holds match tables and a history buffer); one codec per
// writer made every small table (a task writes one per output column)
// allocate fresh encoders. Encoders are reset for each page, so the bytes
// written do not depend on the pool; it is safe for concurrent use. Its
// window is smaller than parquet-go's codec's, with the same bytes
// (pageZstd).
var zstdCodec = &pageZstd{Codec: zstd.Codec{Level: zstd.SpeedDefault}}

// WriteOptions configures a TableWriter. The zero value means zstd and
// DefaultRowGroupRows.
type WriteOptions struct {
	Compression Compression
	// RowGroupRows is the number of rows per row group (all but the last).
	// Values outside [MinRowGroupRows, DefaultRowGroupRows] are accepted so
	// tests can exercise several row groups cheaply.
	RowGroupRows int
}

// Blob describes a finished Parquet file: its key (lowercase hex SHA-256 of the
// file bytes, docs/objects.md 3), its size in bytes and its row count.
type Blob struct {
	Key  string
	Size int64
	Rows int64
}

// TableWriter streams rows into a Parquet file, one row group at a time, so a
// large ensemble can be written tile by tile while memory stays near one row
// group per column. Columns are REQUIRED (no nulls; float64 no-data is NaN) and
// plain encoded. Output is deterministic: the same rows give the same bytes.
type TableWriter struct {
	pw       *parquet.Writer
	out      *countingHasher
	types    []DataType
	groupCap int
	inGroup  int
	rows     int64
	bufs     [][]parquet.Value // value buffers, one per worker
	closed   bool
	err      error
	block    *columnBlock // rows being written column by column (parquet_columns.go)
}

// countingHasher forwards writes to w while hashing and counting them.
type countingHasher struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingHasher) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// OrderedSchema is the Parquet schema of group with its columns in the
// order of names (parquet.Group sorts its fields by name; a file's column
// order is the caller's).
func OrderedSchema(group parquet.Group, names []string) *parquet.Schema {
	return parquet.NewSchema("schema", orderedGroup{Group: group, order: slices.Clone(names)})
}

// orderedGroup is a Parquet group node whose fields keep the given order
// (parquet.Group sorts fields by name, but column order is normative).
type orderedGroup struct {
	parquet.Group
	order []string
}

func (g orderedGroup) Fields() []parquet.Field {
	fields := g.Group.Fields()
	rank := make(map[string]int, len(g.order))
	for i, n := range g.order {
		rank[n] = i
	}
	slices.SortStableFunc(fields, func(a, b parquet.Field) int { return rank[a.Name()] - rank[b.Name()] })
	return fields
}

// leafNode returns the Parquet node of a REQUIRED column of type t, annotated
// as docs/objects.md 3 requires (uint64 as INT(64, unsigned), string as UTF8).
func leafNode(t DataType) (parquet.Node, error) {
	switch t {
	case TypeFloat64:
		return parquet.Leaf(parquet.DoubleType), nil
	case TypeBool:
		return parquet.Leaf(parquet.BooleanType), nil
	case TypeInt32:
		return parquet.Int(32), nil
	case TypeInt64:
		return parquet.Int(64), nil
	case TypeUint64:
		return parquet.Uint(64), nil
	case TypeString:
		return parquet.String(), nil
	}
	return nil, fmt.Errorf("unsupported data type %q", t)
}

// NewTableWriter starts a Parquet file on w with one column per entry of types,
// named by names (nil: "c0", "c1", ...). Names must be unique; they carry no
// meaning for readers.
func NewTableWriter(w io.Writer, types []DataType, names []string, opts *WriteOptions) (*TableWriter, error) {
	if len(types) == 0 {
		return nil, errors.New("parquet writer: no columns")
	}
	if names == nil {
		names = make([]string, len(types))
		for i := range names {
			names[i] = fmt.Sprintf("c%d", i)
		}
	}
	if len(names) != len(types) {
		return nil, fmt.Errorf("parquet writer: %d names for %d columns", len(names), len(types))
	}
	var o WriteOptions
	if opts != nil {
		o = *opts
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	var codec compress.Codec
	switch o.Compression {
	case "", Zstd:
		codec = zstdCodec
	case Snappy:
		codec = &snappy.Codec{}
	default:
		return nil, fmt.Errorf("parquet writer: unsupported compression %q", o.Compression)
	}
	group := parquet.Group{}
	for i, t := range types {
		node, err := leafNode(t)
		if err != nil {
			return nil, fmt.Errorf("parquet writer: column %d: %w", i, err)
		}
		if names[i] == "" || strings.ContainsRune(names[i], '.') {
			return nil, fmt.Errorf("parquet writer: column %d: invalid name %q", i, names[i])
		}
		if _, dup := group[names[i]]; dup {
			return nil, fmt.Errorf("parquet writer: duplicate column name %q", names[i])
		}
		group[names[i]] = parquet.Compressed(node, codec)
	}
	schema := OrderedSchema(group, names)
	out := &countingHasher{w: w, h: sha256.New()}
	pw := parquet.NewWriter(out, schema,
		parquet.Compression(codec),
		parquet.DataPageVersion(1),
		parquet.CreatedBy("geostat", "1", ""),
	)
	return &TableWriter{pw: pw, out: out, types: slices.Clone(types), groupCap: o.RowGroupRows}, nil
}

// Width returns the number of columns.
func (tw *TableWriter) Width() int { return len(tw.types) }

// Rows returns the number of rows written so far.
func (tw *TableWriter) Rows() int64 { return tw.rows }

// WriteColumns appends a block of rows given column by column: cols[c] holds
// the block's values of column c, all columns of equal length and of the
// writer's types.
func (tw *TableWriter) WriteColumns(cols []Column) error {
	if err := tw.usable(); err != nil {
		return err
	}
	if len(cols) != len(tw.types) {
		return fmt.Errorf("parquet writer: %d columns given, want %d", len(cols), len(tw.types))
	}
	n := cols[0].Len()
	for i := range cols {
		if cols[i].Type != tw.types[i] {
			return fmt.Errorf("parquet writer: column %d is %s, want %s", i, cols[i].Type, tw.types[i])
		}
		if cols[i].Len() != n {
			return fmt.Errorf("parquet writer: column %d has %d rows, column 0 has %d", i, cols[i].Len(), n)
		}
		if cols[i].HasNulls() {
			return fmt.Errorf("parquet writer: column %d has nulls (columns are REQUIRED)", i)
		}
	}
	return tw.write(n, func(dst []parquet.Value, c, from, to int) []parquet.Value {
		return appendValues(dst, &cols[c], from, to)
	})
}

// WriteFloat64Columns appends a block of rows of an all-float64 table given as
// one slice per column (e.g. one slice per realisation of an ensemble).
func (tw *TableWriter) WriteFloat64Columns(cols [][]float64) error {
	if err := tw.usable(); err != nil {
		return err
	}
	if len(cols) != len(tw.types) {
		return fmt.Errorf("parquet writer: %d columns given, want %d", len(cols), len(tw.types))
	}
	if err := tw.allFloat64(); err != nil {
		return err
	}
	n := len(cols[0])
	for i, c := range cols {
		if len(c) != n {
			return fmt.Errorf("parquet writer: column %d has %d rows, column 0 has %d", i, len(c), n)
		}
	}
	return tw.write(n, func(dst []parquet.Value, c, from, to int) []parquet.Value {
		for _, v := range cols[c][from:to] {
			dst = append(dst, parquet.DoubleValue(v))
		}
		return dst
	})
}

// WriteFloat64Rows appends a block of rows of an all-float64 table given
// row-major: flat[r*width+c] is column c of row r (e.g. x0,y0,z0,x1,...).
func (tw *TableWriter) WriteFloat64Rows(flat []float64) error {
	if err := tw.usable(); err != nil {
		return err
	}
	if err := tw.allFloat64(); err != nil {
		return err
	}
	w := len(tw.types)
	if len(flat)%w != 0 {
		return fmt.Errorf("parquet writer: %d values is not a multiple of width %d", len(flat), w)
	}
	return tw.write(len(flat)/w, func(dst []parquet.Value, c, from, to int) []parquet.Value {
		for r := from; r < to; r++ {
			dst = append(dst, parquet.DoubleValue(flat[r*w+c]))
		}
		return dst
	})
}

func (tw *TableWriter) allFloat64() error {
	for i, t := range tw.types {
		if t != TypeFloat64 {
			return fmt.Errorf("parquet writer: column %d is %s, not float64", i, t)
		}
	}
	return nil
}

func (tw *TableWriter) usable() error {
	if tw.closed {
		return errors.New("parquet writer: already closed")
	}
	return tw.err
}

// valueChunk is the number of rows converted to parquet.Values at a time per
// column (bounds the conversion buffers to 8192 values per worker).
const valueChunk = 8192

// pageRows is the number of float64 values at which a column writer cuts a
// data page: parquet-go flushes a page once a write takes its buffer to 98 %
// of the page buffer size (parquet.DefaultPageBufferSize, 256 KiB), i.e.
// at the first write that ends at or past 32,113 values.
const pageRows = (parquet.DefaultPageBufferSize*98/100 + 7) / 8

// chunkEnd is the end of the chunk holding row i of a row group: the next
// multiple of valueChunk within i's page, or the page's end. Ending every
// write there makes the column writers cut their pages at the same rows
// whatever the blocks the caller gave the rows in (a write ending past a
// page's end would cut the page there instead), so that the file's bytes
// depend on the values only: a simulation written tile by tile in one
// process and the same ensemble assembled from shards are the same file.
func chunkEnd(i int) int {
	page := i / pageRows * pageRows
	return min(page+pageRows, page+((i-page)/valueChunk+1)*valueChunk)
}

// write feeds n rows to the column writers, cutting row groups at groupCap.
// fill(dst, c, from, to) appends the values of column c, rows [from, to), to
// dst. Columns are written concurrently by up to GOMAXPROCS workers (each
// column buffers its own pages, so the output does not depend on the
// schedule).
func (tw *TableWriter) write(n int, fill func(dst []parquet.Value, c, from, to int) []parquet.Value) error {
	if tw.block != nil {
		return errBlockOpen
	}
	cws := tw.pw.ColumnWriters()
	width := len(tw.types)
	workers := max(1, min(runtime.GOMAXPROCS(0), width))
	for len(tw.bufs) < workers {
		tw.bufs = append(tw.bufs, make([]parquet.Value, 0, valueChunk))
	}
	errs := make([]error, width)
	writeColumn := func(worker, c, from, to int) {
		// Row from is row tw.inGroup of the row group: chunks end at the
		// group's multiples of valueChunk (see chunkEnd).
		for lo := from; lo < to && errs[c] == nil; {
			hi := min(to, from+chunkEnd(tw.inGroup+lo-from)-tw.inGroup)
			tw.bufs[worker] = fill(tw.bufs[worker][:0], c, lo, hi)
			if _, err := cws[c].WriteRowValues(tw.bufs[worker]); err != nil {
				errs[c] = fmt.Errorf("parquet writer: column %d: %w", c, err)
			}
			lo = hi
		}
	}
	for from := 0; from < n; {
		to := min(n, from+tw.groupCap-tw.inGroup)
		eachColumn(workers, width, func(w, c int) { writeColumn(w, c, from, to) })
		if err := errors.Join(errs...); err != nil {
			tw.err = err
			return err
		}
		if err := tw.advance(to - from); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// eachColumn calls f(worker, c) once for every column c in [0, count), on
// up to workers goroutines taking columns in turn (worker, in [0, workers),
// names the goroutine, e.g. to pick its buffer); with one worker it runs on
// the caller's goroutine. It returns when every call has returned; a panic
// of f on another goroutine is handed on to the caller's (as a
// *geostat.PanicError), where the job's recover sees it, instead of
// crashing the process.
func eachColumn(workers, count int, f func(worker, c int)) {
	if workers <= 1 {
		for c := 0; c < count; c++ {
			f(0, c)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var panics geostat.Panics
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panics.Recover(func() { next.Store(int64(count)) })
			for c := int(next.Add(1) - 1); c < count; c = int(next.Add(1) - 1) {
				f(w, c)
			}
		}()
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		panic(err)
	}
}

// advance counts n rows written into the open row group and flushes the
// group when it holds groupCap rows; a flush error is kept in tw.err.
func (tw *TableWriter) advance(n int) error {
	tw.inGroup += n
	tw.rows += int64(n)
	if tw.inGroup == tw.groupCap {
		if err := tw.pw.Flush(); err != nil {
			tw.err = fmt.Errorf("parquet writer: flushing row group: %w", err)
			return tw.err
		}
		tw.inGroup = 0
	}
	return nil
}

// Close writes the last row group and the footer and returns the blob's key,
// size and row count. The underlying writer is not closed.
func (tw *TableWriter) Close() (Blob, error) {
	if tw.closed {
		return Blob{}, errors.New("parquet writer: already closed")
	}
	if tw.block != nil && tw.err == nil {
		tw.err = fmt.Errorf("parquet writer: closed with %d of %d columns of a block written", tw.block.count, len(tw.types))
	}
	tw.closed = true
	if tw.err != nil {
		return Blob{}, tw.err
	}
	if err := tw.pw.Close(); err != nil {
		return Blob{}, fmt.Errorf("parquet writer: closing: %w", err)
	}
	return Blob{Key: hex.EncodeToString(tw.out.h.Sum(nil)), Size: tw.out.n, Rows: tw.rows}, nil
}

func appendValues(dst []parquet.Value, c *Column, from, to int) []parquet.Value {
	switch c.Type {
	case TypeFloat64:
		for _, v := range c.Float64[from:to] {
			dst = append(dst, parquet.DoubleValue(v))
		}
	case TypeBool:
		for _, v := range c.Bool[from:to] {
			dst = append(dst, parquet.BooleanValue(v))
		}
	case TypeInt32:
		for _, v := range c.Int64[from:to] {
			dst = append(dst, parquet.Int32Value(int32(v)))
		}
	case TypeInt64:
		for _, v := range c.Int64[from:to] {
			dst = append(dst, parquet.Int64Value(v))
		}
	case TypeUint64:
		for _, v := range c.Uint64[from:to] {
			dst = append(dst, parquet.Int64Value(int64(v)))
		}
	case TypeString:
		for _, v := range c.String[from:to] {
			dst = append(dst, parquet.ByteArrayValue([]byte(v)))
		}
	}
	return dst
}

// EncodeTable writes cols (all of equal length) as one Parquet file in memory
// and returns its bytes and Blob description. Int32 columns must hold values
// that fit in 32 bits.
func EncodeTable(cols []Column, names []string, opts *WriteOptions) ([]byte, Blob, error) {
	types := make([]DataType, len(cols))
	for i := range cols {
		types[i] = cols[i].Type
		if cols[i].Type == TypeInt32 {
			for _, v := range cols[i].Int64 {
				if v != int64(int32(v)) {
					return nil, Blob{}, fmt.Errorf("parquet writer: column %d: value %d does not fit int32", i, v)
				}
			}
		}
	}
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, types, names, opts)
	if err != nil {
		return nil, Blob{}, err
	}
	if err := tw.WriteColumns(cols); err != nil {
		return nil, Blob{}, err
	}
	b, err := tw.Close()
	if err != nil {
		return nil, Blob{}, err
	}
	return buf.Bytes(), b, nil
}

// EncodeFloat64 writes the float64 columns cols (one slice per column, equal
// lengths) as one Parquet file in memory and returns its bytes and Blob
// description (key = lowercase hex SHA-256 of the bytes).
func EncodeFloat64(cols [][]float64, names []string, opts *WriteOptions) ([]byte, Blob, error) {
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, Float64Types(len(cols)), names, opts)
	if err != nil {
		return nil, Blob{}, err
	}
	if err := tw.WriteFloat64Columns(cols); err != nil {
		return nil, Blob{}, err
	}
	b, err := tw.Close()
	if err != nil {
		return nil, Blob{}, err
	}
	return buf.Bytes(), b, nil
}

// EncodeXYZ writes flat coordinates x0,y0,z0,x1,... as a three-column float64
// file (columns x, y, z), the blob of a float-array-3 element.
func EncodeXYZ(flat []float64, opts *WriteOptions) ([]byte, Blob, error) {
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, []DataType{TypeFloat64, TypeFloat64, TypeFloat64}, []string{"x", "y", "z"}, opts)
	if err != nil {
		return nil, Blob{}, err
	}
	if err := tw.WriteFloat64Rows(flat); err != nil {
		return nil, Blob{}, err
	}
	b, err := tw.Close()
	if err != nil {
		return nil, Blob{}, err
	}
	return buf.Bytes(), b, nil
}

// Float64Types returns n column types, all TypeFloat64: the types of an
// ensemble of n realisations.
func Float64Types(n int) []DataType {
	types := make([]DataType, n)
	for i := range types {
		types[i] = TypeFloat64
	}
	return types
}

// EnsembleColumnNames returns column names for an ensemble of width
// realisations: name_0, name_1, ... (readers use position). name is a fixed
// prefix the writer chooses ("" is "r"), never an attribute's name: Parquet
// column names are internal, attribute names the user's.
func EnsembleColumnNames(name string, width int) []string {
	if name == "" {
		name = "r"
	}
	out := make([]string, width)
	for i := range out {
		out[i] = fmt.Sprintf("%s_%d", name, i)
	}
	return out
}
