package ties

// purposeTies separates the keys of this package from other streams derived
// from the same seed.
const purposeTies uint64 = 0x54696573 // "Ties"

// Key returns the random key u_i of the datum with original index i under a
// seed: a SplitMix64 hash of (seed, i). It depends on the datum's identity,
// never on the order of processing, and is a bijection of i for a fixed
// seed, so distinct indices never share a key.
func Key(seed uint64, i int64) uint64 {
	return mix64(mix64(seed^purposeTies) ^ uint64(i))
}

// mix64 is the SplitMix64 output function applied to z + 2⁶⁴/φ (Steele,
// Lea and Flood 2014): a bijective avalanche mix of 64 bits.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
