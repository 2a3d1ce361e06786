package bmwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/geostat-engine/geostat/worker/internal/pqheader"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// MaxPageBytes bounds what one page of a Parquet update file may decode to
// (pyarrow writes pages of about 1 MiB). parquet-go sizes its buffers from
// a page's header and lets every codec expand a page as far as its bytes
// say, so ReadParquet bounds both from the file's page and frame headers
// before a page is read.
const MaxPageBytes = 64 << 20

// zstdBlockMax is the most a zstd block decodes to.
const zstdBlockMax = 128 << 10

// checkPages walks the page headers of the given leaf columns of every row
// group of f (a file of size bytes read through r) and refuses, naming the
// column (what), a chunk past the file, a page past its chunk, a page declaring
// more than MaxPageBytes, a Snappy page whose own header does, a zstd page
// whose frames can decode to more (window or blocks), and the codecs whose
// expansion cannot be bounded from a page's bytes (gzip, Brotli, LZ4, LZO).
func checkPages(r io.ReaderAt, size int64, f *parquet.File, leaves []int, what []string) error {
	ph := pqheader.New(r)
	for g, rg := range f.Metadata().RowGroups {
		for i, leaf := range leaves {
			if leaf >= len(rg.Columns) {
				return fmt.Errorf("%s: row group %d has no such column", what[i], g)
			}
			if err := checkChunk(r, size, &rg.Columns[leaf].MetaData, ph); err != nil {
				return fmt.Errorf("%s, row group %d: %w", what[i], g, err)
			}
		}
	}
	return nil
}

func checkChunk(r io.ReaderAt, size int64, md *format.ColumnMetaData, ph *pqheader.Reader) error {
	switch md.Codec {
	case format.Uncompressed, format.Snappy, format.Zstd:
	default:
		return fmt.Errorf("pages compressed with %s are not read (use Snappy, the default of pyarrow, zstd or none)", md.Codec)
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	n := md.TotalCompressedSize
	if start < 4 || n < 0 || start > size || n > size-start {
		return fmt.Errorf("a column chunk of %d bytes at %d is past the file's %d bytes", n, start, size)
	}
	for off, end := start, start+n; off < end; {
		var h format.PageHeader
		hlen, err := ph.Read(off, end, &h)
		if err != nil {
			return fmt.Errorf("the page header at %d: %w", off-start, err)
		}
		off += int64(hlen)
		comp, raw := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
		if comp < 0 || comp > end-off {
			return fmt.Errorf("a page of %d bytes at %d is past its column chunk", comp, off-start)
		}
		if raw < 0 || raw > MaxPageBytes {
			return fmt.Errorf("a page declares %d bytes uncompressed, more than %d", raw, MaxPageBytes)
		}
		body := off
		if v2, ok := h.DataPageHeaderV2.Get(); ok && h.Type == format.DataPageV2 {
			// The levels of a v2 page are not compressed.
			lv := int64(v2.RepetitionLevelsByteLength) + int64(v2.DefinitionLevelsByteLength)
			if lv < 0 || lv > comp || lv > raw {
				return fmt.Errorf("a page's levels of %d bytes are past the page", lv)
			}
			body += lv
			if v2.IsCompressed.Valid && !v2.IsCompressed.V {
				off += comp
				continue
			}
		}
		if err := checkBody(r, md.Codec, body, off+comp-body); err != nil {
			return fmt.Errorf("the page at %d: %w", off-start, err)
		}
		off += comp
	}
	return nil
}

// checkBody bounds what the compressed body of n bytes at off decodes to.
func checkBody(r io.ReaderAt, codec format.CompressionCodec, off, n int64) error {
	switch codec {
	case format.Snappy:
		var b [binary.MaxVarintLen32]byte
		k, _ := r.ReadAt(b[:min(int64(len(b)), n)], off)
		v, m := binary.Uvarint(b[:k])
		if m <= 0 {
			return errors.New("a Snappy page without its length")
		}
		if v > MaxPageBytes {
			return fmt.Errorf("a Snappy page decodes to %d bytes, more than %d", v, MaxPageBytes)
		}
	case format.Zstd:
		out, err := zstdBound(r, off, n)
		if err != nil {
			return err
		}
		if out > MaxPageBytes {
			return fmt.Errorf("a zstd page can decode to %d bytes, more than %d", out, MaxPageBytes)
		}
	}
	return nil
}

// zstdBound walks the zstd frames of the n bytes at off, reading only
// their frame and block headers, and returns a bound of what they decode
// to: raw and RLE blocks their size, a compressed block at most 128 KiB.
// A frame whose declared content size or window exceeds MaxPageBytes is
// refused.
func zstdBound(r io.ReaderAt, off, n int64) (int64, error) {
	var hb [zstd.HeaderMaxSize]byte
	var total int64
	for end := off + n; off < end; {
		k, err := r.ReadAt(hb[:min(int64(len(hb)), end-off)], off)
		if k == 0 {
			return 0, fmt.Errorf("reading a zstd frame: %w", orUnexpectedEOF(err))
		}
		var h zstd.Header
		if err := h.Decode(hb[:k]); err != nil {
			return 0, fmt.Errorf("a zstd frame: %w", err)
		}
		off += int64(h.HeaderSize)
		if h.Skippable {
			off += int64(h.SkippableSize)
			continue
		}
		// The decoder sizes its output from a declared content size, and
		// its window from the window size.
		if h.HasFCS && h.FrameContentSize > MaxPageBytes {
			return 0, fmt.Errorf("a zstd frame declares %d bytes, more than %d", h.FrameContentSize, MaxPageBytes)
		}
		if !h.SingleSegment && h.WindowSize > MaxPageBytes {
			return 0, fmt.Errorf("a zstd frame's window of %d bytes is more than %d", h.WindowSize, MaxPageBytes)
		}
		for last := false; !last; {
			var bh [3]byte
			if off+3 > end {
				return 0, errors.New("a zstd block header past the page")
			}
			if k, err := r.ReadAt(bh[:], off); k < 3 {
				return 0, fmt.Errorf("reading a zstd block header: %w", orUnexpectedEOF(err))
			}
			v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
			last = v&1 == 1
			size := int64(v >> 3)
			off += 3
			switch (v >> 1) & 3 {
			case 0: // raw
				total += size
				off += size
			case 1: // RLE: one byte repeated size times
				total += size
				off++
			case 2:
				total += zstdBlockMax
				off += size
			default:
				return 0, errors.New("a zstd block of the reserved type")
			}
			if total > MaxPageBytes {
				return total, nil
			}
		}
		if h.HasCheckSum {
			off += 4
		}
	}
	return total, nil
}

func orUnexpectedEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
