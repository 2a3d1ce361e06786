package objects_test

import (
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAttributeRef(t *testing.T) {
	cases := []struct {
		in   string
		want objects.AttributeRef
	}{
		{"locations.attributes[?name=='grade']", objects.AttributeRef{Kind: objects.RefName, List: "locations.attributes", Value: "grade"}},
		{"locations.attributes[?key=='7c1e-x']", objects.AttributeRef{Kind: objects.RefKey, List: "locations.attributes", Value: "7c1e-x"}},
		{"cell_attributes[?name == 'my grade']", objects.AttributeRef{Kind: objects.RefName, List: "cell_attributes", Value: "my grade"}},
		{"cell_attributes[?name==`\"json lit\"`]", objects.AttributeRef{Kind: objects.RefName, List: "cell_attributes", Value: "json lit"}},
		{`attributes[?name=='it\'s']`, objects.AttributeRef{Kind: objects.RefName, List: "attributes", Value: "it's"}},
		{"cell_attributes[0]", objects.AttributeRef{Kind: objects.RefIndex, List: "cell_attributes"}},
		{"cell_attributes[2]", objects.AttributeRef{Kind: objects.RefIndex, List: "cell_attributes", Index: 2}},
		{"locations.attributes[-1]", objects.AttributeRef{Kind: objects.RefIndex, List: "locations.attributes", Index: -1}},
		{"attributes[?name=='Au'] | [0]", objects.AttributeRef{Kind: objects.RefName, List: "attributes", Value: "Au", First: true}},
		{"grade", objects.AttributeRef{Kind: objects.RefBare, Value: "grade"}},
		{"Au.ppm", objects.AttributeRef{Kind: objects.RefBare, Value: "Au.ppm"}},
		{"/locations/attributes/@name=grade", objects.AttributeRef{Kind: objects.RefName, List: "locations.attributes", Value: "grade"}},
		{"/cell_attributes/@name=a/b", objects.AttributeRef{Kind: objects.RefName, List: "cell_attributes", Value: "a/b"}},
		{"/attributes/@key=k1", objects.AttributeRef{Kind: objects.RefKey, List: "attributes", Value: "k1"}},
		{"/cell_attributes/3", objects.AttributeRef{Kind: objects.RefIndex, List: "cell_attributes", Index: 3}},
	}
	for _, c := range cases {
		got, err := objects.ParseAttributeRef(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
		// The canonical expression parses back to the same reference.
		again, err := objects.ParseAttributeRef(got.String())
		require.NoError(t, err, got.String())
		assert.Equal(t, got, again, "round trip of %q via %q", c.in, got.String())
	}
	for _, bad := range []string{"", "  ", "cell_attributes[", "cell_attributes[?size=='x']", "cell_attributes[?name=='x'",
		"cell_attributes[?name==x]", "cell_attributes[x]", "[0]", "a..b[0]", "cell_attributes[0] | [0]", "cell_attributes[?name=='x'] | [1]",
		"/cell_attributes", "/cell_attributes/@size=3", "/cell attributes/@name=x", "cell_attributes[0]x"} {
		_, err := objects.ParseAttributeRef(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestResolveAttribute(t *testing.T) {
	b := objecttest.NewBlobs()
	const k2 = "22222222-2222-4222-8222-222222222222"
	doc := b.Pointset("1.3.0", samplePoints(),
		b.Scalar("grade", key1, []float64{1, 2, 3, 4}),
		b.Scalar("depth", k2, []float64{1, 2, 3, 4}))
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	for ref, want := range map[string]string{
		"grade":                                "grade",
		k2:                                     "depth",
		"locations.attributes[?name=='depth']": "depth",
		"locations.attributes[?key=='" + key1 + "']": "grade",
		"locations.attributes[1]":                    "depth",
		"locations.attributes[-2]":                   "grade",
		"/locations/attributes/@name=grade":          "grade",
	} {
		a, err := o.ResolveAttribute(ref)
		require.NoError(t, err, ref)
		assert.Equal(t, want, a.Name, ref)
	}
	for ref, msg := range map[string]string{
		"cell_attributes[0]":                    "has no attribute list",
		"locations.attributes[?name=='nope']":   "not found",
		"locations.attributes[5]":               "out of range",
		"nope":                                  "no attribute with this name",
		"/locations/attributes/@name=nope":      "not found",
		"locations.attributes[?key=='missing']": "not found",
		"locations.coordinates[?name=='grade']": "has no attribute list",
	} {
		_, err := o.ResolveAttribute(ref)
		assert.ErrorContains(t, err, msg, ref)
	}
	// An attribute that is not there: the message lists those that are.
	for _, ref := range []string{"nope", "locations.attributes[?name=='nope']", "/locations/attributes/@name=nope", "locations.attributes[?key=='missing']"} {
		_, err := o.ResolveAttribute(ref)
		assert.ErrorContains(t, err, `its attributes are: "grade" (key "`+key1+`"), "depth" (key "`+k2+`")`, ref)
	}

	a, err := o.ResolveAttribute("grade")
	require.NoError(t, err)
	assert.Equal(t, "locations.attributes[?key=='"+key1+"']", a.Ref())

	// Grids: cell and vertex lists; downhole intervals: top-level attributes.
	g := objecttest.GridSpec{Size: [3]int{1, 1, 1}, CellSize: [3]float64{1, 1, 1}}
	gdoc := b.Grid("1.3.0", g, b.Scalar("c", key1, []float64{1}))
	gdoc["vertex_attributes"] = []any{b.Scalar("v", k2, make([]float64, 8))}
	o, err = objects.Decode(objecttest.JSON(gdoc))
	require.NoError(t, err)
	a, err = o.ResolveAttribute("v")
	require.NoError(t, err)
	assert.Equal(t, objects.ListVertexAttributes, a.List)
	a, err = o.ResolveAttribute("/cell_attributes/@name=c")
	require.NoError(t, err)
	assert.Equal(t, "c", a.Name)

	o, err = objects.Decode(objecttest.JSON(b.Intervals("1.1.0", samplePoints(), b.Scalar("Au", key1, []float64{1, 2, 3, 4}))))
	require.NoError(t, err)
	a, err = o.ResolveAttribute("attributes[?name=='Au']")
	require.NoError(t, err)
	assert.Equal(t, "Au", a.Name)

	// Duplicate names: ambiguous unless "| [0]" asks for the first.
	dup := b.Pointset("1.1.0", samplePoints(), b.Scalar("g", key1, []float64{1, 2, 3, 4}), b.Scalar("g", k2, []float64{1, 2, 3, 4}))
	o, err = objects.Decode(objecttest.JSON(dup))
	require.NoError(t, err)
	_, err = o.ResolveAttribute("locations.attributes[?name=='g']")
	assert.ErrorContains(t, err, "2 attributes match")
	a, err = o.ResolveAttribute("locations.attributes[?name=='g'] | [0]")
	require.NoError(t, err)
	assert.Equal(t, key1, a.Key)
}
