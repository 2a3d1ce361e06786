package bmstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/stretchr/testify/require"
)

// TestPageSnappyRoundTrip: pages compressed by the store's Snappy codec
// decode with parquet-go's Snappy codec to the same bytes (empty, tiny,
// compressible and incompressible pages, reusing the destination), and
// compressible pages shrink.
func TestPageSnappyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ref := &snappy.Codec{}
	var enc []byte
	for _, size := range []int{0, 1, 15, 1000, 256 << 10, 3 << 20} {
		for _, compressible := range []bool{true, false} {
			src := make([]byte, size)
			for i := range src {
				if compressible {
					src[i] = byte(i / 8 % 32) // runs and repeats
				} else {
					src[i] = byte(rng.Uint32())
				}
			}
			var err error
			enc, err = pageCodec.Encode(enc, src)
			require.NoError(t, err)
			dec, err := ref.Decode(nil, enc)
			require.NoError(t, err)
			require.True(t, bytes.Equal(src, dec), "size %d compressible %v", size, compressible)
			if compressible && size >= 1000 {
				require.Less(t, len(enc), size*3/4, "size %d", size)
			}
		}
	}
}
