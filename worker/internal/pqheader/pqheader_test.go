package pqheader

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func header(t *testing.T, h format.PageHeader) []byte {
	t.Helper()
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	require.NoError(t, err)
	return b
}

// A short header is read from the first window; one with statistics past
// Window from the second; one past Max, garbage and a cut header are
// errors.
func TestRead(t *testing.T) {
	short := header(t, format.PageHeader{Type: format.DataPage, CompressedPageSize: 7, UncompressedPageSize: 9})
	stats := func(n int) []byte {
		v := []byte(strings.Repeat("x", n))
		return header(t, format.PageHeader{Type: format.DataPage, CompressedPageSize: 1, UncompressedPageSize: 1,
			DataPageHeader: thrift.New(format.DataPageHeader{NumValues: 1, Statistics: format.Statistics{MaxValue: v, MinValue: v}})})
	}
	long, tooLong := stats(1000), stats(Max)
	file := append(append(append([]byte("PAR1"), short...), long...), tooLong...)
	r := New(bytes.NewReader(file))
	end := int64(len(file))
	var h format.PageHeader
	n, err := r.Read(4, end, &h)
	require.NoError(t, err)
	assert.Equal(t, len(short), n)
	assert.Equal(t, int32(9), h.UncompressedPageSize)
	n, err = r.Read(int64(4+len(short)), end, &h)
	require.NoError(t, err)
	assert.Equal(t, len(long), n)
	assert.Len(t, h.DataPageHeader.V.Statistics.MaxValue, 1000)
	_, err = r.Read(int64(4+len(short)+len(long)), end, &h)
	assert.ErrorIs(t, err, ErrTooLong)
	_, err = r.Read(4, int64(4+len(short)-2), &h)
	assert.Error(t, err, "a header cut by the chunk's end")
	garbage := append([]byte("PAR1"), bytes.Repeat([]byte{0xff}, 64)...)
	_, err = New(bytes.NewReader(garbage)).Read(4, int64(len(garbage)), &h)
	assert.ErrorContains(t, err, "bad page header")
	_, err = New(bytes.NewReader(file[:10])).Read(4, end, &h)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a file shorter than the chunk")
}
