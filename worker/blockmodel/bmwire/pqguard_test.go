package bmwire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/geostat-engine/geostat/worker/internal/pqheader"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkOf is a column chunk of one data page: 4 bytes of file magic, the
// page header, the body.
func chunkOf(t *testing.T, codec format.CompressionCodec, raw int32, body []byte) ([]byte, *format.ColumnMetaData) {
	t.Helper()
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: raw, CompressedPageSize: int32(len(body))}
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	require.NoError(t, err)
	file := append(append([]byte("PAR1"), hb...), body...)
	return file, &format.ColumnMetaData{Codec: codec, DataPageOffset: 4, TotalCompressedSize: int64(len(hb) + len(body))}
}

func check(t *testing.T, file []byte, md *format.ColumnMetaData) error {
	t.Helper()
	r := bytes.NewReader(file)
	return checkChunk(r, int64(len(file)), md, pqheader.New(r))
}

// Pages whose decoding cannot be bounded, or is bounded past MaxPageBytes,
// are refused before parquet-go reads them; ordinary pages pass.
func TestCheckPages(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	zeros := make([]byte, 100<<20)
	bomb := enc.EncodeAll(zeros, nil) // declares its 100 MiB
	var stream bytes.Buffer           // no declared size: its blocks bound it
	sw, err := zstd.NewWriter(&stream, zstd.WithWindowSize(1<<20))
	require.NoError(t, err)
	_, err = sw.Write(zeros)
	require.NoError(t, err)
	require.NoError(t, sw.Close())
	page := bytes.Repeat([]byte("grade,1.25;"), 1<<16)
	small := enc.EncodeAll(page, nil)
	require.NoError(t, enc.Close())

	for _, c := range []struct {
		name  string
		codec format.CompressionCodec
		raw   int32
		body  []byte
		want  string
	}{
		{"declared size", format.Uncompressed, 100 << 20, []byte("0123456789"), "declares 104857600 bytes uncompressed"},
		{"snappy length", format.Snappy, 10, []byte{0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0}, "Snappy page decodes to 2147483648 bytes"},
		{"snappy without length", format.Snappy, 10, []byte{0x80}, "without its length"},
		{"zstd content size", format.Zstd, 1 << 20, bomb, "declares 104857600 bytes"},
		{"zstd blocks", format.Zstd, 1 << 20, stream.Bytes(), "can decode to"},
		{"zstd garbage", format.Zstd, 1 << 20, []byte("not a zstd frame"), "zstd frame"},
		{"gzip", format.Gzip, 10, []byte("0123456789"), "compressed with GZIP are not read"},
	} {
		file, md := chunkOf(t, c.codec, c.raw, c.body)
		err := check(t, file, md)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	file, md := chunkOf(t, format.Zstd, int32(len(page)), small)
	assert.NoError(t, check(t, file, md), "an ordinary zstd page")
	file, md = chunkOf(t, format.Uncompressed, 10, []byte("0123456789"))
	assert.NoError(t, check(t, file, md))
	md.TotalCompressedSize--
	assert.ErrorContains(t, check(t, file, md), "past its column chunk")
	md.TotalCompressedSize += 100
	assert.ErrorContains(t, check(t, file, md), "past the file")
}

// A whole file: its codec is named in the update's error.
func TestParquetCodecRefused(t *testing.T) {
	r := writeParquet(t, []ijkCu{{0, 0, 0, fp(1)}}, parquet.Compression(&gzip.Codec{}))
	_, _, err := readAll(t, r, cuSpec)
	assert.Equal(t, []string{`column "i", row group 0: pages compressed with GZIP are not read (use Snappy, the default of pyarrow, zstd or none)`},
		messages(fileErr(t, err)))
}

// Any bytes read as a Parquet update file give rows or a file error: never
// a panic, nor a page sized past MaxPageBytes.
func FuzzReadParquet(f *testing.F) {
	type row struct {
		I  uint32   `parquet:"i,dict"`
		J  uint32   `parquet:"j"`
		K  uint32   `parquet:"k"`
		Cu *float64 `parquet:"cu,optional"`
	}
	one := 1.5
	rows := []row{{0, 0, 0, &one}, {1, 0, 0, nil}, {2, 1, 1, &one}}
	f.Add(parquetBytes(f, rows))
	f.Add(parquetBytes(f, rows, parquet.Compression(&parquet.Zstd)))
	f.Add(parquetBytes(f, rows, parquet.Compression(&parquet.Snappy), parquet.DataPageVersion(1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		_, err := Read(r, r.Size(), cuSpec, grid, NewCollector(cuSpec.Columns))
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("not a file error: %v", err)
			}
		}
	})
}

// A footer length past the file is an error before parquet-go sizes a
// buffer by it (it would allocate up to 4 GiB).
func TestParquetForgedFooterLength(t *testing.T) {
	b := parquetBytes(t, []ijkCu{{0, 0, 0, fp(1)}})
	copy(b[len(b)-8:], []byte{0xf0, 0xff, 0xff, 0xff})
	_, _, err := readAll(t, bytes.NewReader(b), cuSpec)
	msgs := messages(fileErr(t, err))
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "footer length 4294967280 exceeds the file size")
}
