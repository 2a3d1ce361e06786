package bmstore

import (
	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// pageSnappy is the Snappy codec of the store's pages and of query
// outputs: raw Snappy blocks (Parquet's SNAPPY, which every Parquet reader
// reads, pyarrow's default) encoded by s2's Snappy-compatible fast
// encoder. parquet-go's codec encodes through klauspost's snappy.Encode,
// which is s2's "better" mode: about three times slower for a few percent
// of size. Decoding is parquet-go's.
type pageSnappy struct {
	snappy.Codec
}

// Encode compresses src into dst as one raw Snappy block.
func (c *pageSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}
