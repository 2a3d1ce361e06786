package tasks

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClosestName checks which declared names are suggested for an unknown
// member: one edit per three characters at most, swaps of neighbours
// counting as one edit, case ignored.
func TestClosestName(t *testing.T) {
	for unknown, want := range map[string]string{
		"min_sample":  "min_samples",
		"maxsamples":  "max_samples",
		"Max_Samples": "max_samples",
		"nmae":        "name",
		"ellipsiod":   "ellipsoid",
		"colour":      "",
		"x":           "",
		"samples":     "",
	} {
		assert.Equal(t, want, closest(unknown, []string{"min_samples", "max_samples", "name", "ellipsoid"}), unknown)
	}
	assert.Equal(t, "max-samples", closest("max_samples", []string{"max-samples", "anisotropy"}))
	assert.Equal(t, 1, editDistance("ab", "ba"))
	assert.Equal(t, 3, editDistance("", "abc"))
}

// nestedFilterKNN is a knn request in the parameters wrapper whose source
// filter nests levels all_of expressions around a condition that carries
// the member extra.
func nestedFilterKNN(levels int, extra string) []byte {
	var b strings.Builder
	b.WriteString(`{"parameters":{"source":{"object":"x","attribute":"a","filter":{"where":`)
	for range levels {
		b.WriteString(`{"type":"all_of","filters":[`)
	}
	b.WriteString(`{"type":"condition","attribute":"a","operator":"in","values":["x"]` + extra + `}`)
	for range levels {
		b.WriteString(`]}`)
	}
	b.WriteString(`}},"target":{"object":"y","attribute":{"operation":"create","name":"e"}},` +
		`"neighborhood":{"max_samples":4,"ellipsoid":{"ellipsoid_ranges":{"major":1,"semi_major":1,"minor":1}}}}}`)
	return []byte(b.String())
}

// TestUnknownMembersDepth checks that the walk reaches the deepest filter
// the decoder accepts (32 levels of nesting), and that a body of filters
// nested thousands deep, which the decoder refuses, is not walked to its
// bottom: every level re-reads the JSON below it (the unbounded walk took
// about 17 s of CPU and allocated 2.7 GB for this 150 kB body).
func TestUnknownMembersDepth(t *testing.T) {
	_, err := DecodeKNN(CurrentShape, nestedFilterKNN(32, `,"valuse":1`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	want := "parameters.source.filter.where" + strings.Repeat(".filters[0]", 32) + ".valuse"
	assert.Contains(t, ve.Params, InvalidParam{Name: want, Reason: `unknown member; did you mean "values"?`})
	for _, p := range ve.Params {
		assert.NotContains(t, p.Reason, "nested too deeply")
	}

	// The work is measured by the bytes the decode allocates (each level of
	// the unbounded walk re-read and copied the JSON below it: quadratic in
	// the depth), not by wall time, which a loaded machine stretches.
	body := nestedFilterKNN(4900, "")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = DecodeKNN(CurrentShape, body)
	runtime.ReadMemStats(&after)
	require.ErrorAs(t, err, &ve)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("decoding a %d-byte body nested 4,900 deep allocated %d bytes", len(body), allocated)
	assert.Less(t, allocated, uint64(2000*len(body)), "the walk stays linear in the body (85 MB; the unbounded walk allocated 2.7 GB)")
	assert.Contains(t, err.Error(), "filters are nested too deeply")
}
