package declus

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCellHandComputed(t *testing.T) {
	// Four samples on the x axis at 0, 1, 3 and 10, cells of 5 m.
	// Origin 0 is −0.01: cells [−0.01, 4.99) holds 0, 1, 3 and
	// [9.99, 14.99) holds 10, so 1/(3·2) each for the first three and 1/2
	// for the last. With two offsets, f = min(5/2, 10/2) = 2.5 and origin 1
	// is −2.51: 0 and 1 share [−2.51, 2.49), 3 and 10 are alone among three
	// occupied cells: 1/6, 1/6, 1/3, 1/3. The sum over both origins,
	// normalised: (1/3, 1/3, 1/2, 5/6)/2.
	coords := []float64{0, 0, 0, 1, 0, 0, 3, 0, 0, 10, 0, 0}
	r, err := Cell(context.Background(), coords, nil, CellParams{Sizes: []float64{5}, Offsets: 1}, nil)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 2}, r.Weights, 1e-15)
	assert.Equal(t, 5.0, r.Size)
	assert.Nil(t, r.Means)
	r, err = Cell(context.Background(), coords, nil, CellParams{Sizes: []float64{5}, Offsets: 2}, nil)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1.0 / 6, 1.0 / 6, 1.0 / 4, 5.0 / 12}, r.Weights, 1e-15)

	// Values: the clustered three are high. A cell of 20 holds all four
	// (equal weights: the naive mean 3, not strictly below it); size 5
	// gives 4·3/6 + 0/2 = 2 and is kept.
	values := []float64{4, 4, 4, 0}
	r, err = Cell(context.Background(), coords, values, CellParams{Sizes: []float64{20, 5}, Offsets: 1, Objective: Minimize}, nil)
	require.NoError(t, err)
	assert.Equal(t, 5.0, r.Size)
	assert.InDeltaSlice(t, []float64{3, 2}, r.Means, 1e-15)
	assert.InDeltaSlice(t, []float64{1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 2}, r.Weights, 1e-15)
	// Maximize: no size beats the naive mean 3, the weights stay equal.
	r, err = Cell(context.Background(), coords, values, CellParams{Sizes: []float64{20, 5}, Offsets: 1, Objective: Maximize}, nil)
	require.NoError(t, err)
	assert.Equal(t, 0.0, r.Size)
	assert.InDeltaSlice(t, []float64{0.25, 0.25, 0.25, 0.25}, r.Weights, 1e-15)

	// Anisotropy: cells 5 × 0.5 along y split two samples 1 m apart in y.
	coords = []float64{0, 0, 0, 0, 1, 0, 10, 0, 0}
	r, err = Cell(context.Background(), coords, nil, CellParams{Sizes: []float64{5}, AnisY: 0.1, Offsets: 1}, nil)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, r.Weights, 1e-15)
	r, err = Cell(context.Background(), coords, nil, CellParams{Sizes: []float64{5}, Offsets: 1}, nil)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0.25, 0.25, 0.5}, r.Weights, 1e-15)

	// A NaN value leaves its sample out.
	r, err = Cell(context.Background(), []float64{0, 0, 0, 1, 0, 0, 10, 0, 0}, []float64{1, math.NaN(), 2}, CellParams{Sizes: []float64{5}, Offsets: 1}, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 0, 0.5}, r.Weights)
}

func TestSizeRange(t *testing.T) {
	assert.Equal(t, []float64{5}, SizeRange(5, 50, 1))
	assert.Equal(t, []float64{5}, SizeRange(5, 50, 0))
	assert.Equal(t, []float64{5, 9.5, 14, 18.5, 23, 27.5, 32, 36.5, 41, 45.5, 50}, SizeRange(5, 50, 10))
}

// The oracle below was produced by GSLIB's declus (version 2.905, the 1999
// Fortran source of the GSLIB 2 distribution as kept in the public
// repository exepulveda/gslib2.0, src/original/declus/declus.for), compiled
// with gfortran 12.2 (-std=legacy -O0) after two edits: the Windows-only
// "use msflib" line removed and the weight and summary output formats
// widened from f10.5 / f15.3 to es16.9 so that all single-precision digits
// are kept. It was run on gslibData (80 points in a 100 × 100 × 20 box, 60 %
// of them in three clusters with higher values; coordinates on a 0.5 lattice
// and values multiples of 0.25, exact in single precision) with columns
// 1 2 3 4, no trimming and:
//
//	a  anisotropy 1 1,      iminmax 0, ncell 1,  cmin 10,  offsets 5
//	b  anisotropy 2 0.5,    iminmax 0, ncell 1,  cmin 7.5, offsets 1
//	c  anisotropy 1 1,      iminmax 0, ncell 1,  cmin 25,  offsets 25
//	d  anisotropy 1 1,      iminmax 0, ncell 10, cmin 5,   cmax 50, offsets 5
//	e  anisotropy 1 1,      iminmax 1, ncell 10, cmin 5,   cmax 50, offsets 5
//	f  anisotropy 1.5 0.25, iminmax 0, ncell 6,  cmin 4,   cmax 34, offsets 4
//
// The weights are declus's output column (scaled to sum to 80), the means
// the summary file's declustered mean per cell size. Run d keeps size 32,
// f size 34, and e no size (no mean exceeds the naive 2.371875: equal
// weights).
var gslibData = []float64{ // x, y, z, v
	78.5, 52, 10, -0.25,
	28.5, 28.5, 4.5, 0.75,
	77.5, 89.5, 0.5, 1.75,
	88, 92, 2.5, 0,
	22, 28.5, 5.5, 2.75,
	38.5, 90, 8, 2.5,
	40.5, 77.5, 11.5, 1,
	18.5, 31.5, 4.5, 2.75,
	0.5, 45.5, 9.5, 1.5,
	73, 60.5, 13, 3,
	70.5, 63.5, 12.5, 2.75,
	67, 62, 12.5, 3.5,
	24, 33, 6, 4,
	69, 59, 12, 4,
	20.5, 33, 6.5, 4.5,
	65, 69.5, 10, 4.25,
	1, 38.5, 13, 1.25,
	93, 57, 12, 1.25,
	19.5, 33, 5, 3.25,
	69, 65, 11, 2.5,
	49.5, 83.5, 3, 2,
	40.5, 78, 6.5, 4.75,
	17, 21, 6, 1,
	69.5, 63, 9, 2.75,
	33, 72, 12.5, 1.25,
	45, 61.5, 17.5, 1.5,
	47.5, 83, 9, 2.5,
	31, 33, 7.5, 1.5,
	18, 29, 4.5, 2.5,
	40, 84, 8, 3.25,
	73, 69.5, 14, 2.5,
	49, 86.5, 5, 3,
	22, 44.5, 6, 1.5,
	72, 67, 13, 3.25,
	64, 73.5, 14, 3.25,
	44, 88, 8.5, 2,
	45.5, 89.5, 7.5, 2,
	68.5, 65.5, 9.5, 0.75,
	84, 94, 5.5, 0.25,
	70.5, 64.5, 12, 3.75,
	47.5, 86, 5.5, 2.25,
	18, 26.5, 4.5, 3.25,
	9, 46, 19.5, 1,
	68.5, 62, 13.5, 3,
	48.5, 86.5, 9, 4.25,
	69, 60.5, 9, 2.75,
	17.5, 28, 3.5, 2.5,
	70.5, 64, 11.5, 1.75,
	89.5, 18.5, 12.5, 1.25,
	19, 10.5, 13, 1.5,
	40.5, 87.5, 10.5, 3,
	19, 32, 2.5, 1,
	83, 4, 5.5, 0.75,
	51, 93.5, 7, 4.25,
	22.5, 33.5, 3, 2.5,
	40.5, 77, 6.5, 1.25,
	31.5, 48.5, 17, 1.25,
	47, 84, 7.5, 2,
	19.5, 22.5, 4, 2,
	11, 29, 4, 3,
	24, 28, 3, 4.75,
	72.5, 67.5, 11, 4,
	53.5, 80.5, 6.5, 1.5,
	11.5, 39.5, 6, 3,
	74.5, 99.5, 7, 0.75,
	53, 40.5, 9.5, -0.25,
	6.5, 95.5, 7, 0.75,
	72, 68, 11.5, 2.25,
	47.5, 81, 8, 4.25,
	65, 44, 1.5, 0.5,
	48.5, 89, 8, 3.5,
	40.5, 44, 16.5, 2,
	17.5, 86.5, 14, 0.75,
	70.5, 64, 15, 2.5,
	23.5, 29, 4, 5.75,
	0.5, 43.5, 6.5, 1.75,
	35.5, 87.5, 10.5, 4.75,
	70, 59.5, 10.5, 2.75,
	76, 62, 10.5, 4.5,
	70.5, 61, 13, 3.25,
}

var gslibWeightsA = []float64{
	2.032849550e+00, 1.136951208e+00, 2.032849550e+00, 1.627201319e+00, 3.078869879e-01,
	1.034304380e+00, 1.233029366e+00, 3.386562467e-01, 1.336493254e+00, 6.488652825e-01,
	2.639931738e-01, 4.290963411e-01, 3.562000990e-01, 4.614397883e-01, 6.668613553e-01,
	1.151377559e+00, 1.752147675e+00, 2.032849550e+00, 3.386562467e-01, 3.299752474e-01,
	8.711979985e-01, 5.554085374e-01, 1.057700515e+00, 3.299752474e-01, 2.032849550e+00,
	2.032849550e+00, 4.419196844e-01, 1.471446037e+00, 3.273991644e-01, 5.862612128e-01,
	6.713041067e-01, 4.428833723e-01, 2.032849550e+00, 3.484971225e-01, 1.627201200e+00,
	5.590711832e-01, 4.368633032e-01, 3.299752474e-01, 1.627201319e+00, 1.906023920e-01,
	3.908508420e-01, 4.677500427e-01, 2.032849550e+00, 2.639931738e-01, 6.346698403e-01,
	3.780052662e-01, 3.414342701e-01, 1.906023920e-01, 2.032849550e+00, 2.032849550e+00,
	8.685033917e-01, 3.526913226e-01, 2.032849550e+00, 1.391245484e+00, 3.702351749e-01,
	6.606717110e-01, 2.032849550e+00, 3.675875664e-01, 9.560316801e-01, 1.405671835e+00,
	3.394659460e-01, 5.590234399e-01, 1.330066919e+00, 2.032849550e+00, 2.032849550e+00,
	2.032849550e+00, 2.032849550e+00, 4.607778192e-01, 4.419196844e-01, 2.032849550e+00,
	4.547077417e-01, 2.032849550e+00, 2.032849550e+00, 6.151637435e-01, 3.394659460e-01,
	1.336493254e+00, 1.436358213e+00, 4.614397883e-01, 9.938176870e-01, 3.120231926e-01,
}

var gslibWeightsB = []float64{
	9.090913534e-01, 9.090913534e-01, 1.818182707e+00, 1.818182707e+00, 2.597404122e-01,
	4.545456767e-01, 1.818182707e+00, 2.597404122e-01, 1.818182707e+00, 3.636365533e-01,
	3.636365533e-01, 1.818182707e+00, 9.090913534e-01, 3.636365533e-01, 2.597404122e-01,
	1.818182707e+00, 1.818182707e+00, 1.818182707e+00, 2.597404122e-01, 3.636365533e-01,
	1.818182707e+00, 9.090913534e-01, 2.597404122e-01, 6.060609221e-01, 1.818182707e+00,
	1.818182707e+00, 4.545456767e-01, 1.818182707e+00, 2.597404122e-01, 4.545456767e-01,
	4.545456767e-01, 3.636365533e-01, 1.818182707e+00, 4.545456767e-01, 1.818182707e+00,
	4.545456767e-01, 3.636365533e-01, 3.636365533e-01, 1.818182707e+00, 4.545456767e-01,
	3.636365533e-01, 2.597404122e-01, 1.818182707e+00, 3.636365533e-01, 4.545456767e-01,
	6.060609221e-01, 4.545456767e-01, 3.636365533e-01, 1.818182707e+00, 1.818182707e+00,
	4.545456767e-01, 4.545456767e-01, 1.818182707e+00, 3.636365533e-01, 4.545456767e-01,
	9.090913534e-01, 1.818182707e+00, 3.636365533e-01, 4.545456767e-01, 1.818182707e+00,
	9.090913534e-01, 3.636365533e-01, 1.818182707e+00, 1.818182707e+00, 1.818182707e+00,
	1.818182707e+00, 1.818182707e+00, 3.636365533e-01, 4.545456767e-01, 1.818182707e+00,
	4.545456767e-01, 1.818182707e+00, 1.818182707e+00, 4.545456767e-01, 9.090913534e-01,
	1.818182707e+00, 1.818182707e+00, 6.060609221e-01, 9.090913534e-01, 3.636365533e-01,
}

var gslibWeightsC = []float64{
	1.758454442e+00, 1.113319993e+00, 2.104074717e+00, 2.257203579e+00, 3.848887086e-01,
	5.991670489e-01, 7.990748286e-01, 3.476835191e-01, 1.425312281e+00, 3.806672394e-01,
	2.935965359e-01, 4.679886997e-01, 4.213818312e-01, 3.892896473e-01, 4.220216572e-01,
	7.482160330e-01, 1.307968378e+00, 3.150318384e+00, 3.597123921e-01, 3.110658526e-01,
	1.056869626e+00, 5.456506610e-01, 9.815843105e-01, 4.533608556e-01, 1.483817220e+00,
	1.826603770e+00, 4.210621119e-01, 9.385005236e-01, 3.550452888e-01, 4.481362998e-01,
	5.120217204e-01, 6.361703277e-01, 1.433131814e+00, 3.666136563e-01, 4.203613400e-01,
	4.537711740e-01, 4.469806850e-01, 3.651721776e-01, 2.009825468e+00, 2.815631628e-01,
	4.737105072e-01, 4.692123532e-01, 2.296871424e+00, 3.811009228e-01, 4.437989593e-01,
	4.260226488e-01, 3.762697577e-01, 2.815631628e-01, 3.398460627e+00, 2.610883474e+00,
	5.320431590e-01, 4.124454260e-01, 3.398460627e+00, 1.091394305e+00, 5.674135089e-01,
	5.896067023e-01, 2.445200682e+00, 3.790419698e-01, 8.546189666e-01, 7.092748880e-01,
	5.439362526e-01, 3.778607249e-01, 6.346004009e-01, 9.699296355e-01, 2.879112959e+00,
	2.674790144e+00, 3.180850744e+00, 3.786136508e-01, 4.114243686e-01, 2.697945833e+00,
	4.709123373e-01, 1.402765512e+00, 2.230212927e+00, 5.058056116e-01, 3.893784881e-01,
	1.409150720e+00, 8.974384069e-01, 3.839563131e-01, 6.304515004e-01, 3.158187270e-01,
}

var gslibWeightsD = []float64{
	1.221135855e+00, 1.650163293e+00, 1.508214593e+00, 1.508214593e+00, 4.501636028e-01,
	7.836494446e-01, 5.485939384e-01, 4.192833900e-01, 1.511946201e+00, 4.970699847e-01,
	3.249403834e-01, 3.249403834e-01, 4.279414117e-01, 4.413424432e-01, 4.279414117e-01,
	5.106546283e-01, 1.511946201e+00, 3.125897169e+00, 4.192833900e-01, 3.249403834e-01,
	4.709756672e-01, 6.123898029e-01, 7.272198200e-01, 3.249403834e-01, 7.527406216e-01,
	1.959669590e+00, 4.071798325e-01, 9.550138116e-01, 4.415056109e-01, 5.041494966e-01,
	7.392216325e-01, 4.709756672e-01, 1.395114064e+00, 3.806679249e-01, 4.930179119e-01,
	5.795027614e-01, 4.825330675e-01, 3.249403834e-01, 2.100806952e+00, 3.249403834e-01,
	4.709756672e-01, 4.415056109e-01, 1.661653757e+00, 4.977798462e-01, 4.071798325e-01,
	4.413424432e-01, 4.415056109e-01, 3.249403834e-01, 4.540516853e+00, 1.935337901e+00,
	5.795027614e-01, 4.192833900e-01, 4.540516853e+00, 4.825330675e-01, 4.279414117e-01,
	6.123898029e-01, 1.381422997e+00, 4.071798325e-01, 7.272198200e-01, 5.669957995e-01,
	4.501636028e-01, 3.806679249e-01, 4.035863280e-01, 7.193767428e-01, 2.446722269e+00,
	2.600835085e+00, 5.207183361e+00, 5.663821697e-01, 4.071798325e-01, 1.957977891e+00,
	4.825330675e-01, 1.531209350e+00, 4.645779610e+00, 4.977798462e-01, 4.501636028e-01,
	1.511946201e+00, 7.836494446e-01, 4.413424432e-01, 3.806679249e-01, 4.413424432e-01,
}

var gslibWeightsE = []float64{
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
	1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00, 1.000000000e+00,
}

var gslibWeightsF = []float64{
	1.863073111e+00, 1.370889187e+00, 2.162919760e+00, 2.162919760e+00, 6.538980007e-01,
	4.278845191e-01, 7.159287333e-01, 5.023828745e-01, 1.666286707e+00, 2.670377791e-01,
	2.670377791e-01, 3.704212308e-01, 3.003626168e-01, 2.670377791e-01, 3.003626168e-01,
	3.499154150e-01, 2.192602396e+00, 1.558903933e+00, 3.003626168e-01, 3.029229641e-01,
	1.271504760e+00, 5.636746287e-01, 1.108443499e+00, 3.029229641e-01, 1.251642942e+00,
	2.197665453e+00, 4.041645229e-01, 7.864736915e-01, 3.292226493e-01, 4.278845191e-01,
	7.016470432e-01, 4.273489714e-01, 7.864736915e-01, 2.670377791e-01, 8.050304651e-01,
	3.276339173e-01, 3.276339173e-01, 3.029229641e-01, 2.823915482e+00, 2.670377791e-01,
	4.273489714e-01, 3.292226493e-01, 3.799650431e+00, 4.464636743e-01, 4.041645229e-01,
	3.029229641e-01, 3.292226493e-01, 2.670377791e-01, 3.260803223e+00, 2.419875145e+00,
	5.044151545e-01, 1.496534824e+00, 4.501404762e+00, 1.353274822e+00, 5.023828745e-01,
	5.636746287e-01, 1.381420732e+00, 3.276339173e-01, 3.292226493e-01, 1.108443499e+00,
	3.292226493e-01, 3.029229641e-01, 6.654442549e-01, 4.266252816e-01, 1.846472025e+00,
	1.449266791e+00, 4.501404762e+00, 5.222212076e-01, 3.276339173e-01, 3.760663986e+00,
	3.276339173e-01, 1.738563299e+00, 2.529809237e+00, 4.464636743e-01, 3.292226493e-01,
	1.380572557e+00, 5.044151545e-01, 3.029229641e-01, 3.029229641e-01, 2.670377791e-01,
}

var gslibMeansD = []float64{ // sizes: 5 9.5 14 18.5 23 27.5 32 36.5 41 45.5 50
	2.170923233e+00, 1.893163085e+00, 1.712947488e+00, 1.727030635e+00, 1.633554816e+00, 1.638352394e+00, 1.611779094e+00, 1.744542718e+00, 1.666910052e+00, 1.653888941e+00, 1.728722572e+00,
}

var gslibMeansF = []float64{ // sizes: 4 9 14 19 24 29 34
	2.328533649e+00, 2.034489155e+00, 1.837373376e+00, 1.725466132e+00, 1.650772929e+00, 1.690727592e+00, 1.550436974e+00,
}

func TestCellMatchesGSLIB(t *testing.T) {
	n := len(gslibData) / 4
	coords := make([]float64, 0, 3*n)
	values := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		coords = append(coords, gslibData[4*i:4*i+3]...)
		values = append(values, gslibData[4*i+3])
	}
	for _, c := range []struct {
		name    string
		p       CellParams
		weights []float64
		means   []float64
		chosen  float64
	}{
		{"a", CellParams{Sizes: SizeRange(10, 10, 1), AnisY: 1, AnisZ: 1, Offsets: 5}, gslibWeightsA, nil, 10},
		{"b", CellParams{Sizes: SizeRange(7.5, 7.5, 1), AnisY: 2, AnisZ: 0.5, Offsets: 1}, gslibWeightsB, nil, 7.5},
		{"c", CellParams{Sizes: SizeRange(25, 25, 1), Offsets: 25}, gslibWeightsC, nil, 25},
		{"d", CellParams{Sizes: SizeRange(5, 50, 10), Offsets: 5, Objective: Minimize}, gslibWeightsD, gslibMeansD, 32},
		{"e", CellParams{Sizes: SizeRange(5, 50, 10), Offsets: 5, Objective: Maximize}, gslibWeightsE, gslibMeansD, 0},
		{"f", CellParams{Sizes: SizeRange(4, 34, 6), AnisY: 1.5, AnisZ: 0.25, Offsets: 4}, gslibWeightsF, gslibMeansF, 34},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Len(t, c.weights, n)
			for _, procs := range []int{1, 3} {
				prev := runtime.GOMAXPROCS(procs)
				r, err := Cell(context.Background(), coords, values, c.p, nil)
				runtime.GOMAXPROCS(prev)
				require.NoError(t, err)
				assert.Equal(t, c.chosen, r.Size)
				gsum := 0.0
				for _, w := range c.weights {
					gsum += w
				}
				sum := 0.0
				for i, w := range r.Weights {
					want := c.weights[i] / gsum
					// Single precision: 1e-5 relative.
					require.InDelta(t, want, w, 1e-5*want, "sample %d", i)
					sum += w
				}
				assert.InDelta(t, 1, sum, 1e-12)
				if c.means != nil {
					require.Len(t, r.Means, len(c.means))
					for k, m := range c.means {
						require.InDelta(t, m, r.Means[k], 1e-5*math.Abs(m), "size %v", c.p.Sizes[k])
					}
				}
			}
		})
	}
}

func TestCellErrors(t *testing.T) {
	coords := []float64{0, 0, 0, 1, 0, 0}
	for _, c := range []struct {
		p    CellParams
		vals []float64
		want string
	}{
		{CellParams{Offsets: 1}, nil, "cell_size"},
		{CellParams{Sizes: []float64{0}, Offsets: 1}, nil, "cell_size[0]"},
		{CellParams{Sizes: []float64{math.NaN()}, Offsets: 1}, nil, "cell_size[0]"},
		{CellParams{Sizes: []float64{1, 2}, Offsets: 1}, nil, "needs the sample values"},
		{CellParams{Sizes: []float64{1}, Offsets: 0}, nil, "offsets"},
		{CellParams{Sizes: []float64{1}, Offsets: 1, AnisY: -1}, nil, "anisotropy_y"},
		{CellParams{Sizes: []float64{1}, Offsets: 1, AnisZ: math.Inf(1)}, nil, "anisotropy_z"},
		{CellParams{Sizes: []float64{1e-30}, Offsets: 1}, nil, "too small"},
		{CellParams{Sizes: []float64{1}, Offsets: 1}, []float64{math.NaN(), math.NaN()}, "no sample"},
		{CellParams{Sizes: []float64{1}, Offsets: 1}, []float64{1}, "values"},
	} {
		_, err := Cell(context.Background(), coords, c.vals, c.p, nil)
		require.ErrorContains(t, err, c.want)
	}
	_, err := Cell(context.Background(), []float64{0, 0, math.NaN()}, nil, CellParams{Sizes: []float64{1}, Offsets: 1}, nil)
	require.ErrorContains(t, err, "coords")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Cell(ctx, coords, nil, CellParams{Sizes: []float64{1}, Offsets: 3}, nil)
	require.ErrorIs(t, err, context.Canceled)
}
