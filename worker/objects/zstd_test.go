package objects

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The page codec's smaller window leaves the bytes of every page size a
// writer makes (up to a page of 256 KiB, and up to the window) as
// parquet-go's codec writes them, on data that compresses little
// (independent draws), much (a smooth field, runs of NaN, a repeating
// block) and not at all, and the frames decode back.
func TestZstdPageCodecBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	floats := func(n int, f func(i int) float64) []byte {
		b := make([]byte, 8*n)
		for i := range n {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(f(i)))
		}
		return b
	}
	period := make([]float64, 5000) // repeats every 40,000 bytes
	for i := range period {
		period[i] = rng.NormFloat64()
	}
	kinds := map[string]func(i int) float64{
		"draws":  func(int) float64 { return rng.NormFloat64() },
		"smooth": func(i int) float64 { return math.Sin(float64(i) / 700) },
		"nan runs": func(i int) float64 {
			if i/1000%3 == 0 {
				return math.NaN()
			}
			return math.Round(rng.ExpFloat64()*8) / 4
		},
		"repeating": func(i int) float64 { return period[i%len(period)] },
	}
	ref := &zstd.Codec{Level: zstd.SpeedDefault}
	var dst1, dst2, back []byte
	for name, f := range kinds {
		for _, n := range []int{0, 1, 100, 4096, 16384, 16385, pageRows, 32768, zstdWindow / 8} {
			src := floats(n, f)
			var err error
			dst1, err = ref.Encode(dst1, src)
			require.NoError(t, err)
			dst2, err = zstdCodec.Encode(dst2, src)
			require.NoError(t, err)
			require.Equal(t, dst1, dst2, "%s, %d values", name, n)
			back, err = zstdCodec.Decode(back, dst2)
			require.NoError(t, err)
			require.Equal(t, len(src), len(back), "%s, %d values", name, n)
			assert.Equal(t, src, back[:len(src)], "%s, %d values", name, n)
		}
	}
	// Bytes of no float structure, half a window.
	src := make([]byte, zstdWindow/2)
	for i := range src {
		src[i] = byte(rng.IntN(7))
	}
	a, err := ref.Encode(nil, src)
	require.NoError(t, err)
	b, err := zstdCodec.Encode(nil, src)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// The point of the window: a fresh encoder compressing one page allocates
// about 4 MiB (1 MiB of history, the match tables, the output) against
// more than 16 MiB (16 MiB of history) for parquet-go's codec.
func TestZstdPageCodecMemory(t *testing.T) {
	src := make([]byte, 8*pageRows)
	for i := range src {
		src[i] = byte(i * i >> 7)
	}
	alloc := func(c interface {
		Encode(dst, src []byte) ([]byte, error)
	}) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.Encode(nil, src)
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	ref := alloc(&zstd.Codec{Level: zstd.SpeedDefault})
	ours := alloc(&pageZstd{Codec: zstd.Codec{Level: zstd.SpeedDefault}})
	t.Logf("bytes allocated by a fresh encoder for one page: parquet-go %d, page codec %d", ref, ours)
	assert.Greater(t, ref, uint64(16<<20))
	assert.Less(t, ours, uint64(6<<20))
}
