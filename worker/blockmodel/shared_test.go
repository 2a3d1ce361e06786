package blockmodel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The identity forms of each kind (A.7.4) and the types their columns are
// read as.
func TestIdentityColumns(t *testing.T) {
	assert.Equal(t, []string{"i", "j", "k"}, IndexColumns(Regular))
	assert.Equal(t, []string{"x", "y", "z"}, CoordinateColumns(Regular))
	for _, k := range []ModelType{FullySubBlocked, VariableOctree} {
		assert.Equal(t, []string{"i", "j", "k", "sidx"}, IndexColumns(k))
	}
	assert.Equal(t, []string{"i", "j", "k", "start_si", "start_sj", "start_sk", "end_si", "end_sj", "end_sk"}, IndexColumns(Flexible))
	for _, k := range []ModelType{FullySubBlocked, Flexible, VariableOctree} {
		assert.Equal(t, []string{"x", "y", "z", "dx", "dy", "dz"}, CoordinateColumns(k))
	}
	for title, want := range map[string]DataType{"i": UInt32, "sidx": UInt32, "end_sk": UInt8, "dz": Float64, "version_id": Int64} {
		got, ok := SystemColumnType(title)
		assert.True(t, ok, title)
		assert.Equal(t, want, got, title)
	}
	for _, title := range []string{"I", "sub_block_derivation", "cu"} {
		_, ok := SystemColumnType(title)
		assert.False(t, ok, title)
	}
}

func TestCheckCRS(t *testing.T) {
	for _, ok := range []string{"EPSG:32755", "EPSG:1024", "EPSG:32767", `PROJCS["x",GEOGCS["y"]]`, `GEOGCRS["WGS 84", DATUM["x"]]`, "BOX(1 2)"} {
		assert.NoError(t, CheckCRS(ok), ok)
	}
	for _, bad := range []string{"EPSG:1023", "EPSG:32768", "EPSG:", "metres", "[x]", "PRO JCS[x]", "PROJCS[x", "EPSG:4326 "} {
		assert.Error(t, CheckCRS(bad), bad)
	}
	assert.NoError(t, CheckCRS(strings.Repeat("A", MaxCRSLength-3)+"[x]"), "10,000 characters")
	assert.EqualError(t, CheckCRS(strings.Repeat("A", MaxCRSLength-2)+"[x]"), "must be at most 10000 characters, not 10001")
}

// A ValidationError accumulates and renders the area's 422 document.
func TestValidationErrorProblem(t *testing.T) {
	var v ValidationError
	require.NoError(t, v.Err())
	v.Add("size_options.n_blocks.nx", "%d must be between 1 and %d", 0, MaxBlocks)
	v.Add("name", "is required")
	err := v.Err()
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	p := ve.Problem()
	assert.Equal(t, 422, p.Status)
	assert.Equal(t, TypeValidation, p.Type)
	assert.True(t, strings.HasSuffix(p.Type, "/block-model-service/validation"))
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type": "`+TypeValidation+`", "title": "Validation Error.", "status": 422,
	 "detail": "invalid parameters: size_options.n_blocks.nx: 0 must be between 1 and 500000000; name: is required",
	 "invalid-params": [{"name": "size_options.n_blocks.nx", "reason": "0 must be between 1 and 500000000"}, {"name": "name", "reason": "is required"}]}`, string(b))
}

func TestBoxes(t *testing.T) {
	b := NewIJKBox([3]int64{0, 1, 2}, [3]int64{3, 4, 5})
	for a, v := range b.Axes() {
		assert.Equal(t, IndexMinMax{int64(a), int64(a) + 3}, *v)
		v.Max++
	}
	assert.Equal(t, int64(6), b.KMinMax.Max)
	j, err := json.Marshal(b)
	require.NoError(t, err)
	assert.JSONEq(t, `{"i_minmax": {"min": 0, "max": 4}, "j_minmax": {"min": 1, "max": 5}, "k_minmax": {"min": 2, "max": 6}}`, string(j))
	var x BBox
	for a, v := range x.Axes() {
		v.Min, v.Max = float64(a), float64(a)+0.5
	}
	assert.Equal(t, BBox{MinMax{0, 0.5}, MinMax{1, 1.5}, MinMax{2, 2.5}}, x)
}
