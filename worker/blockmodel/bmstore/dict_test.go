package bmstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// appendIndices writes one bit-packed run of the dictionary's width: read
// back bit by bit (lowest first), for every width and run lengths around
// the 8-value groups and the 64-bit words, after bytes already there.
func TestAppendIndicesBitPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for w := 1; w <= 16; w++ {
		for _, m := range []int{0, 1, 7, 8, 9, 15, 63, 64, 65, 127, 1000, 1001} {
			d := floatDict{values: make([]uint64, 1<<(w-1)+1)} // width w
			d.idx = make([]int32, m+3)
			for i := range d.idx {
				d.idx[i] = int32(rng.IntN(len(d.values)))
			}
			d.next = 3 // the first three went to an earlier page
			b := d.appendIndices([]byte("pre"), m)
			require.Equal(t, "pre", string(b[:3]))
			require.EqualValues(t, w, b[3], "w=%d m=%d: bit width", w, m)
			if m == 0 {
				require.Len(t, b, 4)
				continue
			}
			h, k := binary.Uvarint(b[4:])
			groups := (m + 7) / 8
			require.Equal(t, uint64(groups)<<1|1, h, "w=%d m=%d: run header", w, m)
			run := b[4+k:]
			require.Len(t, run, groups*w, "w=%d m=%d: run bytes", w, m)
			for i := range 8 * groups {
				var v int32
				for bit := range w {
					at := i*w + bit
					v |= int32(run[at/8]>>(at%8)&1) << bit
				}
				want := int32(0) // padding
				if i < m {
					want = d.idx[3+i]
				}
				require.Equal(t, want, v, "w=%d m=%d: value %d", w, m, i)
			}
			require.Equal(t, 3+m, d.next)
		}
	}
}

// BenchmarkFloatDict builds the dictionary of a 100,000-row chunk of
// lognormal grades with three decimals (one in 50 null) and writes its
// indices: the float column encoding of a query or a stored column.
func BenchmarkFloatDict(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := Column{Type: blockmodel.Float64, Floats: make([]float64, QueryRowGroup), Null: make([]bool, QueryRowGroup)}
	for r := range c.Floats {
		c.Floats[r] = math.Round(math.Exp(0.8*rng.NormFloat64())*1000) / 1000
		c.Null[r] = rng.IntN(50) == 0
	}
	var d floatDict
	var out []byte
	b.SetBytes(8 * QueryRowGroup)
	for b.Loop() {
		if !d.build(&c) {
			b.Fatal("no dictionary")
		}
		out = d.appendIndices(out[:0], len(d.idx))
	}
	b.ReportMetric(float64(len(d.values)), "distinct")
}
