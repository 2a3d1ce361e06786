package objects

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdWindow is the window of the encoders of written pages. parquet-go's
// codec keeps zstd's default of 8 MiB at the default level, and an encoder
// then holds a 16 MiB history buffer (window plus one more) for pages of at
// most 256 KiB (pageRows): a few encoders made a third of a simulation
// job's live heap, and the pool drops them at every collection. A page never
// reaches back further than its own start, so a window of 1 MiB finds the
// same matches in a page of up to 1 MiB and the bytes are unchanged
// (TestZstdPageCodecBytes); an encoder holds 1 MiB of history.
const zstdWindow = 1 << 20

// pageZstd is the zstd codec of written pages: parquet-go's (level
// SpeedDefault, no checksum, empty input as a full frame) with a window of
// zstdWindow, from one pool of encoders. Decoding is parquet-go's.
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
			kzstd.WithEncoderLevel(kzstd.SpeedDefault),
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
