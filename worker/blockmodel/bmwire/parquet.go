package bmwire

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// srcClass is what a Parquet column holds, as far as conversions go.
type srcClass int

const (
	srcInt srcClass = iota
	srcUint
	srcFloat
	srcBool
	srcString
	srcDate
	srcTimestamp
	srcOther
)

// classify reads a column's physical and logical type; scale converts a
// timestamp to microseconds.
func classify(t parquet.Type) (c srcClass, scale int64, desc string) {
	lt := t.LogicalType()
	desc = t.String()
	if lt != nil {
		switch v := lt.Value.(type) {
		case *format.IntType:
			if !v.IsSigned {
				return srcUint, 1, desc
			}
			return srcInt, 1, desc
		case *format.StringType, *format.EnumType:
			return srcString, 1, desc
		case *format.DateType:
			return srcDate, 1, desc
		case *format.TimestampType:
			if !v.IsAdjustedToUTC {
				return srcOther, 1, desc + " (not UTC)"
			}
			switch v.Unit.Value.(type) {
			case *format.MicroSeconds:
				return srcTimestamp, 1, desc
			case *format.MilliSeconds:
				return srcTimestamp, 1000, desc
			}
			return srcOther, 1, desc
		case *format.Float16Type:
			return srcOther, 1, desc
		}
	}
	if ct := t.ConvertedType(); ct != nil && lt == nil {
		switch *ct {
		case deprecated.UTF8, deprecated.Enum:
			return srcString, 1, desc
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			return srcUint, 1, desc
		case deprecated.Date:
			return srcDate, 1, desc
		case deprecated.TimestampMicros:
			return srcTimestamp, 1, desc
		case deprecated.TimestampMillis:
			return srcTimestamp, 1000, desc
		}
	}
	switch t.Kind() {
	case parquet.Int32, parquet.Int64:
		return srcInt, 1, desc
	case parquet.Float, parquet.Double:
		return srcFloat, 1, desc
	case parquet.Boolean:
		return srcBool, 1, desc
	case parquet.ByteArray:
		return srcString, 1, desc
	}
	return srcOther, 1, desc
}

// compatible reports whether a column of class c converts losslessly to t
// (OPEN-16: any integer width for integers; integers and floats for
// floats; each value is still checked).
func compatible(c srcClass, t blockmodel.DataType) bool {
	switch familyOf(t) {
	case famFloat:
		return c == srcInt || c == srcUint || c == srcFloat
	case famUint:
		return c == srcInt || c == srcUint
	case famBool:
		return c == srcBool
	case famStr:
		return c == srcString
	}
	switch t {
	case blockmodel.Date32:
		return c == srcDate
	case blockmodel.Timestamp:
		return c == srcTimestamp
	}
	return c == srcInt || c == srcUint
}

// pqColumn reads one leaf column of the file across its row groups.
type pqColumn struct {
	leaf  int
	class srcClass
	scale int64
	kind  parquet.Kind
	what  string
	// ident: an identity column, whose UINT32 values without nulls are
	// read into Values.u32.
	ident bool
	// errs collects the file's problems.
	errs *collector
	// state
	ahead chan pageAhead // pages read ahead (readAhead), nil before the first
	stop  chan struct{}
	page  parquet.Page
	vr    parquet.ValueReader
	left  int64 // values left in the current page
	val   int   // next of the current page's values (typed nullable reads)
	buf   []parquet.Value
	i32   []int32
	i64   []int64
	f64   []float64
	u32   []uint32
	// The current page's values decoded from its dictionary (values):
	// decoded once a page, decOK false when the page has no such view.
	dec            encoding.Values
	decoded, decOK bool
	dec32          []int32
	dec64          []int64
	decF           []float64
}

type pqSource struct {
	f    *parquet.File
	cols []*pqColumn // identity columns, then value columns
	nid  int
}

// ReadParquet reads a Parquet update file (see Read). Columns may be
// REQUIRED or OPTIONAL (a null is an empty value), in any encoding
// parquet-go reads, uncompressed, Snappy or zstd; nested or repeated
// columns are refused. Before a page is read, its size is bounded from the
// file's page and frame headers (MaxPageBytes).
func ReadParquet(r io.ReaderAt, size int64, spec FileSpec, loc blockmodel.Locator, sink Sink) (sum Summary, err error) {
	c := &collector{}
	defer func() {
		if p := recover(); p != nil {
			c.add(0, nil, "the Parquet file is malformed: %v", p)
			sum, err = Summary{}, c.err()
		}
	}()
	f, err := OpenParquet(r, size)
	if err != nil {
		c.add(0, nil, "not a readable Parquet file: %v", err)
		return Summary{}, c.err()
	}
	leaves := map[string]int{}
	types := map[string]parquet.Type{}
	for i, col := range f.Root().Columns() {
		if col.Leaf() && col.MaxRepetitionLevel() == 0 {
			leaves[col.Name()] = i
			types[col.Name()] = col.Type()
		}
	}
	field, ident, index := fileColumns(spec, func(n string) bool { _, ok := leaves[n]; return ok }, c)
	s := &pqSource{f: f, nid: len(ident)}
	add := func(title string, t blockmodel.DataType, what string, ident bool) {
		n, ok := field(title)
		if !ok {
			c.add(0, nil, "missing column %q", title)
			return
		}
		cl, scale, desc := classify(types[n])
		if !compatible(cl, t) {
			c.add(0, nil, "%s has type %s, which does not convert to %s", what, desc, t)
			return
		}
		s.cols = append(s.cols, &pqColumn{leaf: leaves[n], class: cl, scale: scale, kind: types[n].Kind(), what: what, ident: ident, errs: c})
	}
	for _, n := range ident {
		add(n, systemType(n), fmt.Sprintf("column %q", n), true)
	}
	for _, col := range spec.Columns {
		add(col.Title, col.Type, fmt.Sprintf("column %q", col.Title), false)
	}
	if err := c.err(); err != nil {
		return Summary{}, err
	}
	leafs, what := make([]int, len(s.cols)), make([]string, len(s.cols))
	for i, col := range s.cols {
		leafs[i], what[i] = col.leaf, col.what
	}
	if err := checkPages(r, size, f, leafs, what); err != nil {
		c.add(0, nil, "%v", err)
		return Summary{}, c.err()
	}
	if err := sink.Start(f.NumRows()); err != nil {
		return Summary{}, err
	}
	defer s.close()
	return run(s, spec, index, loc, sink, c, ident)
}

// OpenParquet opens an uploaded Parquet file of size bytes with parquet-go
// once its envelope is checked (objects.CheckEnvelope): a forged footer
// length is an error, not an allocation of up to 4 GiB.
func OpenParquet(r io.ReaderAt, size int64) (*parquet.File, error) {
	if err := objects.CheckEnvelope(r, size); err != nil {
		return nil, err
	}
	return parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
}

func (s *pqSource) close() {
	for _, c := range s.cols {
		c.close()
	}
}

func (s *pqSource) fill(b *rawBatch, max int, c *collector) error {
	kept := len(c.e.Errors)
	n := -1
	for i, col := range s.cols {
		var v *Values
		if i < s.nid {
			v = &b.ident[i]
		} else {
			v = &b.vals[i-s.nid]
		}
		got, err := col.read(s.f, v, max, b.first, c)
		if err != nil {
			c.add(0, nil, "%s: %v", col.what, err)
			return errStop
		}
		if n >= 0 && got != n {
			c.add(0, nil, "%s holds %d values where the others hold %d", col.what, got, n)
			return errStop
		}
		n = got
	}
	b.n = n
	b.bad = grow(b.bad[:0], n)
	clear(b.bad)
	// Rows with a bad cell (reported while reading) are not matched.
	for _, e := range c.e.Errors[kept:] {
		if r := e.Row - b.first; e.Row > 0 && r >= 0 && r < int64(n) {
			b.bad[r] = true
		}
	}
	return nil
}

// pageAhead is a page read ahead, the end of a row group's pages (done:
// closed by the reader, after it released their pages) or an error.
type pageAhead struct {
	page parquet.Page
	done parquet.Pages
	err  error
}

// readAhead reads and decompresses the column's pages, across row groups,
// into p.ahead, up to two ahead of the reader, until the end, an error or
// p.stop. It runs in a goroutine of its own, so that the columns of a file
// are decompressed in parallel with each other and with the matching of
// rows; closing p.ahead marks the end.
func (p *pqColumn) readAhead(f *parquet.File) {
	defer close(p.ahead)
	send := func(a pageAhead) bool {
		select {
		case p.ahead <- a:
			return true
		case <-p.stop:
			return false
		}
	}
	// A malformed file can make parquet-go panic while it decodes a page:
	// here that is an error of the file, never a crash of the worker.
	defer func() {
		if v := recover(); v != nil {
			send(pageAhead{err: fmt.Errorf("the Parquet file is malformed: %v", v)})
		}
	}()
	for _, rg := range f.RowGroups() {
		pages := rg.ColumnChunks()[p.leaf].Pages()
		for {
			pg, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				if !send(pageAhead{done: pages}) {
					pages.Close()
					return
				}
				break
			}
			if err != nil {
				pages.Close()
				send(pageAhead{err: err})
				return
			}
			if pg.NumValues() == 0 {
				parquet.Release(pg)
				continue
			}
			if !send(pageAhead{page: pg}) {
				parquet.Release(pg)
				pages.Close()
				return
			}
		}
	}
}

// nextPage moves to the next page with values, across row groups; false
// at the end of the column.
func (p *pqColumn) nextPage(f *parquet.File) (bool, error) {
	if p.page != nil {
		parquet.Release(p.page)
		p.page = nil
	}
	if p.ahead == nil {
		p.ahead, p.stop = make(chan pageAhead, 2), make(chan struct{})
		go p.readAhead(f)
	}
	for a := range p.ahead {
		switch {
		case a.err != nil:
			return false, a.err
		case a.done != nil:
			a.done.Close()
		default:
			p.page, p.vr, p.left, p.val = a.page, a.page.Values(), a.page.NumValues(), 0
			p.decoded = false
			return true, nil
		}
	}
	return false, nil
}

// close releases the current page and stops the read-ahead, releasing
// what it had read.
func (p *pqColumn) close() {
	if p.page != nil {
		parquet.Release(p.page)
		p.page = nil
	}
	if p.ahead == nil {
		return
	}
	close(p.stop)
	for a := range p.ahead {
		if a.page != nil {
			parquet.Release(a.page)
		}
		if a.done != nil {
			a.done.Close()
		}
	}
	p.ahead = nil
}

// read appends up to max values to v; it returns how many.
func (p *pqColumn) read(f *parquet.File, v *Values, max int, first int64, c *collector) (int, error) {
	got := 0
	for got < max {
		if p.left == 0 {
			ok, err := p.nextPage(f)
			if err != nil {
				return got, err
			}
			if !ok {
				break
			}
		}
		want := int(min(int64(max-got), p.left))
		k, err := p.readSome(v, want, first+int64(got), c)
		got += k
		p.left -= int64(k)
		if err != nil && !errors.Is(err, io.EOF) {
			return got, err
		}
		if k == 0 {
			if p.left > 0 {
				return got, fmt.Errorf("a page ended %d values early", p.left)
			}
		}
	}
	return got, nil
}

// readSome decodes up to n values of the current page into v.
func (p *pqColumn) readSome(v *Values, n int, first int64, c *collector) (int, error) {
	noNulls := p.page.NumNulls() == 0
	// An identity column of UINT32 values is kept as it is (Values.u32).
	narrow := p.ident && v.Type == blockmodel.UInt32 && v.Valid == nil && len(v.Int) == 0 && p.class == srcUint
	if noNulls && (p.class == srcInt || p.class == srcUint) {
		// Integers straight from the page's values, when it has a plain
		// view of them (the choice is the page's: every read of a page
		// takes this way or every one the value reader's).
		if data, row, ok := p.denseInts(n); ok {
			if narrow && data.Kind() == encoding.Int32 {
				v.u32 = append(v.u32, data.Uint32()[row:row+n]...)
				return n, nil
			}
			v.widen()
			if data.Kind() == encoding.Int32 {
				p.appendInt32s(v, data.Int32()[row:row+n], first)
			} else {
				p.appendInt64s(v, data.Int64()[row:row+n], first)
			}
			return n, nil
		}
	}
	if noNulls && narrow {
		if r, ok := p.vr.(uint32Reader); ok {
			at := len(v.u32)
			v.u32 = grow(v.u32, n)
			k, err := r.ReadUint32s(v.u32[at:])
			v.u32 = v.u32[:at+k]
			return k, err
		}
	}
	v.widen()
	if noNulls {
		switch r := p.vr.(type) {
		case parquet.DoubleReader:
			if p.class == srcFloat && v.Type == blockmodel.Float64 {
				at := len(v.Float)
				v.Float = grow(v.Float, n)
				k, err := r.ReadDoubles(v.Float[at:])
				v.Float = v.Float[:at+k]
				nanToNull(v, at)
				return k, err
			}
		case uint32Reader:
			if p.class == srcInt || p.class == srcUint {
				p.u32 = grow(p.u32[:0], n)
				k, err := r.ReadUint32s(p.u32)
				if v.Type == blockmodel.UInt32 && v.Valid == nil {
					// The common identity column: every value fits.
					at := len(v.Int)
					v.Int = grow(v.Int, k)
					for x, y := range p.u32[:k] {
						v.Int[at+x] = int64(y)
					}
					return k, err
				}
				for x, y := range p.u32[:k] {
					p.settle(v, first+int64(x), v.appendInt(int64(y), true))
				}
				return k, err
			}
		case parquet.Int32Reader:
			if p.class == srcInt || p.class == srcUint {
				p.i32 = grow(p.i32[:0], n)
				k, err := r.ReadInt32s(p.i32)
				p.appendInt32s(v, p.i32[:k], first)
				return k, err
			}
		case parquet.Int64Reader:
			if p.class == srcInt || p.class == srcUint {
				p.i64 = grow(p.i64[:0], n)
				k, err := r.ReadInt64s(p.i64)
				p.appendInt64s(v, p.i64[:k], first)
				return k, err
			}
		}
	}
	if p.class == srcFloat && v.Type == blockmodel.Float64 {
		// An OPTIONAL page, with or without nulls (a REQUIRED one has
		// none and was read above).
		if k, ok := p.readNullableDoubles(v, n, noNulls); ok {
			return k, nil
		}
	}
	p.buf = grow(p.buf[:0], min(n, 4096))
	k, err := p.vr.ReadValues(p.buf)
	for x, val := range p.buf[:k] {
		if e := p.appendValue(v, val); e != nil {
			c.add(first+int64(x), nil, "%s: %v", p.what, e)
			v.appendNull()
		}
	}
	return k, err
}

// appendInt32s appends INT32 values (unsigned for a UINT column) of file
// rows from first, each checked against v's type.
func (p *pqColumn) appendInt32s(v *Values, xs []int32, first int64) {
	for x, y := range xs {
		if p.class == srcUint {
			p.settle(v, first+int64(x), appendIntFast(v, int64(uint32(y)), true))
		} else {
			p.settle(v, first+int64(x), appendIntFast(v, int64(y), false))
		}
	}
}

// appendInt64s is appendInt32s for INT64 values.
func (p *pqColumn) appendInt64s(v *Values, xs []int64, first int64) {
	for x, y := range xs {
		p.settle(v, first+int64(x), appendIntFast(v, y, p.class == srcUint))
	}
}

// denseInts returns the current page's INT32 or INT64 values (values:
// plain or from a dictionary) and the index of its next one, when the page
// has no null and a value for each of its rows: a REQUIRED column, or an
// OPTIONAL one without nulls (what pyarrow writes by default), whose value
// reader would box every value.
// Its n next values are data's [row, row+n). The choice is the same for
// every read of a page (the position is the page's, from p.left).
func (p *pqColumn) denseInts(n int) (data encoding.Values, row int, ok bool) {
	if data, ok = p.values(); !ok {
		return data, 0, false
	}
	var count int
	switch data.Kind() {
	case encoding.Int32:
		count = len(data.Int32())
	case encoding.Int64:
		count = len(data.Int64())
	default:
		return data, 0, false
	}
	row = int(p.page.NumValues() - p.left)
	if int64(count) != p.page.NumValues() || row < 0 || row+n > count {
		return data, 0, false
	}
	return data, row, true
}

// values returns the current page's non-null values as a typed view: the
// page's own, or for a dictionary-encoded page (what pyarrow writes by
// default) its values looked up from their indexes, once a page, into
// buffers of the column; false when the page has no such view (an index
// out of the dictionary: a malformed file, which the value reader then
// reports).
func (p *pqColumn) values() (encoding.Values, bool) {
	d := p.page.Dictionary()
	if d == nil {
		return p.page.Data(), true
	}
	if p.decoded {
		return p.dec, p.decOK
	}
	p.decoded, p.decOK = true, false
	idx := p.page.Data()
	if idx.Kind() != encoding.Int32 {
		return p.dec, false
	}
	ix := idx.Int32()
	dict := d.Page().Data()
	switch dict.Kind() {
	case encoding.Int32:
		if p.dec32, p.decOK = lookup(p.dec32, dict.Int32(), ix); p.decOK {
			p.dec = encoding.Int32Values(p.dec32)
		}
	case encoding.Int64:
		if p.dec64, p.decOK = lookup(p.dec64, dict.Int64(), ix); p.decOK {
			p.dec = encoding.Int64Values(p.dec64)
		}
	case encoding.Double:
		if p.decF, p.decOK = lookup(p.decF, dict.Double(), ix); p.decOK {
			p.dec = encoding.DoubleValues(p.decF)
		}
	}
	return p.dec, p.decOK
}

// lookup sets buf to dict's values at the indexes ix; false when one is
// out of dict.
func lookup[T any](buf, dict []T, ix []int32) ([]T, bool) {
	buf = grow(buf[:0], len(ix))
	for x, i := range ix {
		if uint32(i) >= uint32(len(dict)) {
			return buf, false
		}
		buf[x] = dict[i]
	}
	return buf, true
}

// readNullableDoubles decodes the next n values of a page of an optional
// DOUBLE column (noNulls: the page has no null) from its typed values and
// definition levels (values: plain or from a dictionary; the value reader
// would box every value); false, reading nothing, when the page has no
// such view. The choice is
// the same for every read of a page, so the value reader's position and
// p.val never both move in one page.
func (p *pqColumn) readNullableDoubles(v *Values, n int, noNulls bool) (int, bool) {
	data, plain := p.values()
	if !plain {
		return 0, false
	}
	levels := p.page.DefinitionLevels()
	if data.Kind() != encoding.Double || int64(len(levels)) != p.page.NumValues() {
		return 0, false
	}
	vals := data.Double()
	if int64(len(vals)) != p.page.NumValues()-p.page.NumNulls() {
		return 0, false
	}
	row := int(p.page.NumValues() - p.left)
	at := len(v.Float)
	if noNulls {
		// Every level is 1 and value r of the page is row r's.
		v.Float = append(v.Float, vals[row:row+n]...)
		nanToNull(v, at)
		return n, true
	}
	if v.Valid == nil {
		v.Valid = make([]bool, at, max(at+n, 64))
		for r := range v.Valid {
			v.Valid[r] = true
		}
	}
	v.Float = grow(v.Float, n)
	v.Valid = grow(v.Valid, n)
	lv := levels[row : row+n]
	fs, ok := v.Float[at:at+len(lv)], v.Valid[at:at+len(lv)]
	k := p.val // in a local: the loop runs twice as fast
	for i, l := range lv {
		// A null, or a NaN (a null too, OPEN-19), is a zero marked
		// invalid. A page with fewer values than its levels say panics
		// here: a malformed file (ReadParquet recovers it).
		if l == 1 {
			f := vals[k]
			k++
			if f == f {
				fs[i], ok[i] = f, true
				continue
			}
		}
		fs[i], ok[i] = 0, false
	}
	p.val = k
	return n, true
}

// settle completes the append of the value of a file row: a value that
// did not convert (err) is reported and read as null, else marked valid.
// It is small enough to inline in the per-value loops.
func (p *pqColumn) settle(v *Values, row int64, err error) {
	if err == nil {
		v.markValid()
	} else {
		p.refuse(v, row, err)
	}
}

// refuse reports a value that did not convert and reads it as null.
func (p *pqColumn) refuse(v *Values, row int64, err error) {
	p.errs.add(row, nil, "%s: %v", p.what, err)
	v.appendNull()
}

// nanToNull keeps Valid in step with the floats appended from at and
// turns a NaN among them into a null (OPEN-19).
func nanToNull(v *Values, at int) {
	for x := at; x < len(v.Float); x++ {
		if math.IsNaN(v.Float[x]) {
			if v.Valid == nil {
				v.Valid = make([]bool, at, len(v.Float))
				for r := range v.Valid {
					v.Valid[r] = true
				}
			}
			break
		}
	}
	if v.Valid == nil {
		return
	}
	for x := len(v.Valid); x < len(v.Float); x++ {
		ok := !math.IsNaN(v.Float[x])
		if !ok {
			v.Float[x] = 0
		}
		v.Valid = append(v.Valid, ok)
	}
}

// appendIntFast is appendInt with the common identity case inlined.
func appendIntFast(v *Values, x int64, unsigned bool) error {
	if v.Type == blockmodel.UInt32 && x >= 0 && x <= math.MaxUint32 {
		v.Int = append(v.Int, x)
		return nil
	}
	return v.appendInt(x, unsigned)
}

// appendValue converts one decoded value.
func (p *pqColumn) appendValue(v *Values, val parquet.Value) error {
	if val.IsNull() {
		v.appendNull()
		return nil
	}
	var err error
	switch p.class {
	case srcInt, srcUint:
		var x int64
		if val.Kind() == parquet.Int32 {
			x = int64(val.Int32())
			if p.class == srcUint {
				x = int64(uint32(val.Int32()))
			}
		} else {
			x = val.Int64()
		}
		err = v.appendInt(x, p.class == srcUint)
	case srcFloat:
		f := val.Double()
		if val.Kind() == parquet.Float {
			f = float64(val.Float())
		}
		if math.IsNaN(f) {
			v.appendNull()
			return nil
		}
		err = v.appendFloat(f)
	case srcBool:
		v.Bool = append(v.Bool, val.Boolean())
	case srcString:
		v.Str = append(v.Str, string(val.ByteArray()))
	case srcDate:
		v.Int = append(v.Int, int64(val.Int32()))
	case srcTimestamp:
		x := val.Int64()
		if p.scale != 1 {
			if x > math.MaxInt64/p.scale || x < math.MinInt64/p.scale {
				return fmt.Errorf("timestamp %d is out of range", x)
			}
			x *= p.scale
		}
		v.Int = append(v.Int, x)
	}
	if err != nil {
		return err
	}
	v.markValid()
	return nil
}

// grow returns s with length len(s)+n, reusing its storage when it can.
func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s[:len(s)+n]
	}
	out := make([]T, len(s)+n, 2*len(s)+n)
	copy(out, s)
	return out
}

// uint32Reader is implemented by parquet-go's page values of UINT(32)
// columns (it exports no interface for it).
type uint32Reader interface {
	ReadUint32s(values []uint32) (int, error)
}
