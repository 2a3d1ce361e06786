package tasks

import (
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryTaskHasRequestRules checks that the rule tables and the task
// table list the same tasks, and that each renders a request schema.
func TestEveryTaskHasRequestRules(t *testing.T) {
	for _, topic := range []string{TopicSeed, TopicCurrent} {
		assert.Equal(t, Tasks(topic), slices.Sorted(maps.Keys(tables.byTopic[topic])), topic)
		for _, task := range Tasks(topic) {
			s, ok := RequestSchema(topic, task)
			require.True(t, ok, "%s/%s", topic, task)
			assert.Equal(t, map[string]any{"$ref": SchemaRefPrefix + taskSchemaName(topic, task)}, s["else"])
			assert.Contains(t, RequestComponents(), taskSchemaName(topic, task))
		}
	}
	_, ok := RequestSchema(TopicSeed, "kriging")
	assert.False(t, ok, "kriging has no seed shape")
	_, ok = RequestSchema(TopicSeed, "variogram-model")
	assert.False(t, ok, "variogram-model has no seed shape")
	assert.Contains(t, Tasks(TopicCurrent), "variogram-model")
}

// TestObjectRefPatternCoversParseObjectRef checks that every reference
// ParseObjectRef accepts matches the schemas' pattern, and that the pattern
// refuses references whose ids are not UUIDs.
func TestObjectRefPatternCoversParseObjectRef(t *testing.T) {
	re := regexp.MustCompile(objectRefPattern)
	good := []string{
		base + "path/folder/my%20grid.json?version=123",
		base + oid,
		base + oid + "?version=4",
		base + oid + "#frag",
		"/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/" + oid,
		"http://127.0.0.1:8080/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/path/a/b/c.json",
	}
	for _, s := range good {
		_, err := ParseObjectRef(s)
		require.NoError(t, err, s)
		assert.True(t, re.MatchString(s), s)
	}
	bad := []string{"", "https://x/other", base + "not-a-uuid", base + oid + "/more",
		"https://h/geoscience-object/orgs/x/workspaces/" + ws + "/objects/" + oid, base, base + "path/"}
	for _, s := range bad {
		_, err := ParseObjectRef(s)
		require.Error(t, err, s)
		assert.False(t, re.MatchString(s), s)
	}
}

// TestAttributeNamePatternCoversAttributeName checks that every element
// path attributeName reads a name from matches the seed targets' pattern.
func TestAttributeNamePatternCoversAttributeName(t *testing.T) {
	re := regexp.MustCompile(attributeNamePattern)
	for _, p := range []string{"/cell_attributes/@name=x", "/a/@name=b/@name=c", "locations.attributes[?name=='grade']", "/@name=@name=z"} {
		require.NotEmpty(t, attributeName(p), p)
		assert.True(t, re.MatchString(p), p)
	}
	for _, p := range []string{"/cell_attributes/knn", "/cell_attributes/@name=", "attributes[?name=='']", ""} {
		require.Empty(t, attributeName(p), p)
		assert.False(t, re.MatchString(p), p)
	}
}

// TestEmptyEnumValuesAreRefused checks the two empty strings that the
// decoder used to let through: a seed reference's "type" and a bare
// "kriging_method" must be one of their values, as the schemas say.
func TestEmptyEnumValuesAreRefused(t *testing.T) {
	seed := `{"source": {"type": "", "object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au"}]},
	  "target": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au_bt"}]}}`
	_, err := DecodeBreakTies(SeedShape, []byte(seed))
	assert.Equal(t, []string{"source.type"}, invalidNames(t, err))
	sim := `{"source": "` + base + `path/p.json", "source_attribute": "au", "target": "` + base + `path/g.json",
	  "distribution": "` + base + `path/d.json", "variogram_model": "` + base + `path/v.json", "kriging_method": ""}`
	_, err = DecodeSimulation(CurrentShape, []byte(sim))
	assert.Equal(t, []string{"kriging_method"}, invalidNames(t, err))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, `must be "simple" or "ordinary" (got "")`, ve.Params[0].Reason)
}
