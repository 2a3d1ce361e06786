package neighbor

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/require"
)

// TestParallelBuildIsDeterministic builds a tree large enough for the
// concurrent build on one and on two goroutines: same layout, same answers.
func TestParallelBuildIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 150_000
	coords := make([]float64, 3*n)
	for i := range coords {
		coords[i] = rng.Float64() * 1000
	}
	p := Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 10, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 20}}, MaxSamples: 12}
	prev := runtime.GOMAXPROCS(1)
	one, err := NewIndex(coords, nil, nil, p)
	runtime.GOMAXPROCS(max(2, prev))
	two, err2 := NewIndex(coords, nil, nil, p)
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	require.NoError(t, err2)
	require.Equal(t, one.orig, two.orig, "same leaf order")
	require.Equal(t, one.pts, two.pts)
	s1, s2 := one.NewSearcher(), two.NewSearcher()
	for q := 0; q < 200; q++ {
		x, y, z := rng.Float64()*1000, rng.Float64()*1000, rng.Float64()*1000
		i1, d1 := s1.Search(x, y, z)
		i2, d2 := s2.Search(x, y, z)
		require.Equal(t, i1, i2)
		require.Equal(t, d1, d2)
	}
}

// BenchmarkNewIndex1M builds the index of one million sources.
func BenchmarkNewIndex1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	coords := make([]float64, 3_000_000)
	for i := range coords {
		coords[i] = rng.Float64() * 1000
	}
	p := Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 10}, MaxSamples: 8}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := NewIndex(coords, nil, nil, p); err != nil {
			b.Fatal(err)
		}
	}
}
