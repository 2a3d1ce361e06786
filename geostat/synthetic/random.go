package synthetic

import "math/rand/v2"

// Purposes of the independent random streams derived from a case seed.
const (
	purposeCollars uint64 = iota + 1
	purposeUniform
	purposeWaves
	purposeNugget
	purposeMask
	purposeColumns
	purposeRounding
)

// splitMix64 is the SplitMix64 finaliser, used to derive well-separated
// stream keys from (seed, purpose).
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stream returns the PCG generator of one purpose (and sub-stream) of a seed.
func stream(seed, purpose, sub uint64) *rand.Rand {
	a := splitMix64(seed ^ splitMix64(purpose<<32^sub))
	b := splitMix64(a ^ 0x6a09e667f3bcc909)
	return rand.New(rand.NewPCG(a, b))
}
