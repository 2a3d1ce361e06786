// Package pqheader reads the page headers of a Parquet column chunk from
// a file, for the readers that check a chunk's pages before anything is
// sized from them (the block model store's own column files, and update
// files before parquet-go reads them).
//
// A header is parsed from the first Window bytes at its offset, or Max
// when it is longer (statistics of long strings): a page costs one small
// read, whatever the size of its neighbours. Max also bounds the nesting
// of a garbage header, which parquet-go's thrift decodes recursively; its
// panics on garbage are errors here.
package pqheader

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The windows a header is parsed from.
const (
	Window = 256
	Max    = 16 << 10
)

// ErrTooLong is the error of a header that does not parse from Max bytes
// while the chunk holds more.
var ErrTooLong = fmt.Errorf("a page header longer than %d bytes", Max)

// Reader reads page headers from one file; its buffers are reused. A
// Reader is not safe for concurrent use.
type Reader struct {
	f   io.ReaderAt
	buf []byte
	hdr thrift.BytesReader
	dec *thrift.Decoder
}

// New returns a Reader of f.
func New(f io.ReaderAt) *Reader {
	r := &Reader{f: f}
	r.hdr = new(thrift.CompactProtocol).NewReaderFromBytes(nil)
	r.dec = thrift.NewDecoder(r.hdr)
	return r
}

// Read parses the page header at file offset off, of a chunk ending at
// end, into h and returns the header's length.
func (r *Reader) Read(off, end int64, h *format.PageHeader) (int, error) {
	var err error
	for _, w := range [...]int64{Window, Max} {
		w = min(w, end-off)
		if w <= 0 {
			return 0, io.ErrUnexpectedEOF
		}
		if int64(cap(r.buf)) < w {
			r.buf = make([]byte, w, Max)
		}
		b := r.buf[:w]
		if k, rerr := r.f.ReadAt(b, off); int64(k) < w {
			if rerr == nil || errors.Is(rerr, io.EOF) {
				rerr = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("read column chunk: %w", rerr)
		}
		var n int
		if n, err = r.parse(b, h); err == nil {
			return n, nil
		}
		if w == end-off || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			return 0, err // bad, or longer than the rest of the chunk
		}
	}
	return 0, ErrTooLong
}

// parse decodes the header at the start of b into h.
func (r *Reader) parse(b []byte, h *format.PageHeader) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bad page header: %v", p)
		}
	}()
	*h = format.PageHeader{}
	r.hdr.ResetBytes(b)
	if err := r.dec.Decode(h); err != nil {
		return 0, fmt.Errorf("bad page header: %w", err)
	}
	return r.hdr.BytesRead(), nil
}
