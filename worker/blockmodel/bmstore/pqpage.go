package bmstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/format"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/internal/pqheader"
)

// The column files the store writes (pqwrite.go) are read by chunkReader,
// a decoder of the one layout they have: a flat OPTIONAL column (maximum
// definition level 1), data pages v1 with definition levels in the
// RLE/bit-packed hybrid and PLAIN or dictionary-encoded values (after a
// PLAIN dictionary page), uncompressed or Snappy. Opening a column chunk
// reads and checks its page headers (small reads) against the chunk's
// bytes and rows, and decodes its dictionary; a page is then read with one
// ReadAt into a buffer reused from page to page, decompressed into
// another, and its levels and values decoded straight into the destination
// Column: nothing is allocated a page once the buffers have grown (to the
// largest page). A chunk of any other layout is left to parquet-go
// (colReader's fallback); a damaged chunk is an error, found before
// anything is sized from it.

// A page header is read by pqheader (a small window, a larger one for a
// long header); a header longer than pqheader.Max is not the store's (its
// headers take about 30 bytes): the chunk is left to parquet-go.

// snappyRatio bounds how many times its size a Snappy block decodes to
// (a copy of 64 bytes takes 3 bytes: at most 21.3 times, plus the header).
const snappyRatio = 22

// errUnsupported marks a column chunk of a layout chunkReader does not
// decode (another codec, page kind or encoding): read by parquet-go.
var errUnsupported = errors.New("column chunk layout left to parquet-go")

// pageInfo locates one data page of the current chunk.
type pageInfo struct {
	at   int64 // the file offset of the page body
	size int   // the body's bytes
	raw  int   // its uncompressed size
	rows int   // its rows (values, nulls included)
	dict bool  // its values are dictionary indices
}

// chunkReader decodes the column chunks of one column file written by the
// store (see above), a chunk at a time.
type chunkReader struct {
	f     io.ReaderAt
	size  int64 // of the file
	kind  kind
	phys  format.Type
	codec format.CompressionCodec
	// page holds the current page's body as stored, raw uncompressed
	// (when the chunk is compressed).
	page  []byte
	raw   []byte
	pages []pageInfo
	next  int // index of the next page in pages
	// The current page: rows left, its definition levels, its values not
	// yet read (PLAIN; bit is the next boolean's bit in vals), or its
	// dictionary indices (idx, when dict).
	left   int
	levels hybrid
	vals   []byte
	bit    uint
	dict   bool
	idx    hybrid
	// The chunk's dictionary, by the kind of the column; codeDict stands
	// for a float one in the codes of the rows read (see Column).
	codeDict *codeDict
	dictF    []float64
	dictI    []int64
	dictU    []uint64
	dictS    []string
	// ph reads page headers into h (reused).
	ph *pqheader.Reader
	h  format.PageHeader
}

// newChunkReader returns a chunkReader of a column file of type t and
// size bytes.
func newChunkReader(f io.ReaderAt, size int64, t DataType) *chunkReader {
	k, _ := kindOf(t)
	return &chunkReader{f: f, size: size, kind: k, phys: formatType(t), ph: pqheader.New(f)}
}

// formatType is the Parquet physical type of a data type's values.
func formatType(t DataType) format.Type {
	switch t {
	case blockmodel.Boolean:
		return format.Boolean
	case blockmodel.Int64, blockmodel.Timestamp, blockmodel.UInt64:
		return format.Int64
	case blockmodel.Float16, blockmodel.Float32:
		return format.Float
	case blockmodel.Float64:
		return format.Double
	case blockmodel.Utf8:
		return format.ByteArray
	}
	return format.Int32
}

// open makes column chunk cc of a row group of rows rows current: it reads
// its page headers, checks each against the chunk's bytes and the rows,
// and reads and decodes its dictionary. errUnsupported: the chunk is left
// to parquet-go.
func (c *chunkReader) open(cc *format.ColumnChunk, rows int64) error {
	c.pages, c.next, c.left = c.pages[:0], 0, 0
	md := &cc.MetaData
	if md.Codec != format.Uncompressed && md.Codec != format.Snappy {
		return errUnsupported
	}
	if md.Type != c.phys {
		return errUnsupported
	}
	c.codec = md.Codec
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	n := md.TotalCompressedSize
	if start < 4 || n < 0 || start > c.size || n > c.size-start {
		return fmt.Errorf("column chunk of %d bytes at %d, past the file's %d bytes", n, start, c.size)
	}
	end := start + n
	var dict pageInfo // the dictionary page, when hasDict
	hasDict := false
	var dictValues int
	var total int64
	for off := start; off < end; {
		hlen, err := c.header(off, end)
		if err != nil {
			return fmt.Errorf("page header at %d of the column chunk: %w", off-start, err)
		}
		h := &c.h
		off += int64(hlen)
		size, raw := int(h.CompressedPageSize), int(h.UncompressedPageSize)
		if size < 0 || int64(size) > end-off {
			return fmt.Errorf("page of %d bytes at %d, past the column chunk's %d bytes", size, off-start, n)
		}
		if raw < 0 || (c.codec == format.Uncompressed && raw != size) {
			return fmt.Errorf("page of %d bytes declares %d uncompressed", size, raw)
		}
		p := pageInfo{at: off, size: size, raw: raw}
		off += int64(size)
		switch h.Type {
		case format.DictionaryPage:
			dh, ok := h.DictionaryPageHeader.Get()
			if !ok {
				return errors.New("dictionary page without its header")
			}
			if len(c.pages) > 0 || hasDict || c.kind == kBool ||
				(dh.Encoding != format.Plain && dh.Encoding != format.PlainDictionary) {
				return errUnsupported
			}
			dict, dictValues, hasDict = p, int(dh.NumValues), true
		case format.DataPage:
			dh, ok := h.DataPageHeader.Get()
			if !ok {
				return errors.New("data page without its header")
			}
			switch dh.Encoding {
			case format.Plain:
			case format.RLEDictionary, format.PlainDictionary:
				if !hasDict {
					return errors.New("dictionary-encoded page without a dictionary page")
				}
				p.dict = true
			default:
				return errUnsupported
			}
			if dh.DefinitionLevelEncoding != format.RLE {
				return errUnsupported
			}
			if dh.NumValues < 0 || int64(dh.NumValues) > rows-total {
				return fmt.Errorf("data page of %d values past the row group's %d rows", dh.NumValues, rows)
			}
			total += int64(dh.NumValues)
			p.rows = int(dh.NumValues)
			c.pages = append(c.pages, p)
		default:
			return errUnsupported // data pages v2, index pages
		}
	}
	if total != rows {
		return fmt.Errorf("column chunk of %d values for %d rows", total, rows)
	}
	// the page buffer at the size of the largest page, at once
	most := 0
	for _, p := range c.pages {
		most = max(most, p.size)
	}
	c.page = reserve(c.page, most)
	if hasDict {
		body, err := c.body(dict)
		if err != nil {
			return err
		}
		if err := c.decodeDict(body, dictValues); err != nil {
			return err
		}
		if c.kind == kFloat {
			c.codeDict = &codeDict{size: dictValues}
		}
	}
	return nil
}

// header reads and parses the page header at file offset off (of a chunk
// ending at end) into c.h; it returns the header's length.
func (c *chunkReader) header(off, end int64) (int, error) {
	n, err := c.ph.Read(off, end, &c.h)
	if errors.Is(err, pqheader.ErrTooLong) {
		return 0, errUnsupported
	}
	return n, err
}

// readAt reads len(b) bytes of the file at off.
func (c *chunkReader) readAt(b []byte, off int64) error {
	if k, err := c.f.ReadAt(b, off); k < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read column chunk: %w", err)
	}
	return nil
}

// body reads page p and returns its body uncompressed (in c.raw when
// compressed, after checking its size against Snappy's own length header
// and against what Snappy can expand the page to).
func (c *chunkReader) body(p pageInfo) ([]byte, error) {
	c.page = reserve(c.page, p.size)[:p.size]
	if err := c.readAt(c.page, p.at); err != nil {
		return nil, err
	}
	b := c.page
	if c.codec == format.Uncompressed {
		return b, nil
	}
	n, err := s2.DecodedLen(b)
	if err != nil {
		return nil, fmt.Errorf("snappy page: %w", err)
	}
	if n != p.raw || n > snappyRatio*len(b)+16 {
		return nil, fmt.Errorf("snappy page of %d bytes decodes to %d, declares %d", len(b), n, p.raw)
	}
	c.raw = reserve(c.raw, p.raw)[:p.raw]
	out, err := s2.Decode(c.raw, b)
	if err != nil || len(out) != p.raw {
		return nil, fmt.Errorf("snappy page: %w", errors.Join(err, s2.ErrCorrupt))
	}
	return out, nil
}

// decodeDict decodes a PLAIN dictionary page of n values into the
// dictionary slice of the column's kind.
func (c *chunkReader) decodeDict(b []byte, n int) error {
	width := 0
	switch c.phys {
	case format.Int32, format.Float:
		width = 4
	case format.Int64, format.Double:
		width = 8
	case format.ByteArray:
		width = 4 // at least: its length
	}
	if n < 0 || width == 0 || n > len(b)/width {
		return fmt.Errorf("dictionary of %d values in %d bytes", n, len(b))
	}
	switch {
	case c.phys == format.Double:
		c.dictF = reserve(c.dictF, n)[:n]
		for i := range c.dictF {
			c.dictF[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case c.phys == format.Float:
		c.dictF = reserve(c.dictF, n)[:n]
		for i := range c.dictF {
			c.dictF[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case c.phys == format.Int32 && c.kind == kInt:
		c.dictI = reserve(c.dictI, n)[:n]
		for i := range c.dictI {
			c.dictI[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case c.phys == format.Int32:
		c.dictU = reserve(c.dictU, n)[:n]
		for i := range c.dictU {
			c.dictU[i] = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case c.phys == format.Int64 && c.kind == kInt:
		c.dictI = reserve(c.dictI, n)[:n]
		for i := range c.dictI {
			c.dictI[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case c.phys == format.Int64:
		c.dictU = reserve(c.dictU, n)[:n]
		for i := range c.dictU {
			c.dictU[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	default: // ByteArray
		clear(c.dictS)
		c.dictS = reserve(c.dictS, n)[:n]
		for i := range c.dictS {
			s, rest, err := plainString(b)
			if err != nil {
				return fmt.Errorf("dictionary value %d: %w", i, err)
			}
			c.dictS[i], b = s, rest
		}
	}
	return nil
}

// grow returns s extended by n elements (their values unset).
func grow[T any](s []T, n int) []T {
	at := len(s)
	return slices.Grow(s, n)[:at+n]
}

// reserve returns s emptied, with room for n elements: an eighth more
// than n when it grows, as pages vary in size (with their nulls, their
// runs), so that a buffer sized by one chunk's largest page seldom grows
// again for the next chunk's.
func reserve[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:0]
	}
	return make([]T, 0, n+n/8)
}

// plainString reads one PLAIN byte array (a 4-byte length, the bytes)
// from b; it returns the string and the rest of b.
func plainString(b []byte) (string, []byte, error) {
	if len(b) < 4 {
		return "", nil, io.ErrUnexpectedEOF
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return "", nil, fmt.Errorf("string of %d bytes past the page's %d", n, len(b)-4)
	}
	return string(b[4 : 4+n]), b[4+n:], nil
}

// startPage makes the next page of the chunk current.
func (c *chunkReader) startPage() error {
	p := c.pages[c.next]
	c.next++
	b, err := c.body(p)
	if err != nil {
		return err
	}
	if len(b) < 4 {
		return fmt.Errorf("data page of %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return fmt.Errorf("definition levels of %d bytes past the page's %d", n, len(b)-4)
	}
	c.levels.reset(b[4:4+n], 1)
	c.vals, c.bit, c.dict = b[4+n:], 0, p.dict
	if p.dict {
		if len(c.vals) == 0 {
			c.idx.reset(nil, 0) // no bit width: no value (an index is an error)
		} else {
			w := c.vals[0]
			if w > 32 {
				return fmt.Errorf("dictionary indices of %d bits", w)
			}
			c.idx.reset(c.vals[1:], uint(w))
		}
	}
	c.left = p.rows
	return nil
}

// done reports whether every row of the chunk has been read.
func (c *chunkReader) done() bool {
	return c.left == 0 && c.next == len(c.pages)
}

// read appends up to n rows of the chunk to dst; it returns the number
// appended (less than n only at the end of the chunk).
func (c *chunkReader) read(dst *Column, n int) (int, error) {
	got := 0
	for got < n {
		if c.left == 0 {
			if c.next == len(c.pages) {
				break
			}
			if err := c.startPage(); err != nil {
				return got, err
			}
			continue
		}
		k := min(n-got, c.left)
		if err := c.decode(dst, k); err != nil {
			return got, err
		}
		c.left -= k
		got += k
	}
	return got, nil
}

// skip moves up to n rows forward in the chunk; whole pages are skipped
// from their headers. It returns the rows skipped (less than n only at the
// end of the chunk).
func (c *chunkReader) skip(n int64) (int64, error) {
	var done int64
	for done < n {
		if c.left == 0 {
			if c.next == len(c.pages) {
				break
			}
			if p := c.pages[c.next]; int64(p.rows) <= n-done {
				c.next++
				done += int64(p.rows)
				continue
			}
			if err := c.startPage(); err != nil {
				return done, err
			}
			continue
		}
		k := int(min(n-done, int64(c.left)))
		if err := c.skipRows(k); err != nil {
			return done, err
		}
		c.left -= k
		done += int64(k)
	}
	return done, nil
}

// errPageValues is the error of a page whose values end before its levels
// say.
var errPageValues = errors.New("data page ends before its values")

// decode appends the next k rows of the current page to dst.
func (c *chunkReader) decode(dst *Column, k int) error {
	dst.Null = grow(dst.Null, k)
	nulls := dst.Null[len(dst.Null)-k:]
	m, err := c.levels.nulls(nulls)
	if err != nil {
		return fmt.Errorf("definition levels: %w", err)
	}
	switch c.kind {
	case kFloat:
		at := len(dst.Floats)
		dst.Floats = grow(dst.Floats, k)
		if c.dict { // values and their codes (see Column)
			dst.codesFrom(at, c.codeDict)
			dst.codes = grow(dst.codes, k)
			return c.floatCodes(dst.Floats[at:], dst.codes[at:], nulls, m)
		}
		dst.uncoded(at)
		return fill(dst.Floats[at:], nulls, m, math.NaN(), c.floats)
	case kInt:
		dst.Ints = grow(dst.Ints, k)
		return fill(dst.Ints[len(dst.Ints)-k:], nulls, m, 0, c.ints)
	case kUint:
		dst.Uints = grow(dst.Uints, k)
		return fill(dst.Uints[len(dst.Uints)-k:], nulls, m, 0, c.uints)
	case kBool:
		dst.Bools = grow(dst.Bools, k)
		return fill(dst.Bools[len(dst.Bools)-k:], nulls, m, false, c.bools)
	default:
		dst.Strings = grow(dst.Strings, k)
		return fill(dst.Strings[len(dst.Strings)-k:], nulls, m, "", c.strings)
	}
}

// fill sets the rows of out: null where nulls says, elsewhere the next
// values decoded by vals (m in all), a run of rows with values at a time.
func fill[T any](out []T, nulls []bool, m int, null T, vals func([]T) error) error {
	if m == len(out) {
		return vals(out)
	}
	nb := asBytes(nulls[:len(out)])
	for i := 0; i < len(out); {
		run := nextNull(nb, i) - i // rows with values before the next null
		if run > 0 {
			if err := vals(out[i : i+run]); err != nil {
				return err
			}
			i += run
		}
		for ; i < len(out) && nulls[i]; i++ {
			out[i] = null
		}
	}
	return nil
}

// nextNull returns the index of the first non-zero byte of b from i (a
// null flag), len(b) if none: a word at a time, as runs between nulls are
// short (tens of rows) for IndexByte's setup to pay.
func nextNull(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if x := binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return i
		}
	}
	return len(b)
}

// skipRows skips the next k rows of the current page.
func (c *chunkReader) skipRows(k int) error {
	m, err := c.levels.skip(k)
	if err != nil {
		return fmt.Errorf("definition levels: %w", err)
	}
	if c.dict {
		if err := c.idx.skipValues(m); err != nil {
			return fmt.Errorf("dictionary indices: %w", err)
		}
		return nil
	}
	switch c.phys {
	case format.Boolean:
		if uint64(c.bit)+uint64(m) > 8*uint64(len(c.vals)) {
			return errPageValues
		}
		c.bit += uint(m)
	case format.ByteArray:
		for range m {
			if len(c.vals) < 4 {
				return errPageValues
			}
			n := binary.LittleEndian.Uint32(c.vals)
			if uint64(n) > uint64(len(c.vals)-4) {
				return errPageValues
			}
			c.vals = c.vals[4+n:]
		}
	default:
		w := 4
		if c.phys == format.Int64 || c.phys == format.Double {
			w = 8
		}
		if m > len(c.vals)/w {
			return errPageValues
		}
		c.vals = c.vals[m*w:]
	}
	return nil
}

// plainFixed returns the next n values of w bytes of a PLAIN page.
func (c *chunkReader) plainFixed(n, w int) ([]byte, error) {
	if n > len(c.vals)/w {
		return nil, errPageValues
	}
	b := c.vals[:n*w]
	c.vals = c.vals[n*w:]
	return b, nil
}

// floatCodes decodes the next rows of a dictionary page, m of them with a
// value (nulls says which), into their values (out) and codes: a run of
// rows with values at a time, as fill does.
func (c *chunkReader) floatCodes(out []float64, codes []uint32, nulls []bool, m int) error {
	dict := c.dictF
	nb := asBytes(nulls[:len(out)])
	for i := 0; i < len(out); {
		run := len(out) - i // rows with values before the next null
		if m < len(out) {
			run = nextNull(nb, i) - i
		}
		if run > 0 {
			cs := codes[i : i+run]
			if err := c.idx.indices(cs, len(dict)); err != nil {
				return fmt.Errorf("dictionary indices: %w", err)
			}
			o := out[i : i+run]
			o = o[:len(cs)]
			for r, v := range cs {
				o[r] = dict[v]
			}
			i += run
		}
		for ; i < len(out) && nulls[i]; i++ {
			out[i], codes[i] = math.NaN(), 0
		}
	}
	return nil
}

// floats decodes the next len(out) values of a PLAIN page into out (a
// dictionary page's go through floatCodes).
func (c *chunkReader) floats(out []float64) error {
	if c.phys == format.Double {
		return plain8(c, out, math.Float64frombits)
	}
	b, err := c.plainFixed(len(out), 4)
	if err != nil {
		return err
	}
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return nil
}

// plain8 decodes the next len(out) PLAIN values of 8 bytes (INT64,
// DOUBLE) into out: copied as they are on a little-endian machine, else
// each converted from its little-endian bits.
func plain8[T any](c *chunkReader, out []T, conv func(uint64) T) error {
	b, err := c.plainFixed(len(out), 8)
	if err != nil {
		return err
	}
	if littleEndian() {
		copy(asBytes(out), b)
		return nil
	}
	for i := range out {
		out[i] = conv(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

// ints decodes the next len(out) values of the page into out (INT32
// values sign-extended).
func (c *chunkReader) ints(out []int64) error {
	return integers(c, out, c.dictI, true)
}

// uints decodes the next len(out) values of the page into out (INT32
// values as unsigned 32-bit ones).
func (c *chunkReader) uints(out []uint64) error {
	return integers(c, out, c.dictU, false)
}

// integers decodes the next len(out) values of an integer page into out:
// dictionary indices looked up in dict, PLAIN INT64 values as they are,
// PLAIN INT32 values sign-extended when signed, else zero-extended (a
// loop each, no call a value).
func integers[T int64 | uint64](c *chunkReader, out, dict []T, signed bool) error {
	if c.dict {
		return lookup(&c.idx, dict, out)
	}
	if c.phys == format.Int64 {
		return plain8(c, out, func(x uint64) T { return T(x) })
	}
	b, err := c.plainFixed(len(out), 4)
	if err != nil {
		return err
	}
	if signed {
		for i := range out {
			out[i] = T(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return nil
	}
	for i := range out {
		out[i] = T(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

// bools decodes the next len(out) values of the page into out (PLAIN:
// one bit a value, lowest first).
func (c *chunkReader) bools(out []bool) error {
	if uint64(c.bit)+uint64(len(out)) > 8*uint64(len(c.vals)) {
		return errPageValues
	}
	bit := c.bit
	for i := range out {
		out[i] = c.vals[bit>>3]>>(bit&7)&1 != 0
		bit++
	}
	c.bit = bit
	return nil
}

// strings decodes the next len(out) values of the page into out.
func (c *chunkReader) strings(out []string) error {
	if c.dict {
		return lookup(&c.idx, c.dictS, out)
	}
	for i := range out {
		s, rest, err := plainString(c.vals)
		if err != nil {
			return err
		}
		out[i], c.vals = s, rest
	}
	return nil
}

// hybrid decodes a stream of values in Parquet's RLE/bit-packed hybrid
// encoding (definition levels, dictionary indices), a run at a time, so
// that a page can be read in several calls.
type hybrid struct {
	data  []byte // the runs not yet started
	width uint   // bits a value, 0 to 32
	left  int    // values left in the current run
	rle   bool   // the current run is an RLE run (else bit-packed)
	value uint32 // the value of the current RLE run
	bits  []byte // the bytes of the current bit-packed run
	off   uint   // the bit of its next value in bits
}

// maxRunValues bounds the values of one run taken from its header (a
// page has at most math.MaxInt32 values; a longer run is never used up).
const maxRunValues = math.MaxInt32

// reset starts decoding data, values of width bits.
func (h *hybrid) reset(data []byte, width uint) {
	*h = hybrid{data: data, width: width}
}

// errRuns is the error of a hybrid stream that ends before its values.
var errRuns = errors.New("RLE/bit-packed runs end before the page's values")

// run starts the next run.
func (h *hybrid) run() error {
	if len(h.data) == 0 {
		return errRuns
	}
	head, n := binary.Uvarint(h.data)
	if n <= 0 {
		return errors.New("bad RLE/bit-packed run header")
	}
	h.data = h.data[n:]
	if head&1 == 0 { // RLE: a count, the value in whole bytes
		vb := int(h.width+7) / 8
		if len(h.data) < vb {
			return errRuns
		}
		var v uint32
		for i := range vb {
			v |= uint32(h.data[i]) << (8 * i)
		}
		if h.width < 32 && v>>h.width != 0 {
			return fmt.Errorf("RLE run value %d wider than %d bits", v, h.width)
		}
		h.data = h.data[vb:]
		h.rle, h.value, h.left = true, v, int(min(head>>1, maxRunValues))
		return nil
	}
	// bit-packed: groups of 8 values; a last run cut short by the end of
	// the page keeps the values it has
	groups := head >> 1
	nb := uint64(len(h.data))
	if h.width > 0 && groups <= nb/uint64(h.width) {
		nb = groups * uint64(h.width)
	}
	values := uint64(maxRunValues)
	if groups < maxRunValues/8 {
		values = groups * 8
	}
	if h.width > 0 {
		values = min(values, nb*8/uint64(h.width))
	} else {
		nb = 0
	}
	h.rle, h.bits, h.off, h.left = false, h.data[:nb], 0, int(values)
	h.data = h.data[nb:]
	return nil
}

// word returns the 64 bits of b from byte pos (zeros past its end).
func word(b []byte, pos uint) uint64 {
	if uint64(pos)+8 <= uint64(len(b)) {
		return binary.LittleEndian.Uint64(b[pos:])
	}
	var x uint64
	for i := uint(0); pos+i < uint(len(b)) && i < 8; i++ {
		x |= uint64(b[pos+i]) << (8 * i)
	}
	return x
}

// nulls decodes the next len(out) definition levels (bit width 1) as null
// flags (level 0: null); it returns the number of values (level 1).
func (h *hybrid) nulls(out []bool) (int, error) {
	present := 0
	for len(out) > 0 {
		if h.left == 0 {
			if err := h.run(); err != nil {
				return 0, err
			}
			continue
		}
		t := min(h.left, len(out))
		if h.rle {
			if h.value == 0 {
				for i := range out[:t] {
					out[i] = true
				}
			} else {
				clear(out[:t])
				present += t
			}
		} else {
			present += h.unpackNulls(out[:t])
		}
		h.left -= t
		out = out[t:]
	}
	return present, nil
}

// unpackNulls decodes len(out) levels of the current bit-packed run of
// width 1 as null flags; it returns the number of values.
func (h *hybrid) unpackNulls(out []bool) int {
	present, off, b := 0, h.off, h.bits
	i := 0
	for ; i < len(out) && off&7 != 0; i++ {
		x := b[off>>3] >> (off & 7) & 1
		out[i] = x == 0
		present += int(x)
		off++
	}
	ob := asBytes(out)
	for ; i+8 <= len(out); i += 8 {
		x := b[off>>3]
		// the 8 bits of x, one a byte, lowest first
		s := uint64(x)
		s = (s | s<<28) & 0x0000000f0000000f
		s = (s | s<<14) & 0x0003000300030003
		s = (s | s<<7) & 0x0101010101010101
		binary.LittleEndian.PutUint64(ob[i:], s^0x0101010101010101)
		present += bits.OnesCount8(x)
		off += 8
	}
	for ; i < len(out); i++ {
		x := b[off>>3] >> (off & 7) & 1
		out[i] = x == 0
		present += int(x)
		off++
	}
	h.off = off
	return present
}

// skip moves n levels (bit width 1) forward; it returns the number of
// values among them (level 1).
func (h *hybrid) skip(n int) (int, error) {
	present := 0
	for n > 0 {
		if h.left == 0 {
			if err := h.run(); err != nil {
				return 0, err
			}
			continue
		}
		t := min(h.left, n)
		if h.rle {
			present += t * int(h.value)
		} else {
			for range t {
				present += int(h.bits[h.off>>3] >> (h.off & 7) & 1)
				h.off++
			}
		}
		h.left -= t
		n -= t
	}
	return present, nil
}

// skipValues moves n values forward, of any width.
func (h *hybrid) skipValues(n int) error {
	for n > 0 {
		if h.left == 0 {
			if err := h.run(); err != nil {
				return err
			}
			continue
		}
		t := min(h.left, n)
		if !h.rle {
			h.off += uint(t) * h.width
		}
		h.left -= t
		n -= t
	}
	return nil
}

// indices decodes the next len(out) dictionary indices of h into out; an
// index of n or more is an error.
func (h *hybrid) indices(out []uint32, n int) error {
	for len(out) > 0 {
		if h.left == 0 {
			if err := h.run(); err != nil {
				return err
			}
			continue
		}
		t := min(h.left, len(out))
		if h.rle {
			if uint64(h.value) >= uint64(n) {
				return fmt.Errorf("dictionary index %d of %d values", h.value, n)
			}
			for i := range out[:t] {
				out[i] = h.value
			}
		} else if err := h.unpackIndices(out[:t], n); err != nil {
			return err
		}
		h.left -= t
		out = out[t:]
	}
	return nil
}

// unpackIndices decodes len(out) indices of h's current bit-packed run
// into out; an index of n or more is an error.
func (h *hybrid) unpackIndices(out []uint32, n int) error {
	b, off, w := h.bits, h.off, h.width
	mask := uint64(1)<<w - 1
	i := 0
	if littleEndian() && len(b) >= 8 {
		// the values whose word (8 bytes from their first) is in b,
		// loaded without a bounds check
		base, last := unsafe.Pointer(unsafe.SliceData(b)), uint(len(b)-8)
		for ; i < len(out) && off>>3 <= last; i++ {
			v := *(*uint64)(unsafe.Add(base, off>>3)) >> (off & 7) & mask
			if v >= uint64(n) {
				return fmt.Errorf("dictionary index %d of %d values", v, n)
			}
			out[i] = uint32(v)
			off += w
		}
	}
	for ; i < len(out); i++ {
		v := word(b, off>>3) >> (off & 7) & mask
		if v >= uint64(n) {
			return fmt.Errorf("dictionary index %d of %d values", v, n)
		}
		out[i] = uint32(v)
		off += w
	}
	h.off = off
	return nil
}

// lookup decodes the next len(out) dictionary indices of h into their
// values in dict; an index outside dict is an error. The indices go
// through h.indices a chunk at a time, then to their values.
func lookup[T any](h *hybrid, dict []T, out []T) error {
	var idx [512]uint32
	for len(out) > 0 {
		k := min(len(out), len(idx))
		if err := h.indices(idx[:k], len(dict)); err != nil {
			return fmt.Errorf("dictionary indices: %w", err)
		}
		for i, v := range idx[:k] {
			out[i] = dict[v]
		}
		out = out[k:]
	}
	return nil
}
