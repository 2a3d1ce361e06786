package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
