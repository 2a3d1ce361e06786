package bmstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/stretchr/testify/require"
)

// TestPageZstdRoundTrip: pages compressed by the store's codec decode with
// parquet-go's zstd codec to the same bytes, empty and larger than the
// window included, and compress as well as parquet-go's own at that level.
func TestPageZstdRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := &zstd.Codec{Level: zstd.SpeedFastest}
	for _, size := range []int{0, 1, 1000, 256 << 10, 3 << 20} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(rng.IntN(16)) // compressible
		}
		enc, err := zstdCodec.Encode(nil, src)
		require.NoError(t, err)
		require.NotEmpty(t, enc, "an empty page is a full frame")
		dec, err := ref.Decode(nil, enc)
		require.NoError(t, err)
		require.True(t, bytes.Equal(src, dec), "size %d", size)
		if size >= 1000 {
			want, err := ref.Encode(nil, src)
			require.NoError(t, err)
			require.LessOrEqual(t, len(enc), len(want)+len(want)/20+16, "size %d", size)
		}
	}
}
