package tbsim

import (
	"math"
	"math/rand/v2"
)

// Every random number of a simulation comes from a stream derived from the
// master seed and a tuple of counters (purpose, realisation, structure, line
// or point index) by SplitMix64 mixing, never from a generator shared between
// goroutines. A value therefore depends only on what it is, not on the order
// in which tiles or points are processed, which makes the output
// bit-identical for any GOMAXPROCS and any tiling (docs/math.md 9.3).

// Purposes of derived streams. They separate otherwise equal counter tuples.
const (
	purposeRotation uint64 = 0x526f74 // Haar rotation of the direction set of one (realisation, structure)
	purposeLine     uint64 = 0x4c696e // parameters of one line
	purposeNugget   uint64 = 0x4e7567 // nugget value of one point
	purposeSign     uint64 = 0x536967 // signs of the partition intervals of one line
)

// golden is 2⁶⁴/φ, the SplitMix64 increment.
const golden = 0x9e3779b97f4a7c15

// mix64 is the SplitMix64 output function applied to z + golden: a bijective
// avalanche mix of 64 bits.
func mix64(z uint64) uint64 {
	z += golden
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// key folds a sequence of counters into a 64-bit stream key.
func key(seed uint64, counters ...uint64) uint64 {
	h := mix64(seed)
	for _, c := range counters {
		h = mix64(h ^ c)
	}
	return h
}

// pcgStream separates the two PCG seed words derived from one key.
const pcgStream = 0x5bd1e9955bd1e995

// newPCG returns a PCG generator seeded from a stream key.
func newPCG(k uint64) *rand.PCG {
	return rand.NewPCG(k, mix64(k^pcgStream))
}

// newRand returns a generator for one stream key.
func newRand(k uint64) *rand.Rand { return rand.New(newPCG(k)) }

// gammaVariate draws from Gamma(shape, 1) by Marsaglia and Tsang's squeeze
// method (ACM TOMS 26(3), 2000) for shape ≥ 1; shapes below 1 use the boost
// Gamma(a) = Gamma(a+1)·U^(1/a).
func gammaVariate(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaVariate(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = rng.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// chi3 draws the length of a standard normal 3-vector (a χ variate with 3
// degrees of freedom).
func chi3(rng *rand.Rand) float64 {
	a, b, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
	return math.Sqrt(a*a + b*b + c*c)
}

// nuggetSource draws the nugget values of points, each from its own stream
// keyed by (realisation, point stream, point index). One source per
// goroutine: it only holds a reseedable generator.
type nuggetSource struct {
	pcg rand.PCG
	rng *rand.Rand
}

func newNuggetSource() *nuggetSource {
	n := &nuggetSource{}
	n.rng = rand.New(&n.pcg)
	return n
}

// normal returns the standard normal value of point (stream, index) of
// realisation r under the master seed.
func (n *nuggetSource) normal(seed uint64, r int, stream uint64, index int) float64 {
	return n.normalAt(nuggetKey(seed, r, stream), index)
}

// nuggetKey is the key of point stream (realisation r, stream) under the
// master seed, shared by all its points.
func nuggetKey(seed uint64, r int, stream uint64) uint64 {
	return mix64(mix64(mix64(mix64(seed)^purposeNugget)^uint64(r)) ^ stream)
}

// normalAt returns the standard normal value of point index of the point
// stream with key sk (nuggetKey): normal without recomputing the key.
func (n *nuggetSource) normalAt(sk uint64, index int) float64 {
	k := mix64(sk ^ uint64(index))
	n.pcg.Seed(k, mix64(k^pcgStream))
	return n.rng.NormFloat64()
}

// signBit returns a fair random bit for interval k of the line with key lk.
func signBit(lk uint64, k int64) bool {
	return mix64(lk^mix64(uint64(k)))>>63 != 0
}
