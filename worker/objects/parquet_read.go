package objects

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// BlobError is returned when a Parquet blob does not match its JSON array
// element or cannot be decoded. Element is the JSON path of the element.
type BlobError struct {
	Element string
	Err     error
}

// Error implements error.
func (e *BlobError) Error() string { return e.Element + ": parquet blob: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *BlobError) Unwrap() error { return e.Err }

// openTable opens the Parquet file in r (size bytes) and checks it against
// spec: the file envelope, one flat (neither nested nor repeated) top-level
// column per spec.Types of that type, and the footer's row count. It returns
// the file and its columns; errors are *BlobError naming spec.Element.
// parquet-go may panic on corrupt input: callers recover (ReadTable,
// NewEnsembleReader).
func openTable(r io.ReaderAt, size int64, spec TableSpec) (*parquet.File, []*parquet.Column, error) {
	fail := func(format string, args ...any) error {
		return &BlobError{Element: spec.Element, Err: fmt.Errorf(format, args...)}
	}
	if err := CheckEnvelope(r, size); err != nil {
		return nil, nil, &BlobError{Element: spec.Element, Err: err}
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, nil, &BlobError{Element: spec.Element, Err: fmt.Errorf("not a readable parquet file: %w", err)}
	}
	cols := f.Root().Columns()
	if len(cols) != len(spec.Types) {
		return nil, nil, fail("has %d columns, want %d", len(cols), len(spec.Types))
	}
	for i, c := range cols {
		if !c.Leaf() || c.Repeated() || c.MaxRepetitionLevel() != 0 {
			return nil, nil, fail("column %d (%q) is nested or repeated", i, c.Name())
		}
		if err := checkColumnType(c.Type(), spec.Types[i]); err != nil {
			return nil, nil, fail("column %d (%q): %w", i, c.Name(), err)
		}
	}
	if f.NumRows() != spec.Rows {
		return nil, nil, fail("has %d rows, want length %d", f.NumRows(), spec.Rows)
	}
	return f, cols, nil
}

// maxPrealloc bounds the rows preallocated from a file's own claims, so a
// hostile footer cannot make the reader allocate memory the data never fills.
const maxPrealloc = 1 << 20

// ReadTable decodes the Parquet file in r (size bytes) and checks it against
// spec: number of top-level columns, their physical and logical types, and the
// row count. It accepts OPTIONAL or REQUIRED columns, plain, dictionary and
// byte-stream-split encodings and gzip, snappy, zstd or no compression (any
// codec parquet-go reads). Nested or repeated columns are rejected. Errors are
// *BlobError naming spec.Element.
//
// The reader uses parquet-go, never Arrow Go v15, whose reader returns zero
// rows without an error for byte-stream-split columns.
func ReadTable(r io.ReaderAt, size int64, spec TableSpec) (t *Table, err error) {
	fail := func(format string, args ...any) error {
		return &BlobError{Element: spec.Element, Err: fmt.Errorf(format, args...)}
	}
	// parquet-go may panic on corrupt input; a blob is untrusted data, so a
	// panic while decoding it is reported as a malformed file.
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fail("malformed file: %v", p)
		}
	}()
	for i, typ := range spec.Types {
		if !typ.valid() {
			return nil, fail("column %d: unsupported data type %q", i, typ)
		}
	}
	f, cols, err := openTable(r, size, spec)
	if err != nil {
		return nil, err
	}
	var sum int64
	for _, rg := range f.RowGroups() {
		sum += rg.NumRows()
	}
	if sum != spec.Rows {
		return nil, fail("row groups hold %d rows, footer says %d", sum, spec.Rows)
	}
	t = &Table{Rows: spec.Rows, Columns: make([]Column, len(cols))}
	prealloc := int(min(spec.Rows, maxPrealloc))
	for i := range cols {
		col := &t.Columns[i]
		col.Type = spec.Types[i]
		for j, rg := range f.RowGroups() {
			chunks := rg.ColumnChunks()
			if len(chunks) != len(cols) {
				return nil, fail("row group %d has %d column chunks, want %d", j, len(chunks), len(cols))
			}
			if err := readChunk(chunks[i], col, prealloc, rg.NumRows()); err != nil {
				return nil, fail("column %d, row group %d: %w", i, j, err)
			}
		}
		if int64(col.Len()) != spec.Rows {
			return nil, fail("column %d holds %d values, want %d", i, col.Len(), spec.Rows)
		}
	}
	return t, nil
}

// CheckEnvelope checks the magic bytes of a Parquet file of size bytes and
// that its footer length fits in the file: call it before parquet.OpenFile,
// which sizes a buffer by that length (a forged one would otherwise cost an
// allocation of up to 4 GiB).
func CheckEnvelope(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("not a parquet file: %d bytes", size)
	}
	var head, tail [4]byte
	var lenb [4]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return fmt.Errorf("reading header: %w", err)
	}
	if _, err := r.ReadAt(lenb[:], size-8); err != nil {
		return fmt.Errorf("reading footer: %w", err)
	}
	if _, err := r.ReadAt(tail[:], size-4); err != nil {
		return fmt.Errorf("reading footer: %w", err)
	}
	if string(head[:]) != "PAR1" || string(tail[:]) != "PAR1" {
		return errors.New("not a parquet file: missing PAR1 magic (encrypted files are not supported)")
	}
	footer := int64(binary.LittleEndian.Uint32(lenb[:]))
	if footer > size-12 {
		return fmt.Errorf("footer length %d exceeds the file size %d", footer, size)
	}
	return nil
}

// checkColumnType compares a file column's Parquet type with the data type
// the JSON element declares (docs/objects.md 3, type mapping).
func checkColumnType(pt parquet.Type, want DataType) error {
	lt := pt.LogicalType()
	var intType *format.IntType
	var isString bool
	if lt != nil {
		switch v := lt.Value.(type) {
		case *format.IntType:
			intType = v
		case *format.StringType:
			isString = true
		case nil:
		default:
			return fmt.Errorf("logical type %s, want %s", lt, want)
		}
	}
	ct := pt.ConvertedType()
	if lt == nil && ct != nil {
		switch *ct {
		case deprecated.UTF8:
			isString = true
		case deprecated.Int32:
			intType = &format.IntType{BitWidth: 32, IsSigned: true}
		case deprecated.Int64:
			intType = &format.IntType{BitWidth: 64, IsSigned: true}
		case deprecated.Uint64:
			intType = &format.IntType{BitWidth: 64, IsSigned: false}
		default:
			return fmt.Errorf("converted type %v, want %s", *ct, want)
		}
	}
	kind := pt.Kind()
	wantKind := map[DataType]parquet.Kind{
		TypeFloat64: parquet.Double, TypeBool: parquet.Boolean, TypeInt32: parquet.Int32,
		TypeInt64: parquet.Int64, TypeUint64: parquet.Int64, TypeString: parquet.ByteArray,
	}[want]
	if kind != wantKind {
		return fmt.Errorf("physical type %s, want %s for %s", kind, wantKind, want)
	}
	switch want {
	case TypeFloat64, TypeBool:
		if intType != nil || isString {
			return fmt.Errorf("annotated type %s, want %s", pt, want)
		}
	case TypeInt32, TypeInt64:
		bits := int8(32)
		if want == TypeInt64 {
			bits = 64
		}
		if isString || (intType != nil && (!intType.IsSigned || intType.BitWidth != bits)) {
			return fmt.Errorf("annotated type %s, want signed %s", pt, want)
		}
	case TypeUint64:
		if intType == nil || intType.IsSigned || intType.BitWidth != 64 {
			return fmt.Errorf("type %s lacks the INT(64, unsigned) annotation uint64 needs", pt)
		}
	case TypeString:
		if !isString {
			return fmt.Errorf("byte array without the UTF8/STRING annotation")
		}
	}
	return nil
}

// readChunk appends the values of one column chunk to col.
func readChunk(chunk parquet.ColumnChunk, col *Column, prealloc int, rows int64) error {
	pages := chunk.Pages()
	defer pages.Close()
	start := col.Len()
	buf := make([]parquet.Value, 4096)
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		// Check the page's claim before decoding it: run-length encoded
		// levels let a few bytes claim billions of (null) values.
		if int64(col.Len()-start)+page.NumValues() > rows {
			parquet.Release(page)
			return fmt.Errorf("pages hold more than the row group's %d rows", rows)
		}
		err = readPage(page, col, prealloc, buf)
		parquet.Release(page)
		if err != nil {
			return err
		}
		if int64(col.Len()-start) > rows {
			return fmt.Errorf("pages hold more than the row group's %d rows", rows)
		}
	}
	if got := int64(col.Len() - start); got != rows {
		return fmt.Errorf("pages hold %d values, row group has %d rows", got, rows)
	}
	return nil
}

func readPage(page parquet.Page, col *Column, prealloc int, buf []parquet.Value) error {
	if page.NumRows() != page.NumValues() {
		return fmt.Errorf("page has %d values for %d rows (repeated data)", page.NumValues(), page.NumRows())
	}
	vr := page.Values()
	// Fast path: REQUIRED double pages decode straight into float64s.
	if dr, ok := vr.(parquet.DoubleReader); ok && col.Type == TypeFloat64 && page.NumNulls() == 0 {
		n := int(page.NumValues())
		if col.Float64 == nil {
			col.Float64 = make([]float64, 0, max(prealloc, n))
		}
		at := len(col.Float64)
		col.Float64 = append(col.Float64, make([]float64, n)...)
		got := 0
		for got < n {
			k, err := dr.ReadDoubles(col.Float64[at+got:])
			got += k
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if k == 0 {
				break
			}
		}
		if got != n {
			return fmt.Errorf("page decoded %d of %d values", got, n)
		}
		if col.Null != nil {
			col.Null = append(col.Null, make([]bool, n)...)
		}
		return nil
	}
	for {
		n, err := vr.ReadValues(buf)
		for _, v := range buf[:n] {
			appendValue(col, v, prealloc)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("page reader made no progress")
		}
	}
}

// appendValue appends one decoded value (or null) to col.
func appendValue(col *Column, v parquet.Value, prealloc int) {
	null := v.IsNull()
	if null && col.Null == nil {
		col.Null = make([]bool, col.Len(), max(prealloc, col.Len()+1))
	}
	if col.Null != nil {
		col.Null = append(col.Null, null)
	}
	switch col.Type {
	case TypeFloat64:
		if col.Float64 == nil {
			col.Float64 = make([]float64, 0, prealloc)
		}
		x := math.NaN()
		if !null {
			x = v.Double()
		}
		col.Float64 = append(col.Float64, x)
	case TypeBool:
		if col.Bool == nil {
			col.Bool = make([]bool, 0, prealloc)
		}
		col.Bool = append(col.Bool, !null && v.Boolean())
	case TypeInt32:
		if col.Int64 == nil {
			col.Int64 = make([]int64, 0, prealloc)
		}
		var x int64
		if !null {
			x = int64(v.Int32())
		}
		col.Int64 = append(col.Int64, x)
	case TypeInt64:
		if col.Int64 == nil {
			col.Int64 = make([]int64, 0, prealloc)
		}
		var x int64
		if !null {
			x = v.Int64()
		}
		col.Int64 = append(col.Int64, x)
	case TypeUint64:
		if col.Uint64 == nil {
			col.Uint64 = make([]uint64, 0, prealloc)
		}
		var x uint64
		if !null {
			x = uint64(v.Int64())
		}
		col.Uint64 = append(col.Uint64, x)
	case TypeString:
		if col.String == nil {
			col.String = make([]string, 0, min(prealloc, 1024))
		}
		var s string
		if !null {
			s = string(v.ByteArray())
		}
		col.String = append(col.String, s)
	}
}

// Problem is the document of an unusable blob: 422, naming the element.
func (e *BlobError) Problem() problem.Problem {
	return problem.Problem{Type: problem.ComputeInvalidData, Title: "Invalid Object Data.", Status: http.StatusUnprocessableEntity,
		Detail: e.Error(), Extra: map[string]any{"member": e.Element}}
}

// DataError is an object whose document or data cannot be used: a length
// that differs from the geometry, a non-finite coordinate, a malformed
// member. It is the user's data, not a fault of the worker: 422.
type DataError struct {
	Err error
	// Member is the object's member at fault (e.g. "origin" or
	// "locations.coordinates"); "" when not known. A grid geometry error
	// names its member without it.
	Member string
}

// Error implements error.
func (e *DataError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *DataError) Unwrap() error { return e.Err }

// MemberName returns the member at fault: Member, or the member of a data
// or grid geometry error in the chain, or "".
func (e *DataError) MemberName() string {
	if e.Member != "" {
		return e.Member
	}
	var inner *DataError
	if errors.As(e.Err, &inner) {
		return inner.MemberName()
	}
	var ge *grid.GeometryError
	if errors.As(e.Err, &ge) {
		return ge.Member
	}
	return ""
}

// Problem is the 422 document, with the member when it is known.
func (e *DataError) Problem() problem.Problem {
	p := problem.Problem{Type: problem.ComputeInvalidData, Title: "Invalid Object Data.", Status: http.StatusUnprocessableEntity,
		Detail: e.Error()}
	if m := e.MemberName(); m != "" {
		p.Extra = map[string]any{"member": m}
	}
	return p
}

// invalidData marks err as the object's data being unusable.
func invalidData(err error) error { return &DataError{Err: err} }

// IsDataError reports whether err is an object's unusable document or data
// (a *DataError or *BlobError) rather than a failure to read it.
func IsDataError(err error) bool {
	var d *DataError
	var b *BlobError
	return errors.As(err, &d) || errors.As(err, &b)
}
