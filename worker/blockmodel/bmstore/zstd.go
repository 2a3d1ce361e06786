package bmstore

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdWindow is the window of the encoders of the store's pages.
// parquet-go's codec keeps zstd's default window (8 MiB at its fastest
// level), and an encoder then holds a history buffer of twice that for
// pages of 256 KiB; with two row groups encoded at once that was most of a
// column writer's heap, and resetting the large history made an
// incompressible page (full-precision values, stored nearly raw) cost
// twice as much. A page never reaches back before its own start, so a
// 1 MiB window finds the same matches in a page of up to 1 MiB.
const zstdWindow = 1 << 20

// pageZstd is the zstd codec of the store's pages: level SpeedFastest,
// no checksum, empty input as a full frame (as parquet-go's codec), a
// window of zstdWindow, encoders from one pool. Decoding is parquet-go's.
type pageZstd struct {
	encoders sync.Pool // *kzstd.Encoder
	zstd.Codec
}

// Encode compresses src into dst[:0] as one zstd frame.
func (c *pageZstd) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(nil,
			kzstd.WithEncoderConcurrency(1),
			kzstd.WithWindowSize(zstdWindow),
			kzstd.WithEncoderLevel(kzstd.SpeedFastest),
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false),
		)
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}
