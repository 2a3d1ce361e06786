package scenarios

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/declus"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/neighbor"
)

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		assert.False(t, seen[s.Name], "duplicate %s", s.Name)
		seen[s.Name] = true
		assert.NotEmpty(t, s.Description, s.Name)
		if !s.Available() {
			assert.NotEmpty(t, s.Missing, s.Name)
			assert.Contains(t, s.Status(), "not available yet (needs package ")
		}
		got, ok := Lookup(s.Name)
		require.True(t, ok)
		assert.Equal(t, s.Name, got.Name)
	}
	assert.Len(t, seen, 31)
	_, ok := Lookup("nope")
	assert.False(t, ok)
}

func TestCheckValues(t *testing.T) {
	n, err := checkValues("v", []float64{1, math.NaN(), 2}, 0, 3, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = checkValues("v", []float64{1, math.Inf(1)}, 0, 3, 1)
	assert.ErrorContains(t, err, "v[1]")
	_, err = checkValues("v", []float64{1, 4}, 0, 3, 1)
	assert.ErrorContains(t, err, "outside")
	_, err = checkValues("v", []float64{math.NaN(), 1}, 0, 3, 2)
	assert.ErrorContains(t, err, "1 finite values of 2")
}

// The knn sanity check is a real oracle: it accepts the library's means and
// catches a wrong one.
func TestKNNOracle(t *testing.T) {
	c, err := synthetic.New(synthetic.KNN(synthetic.Small, 3))
	require.NoError(t, err)
	targets := c.Grid.CellCentres(nil)
	out := make([]float64, len(targets)/3)
	ix, err := neighbor.NewIndex(c.Coords, c.Grades, nil, knnParams)
	require.NoError(t, err)
	require.NoError(t, ix.Mean(context.Background(), c.Grades, targets, out, nil))
	require.NoError(t, knnOracle(c, targets, out))
	out[0] *= 1.001 // target 0 is one of the checked targets
	assert.ErrorContains(t, knnOracle(c, targets, out), "brute force")
}

func TestSameColumns(t *testing.T) {
	a := [][]float64{{1, 2}, {3, math.NaN()}}
	require.NoError(t, sameColumns([][]float64{{1, 2}, {3, math.NaN()}}, a))
	assert.Error(t, sameColumns([][]float64{{1, 2}}, a))
	assert.Error(t, sameColumns([][]float64{{1, 2}, {3, 4}}, a))
	assert.Error(t, sameColumns([][]float64{{1, 2}, {3}}, a))
}

func TestCheckTiesBroken(t *testing.T) {
	in := []float64{1, 2, 2, 3, math.Pi}
	require.NoError(t, checkTiesBroken(in, []float64{1, 1.9, 2.1, 3, math.Pi}))
	assert.ErrorContains(t, checkTiesBroken(in, []float64{1, 2, 2, 3, math.Pi}), "tie")
	assert.ErrorContains(t, checkTiesBroken(in, []float64{1.01, 1.9, 2.1, 3, math.Pi}), "untied")
	assert.ErrorContains(t, checkTiesBroken(in, []float64{1, 1.95, 2.1, 3, math.Pi}), "mean")
	assert.ErrorContains(t, checkTiesBroken(in, []float64{1, 0.5, 3.5, 3, math.Pi}), "overlap")
	assert.Error(t, checkTiesBroken(in, in[:4]))
}

func TestCheckGaussianField(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = math.Sqrt2 * math.Sin(float64(i)) // mean ≈ 0, variance ≈ 1
	}
	require.NoError(t, checkGaussianField(v))
	for i := range v {
		v[i] *= 2
	}
	assert.ErrorContains(t, checkGaussianField(v), "variance")
}

// The idw and declustering checks are real oracles: they accept the
// library's results and catch a wrong one.
func TestInputsOracles(t *testing.T) {
	c, err := synthetic.New(synthetic.KNN(synthetic.Small, 3))
	require.NoError(t, err)
	targets := c.Grid.CellCentres(nil)
	out := make([]float64, len(targets)/3)
	ix, err := neighbor.NewIndex(c.Coords, c.Grades, nil, knnParams)
	require.NoError(t, err)
	require.NoError(t, ix.IDW(context.Background(), c.Grades, idwPower, targets, out, nil))
	require.NoError(t, idwOracle(c, targets, out))
	out[0] *= 1.001
	assert.ErrorContains(t, idwOracle(c, targets, out), "brute force")

	r, err := declus.IDW(context.Background(), ix, targets, idwPower, nil)
	require.NoError(t, err)
	require.NoError(t, checkInfluence(ix, targets, r.Weights))
	r.Weights[5], r.Weights[6] = r.Weights[6], r.Weights[5]
	assert.ErrorContains(t, checkInfluence(ix, targets, r.Weights), "recomputed")
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "1 sub-point", plural(1, "sub-point"))
	assert.Equal(t, "8 sub-points", plural(8, "sub-point"))
	assert.Equal(t, "0 realisations", plural(int64(0), "realisation"))
	assert.Equal(t, "1 realisation", plural(int64(1), "realisation"))
}
