package tasks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	org = "00000000-0000-4000-8000-000000000001"
	ws  = "00000000-0000-4000-8000-000000000002"
	oid = "00000000-0000-4000-8000-000000000003"
)

var base = "https://hub.example/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/"

func invalidNames(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want a ValidationError, got %v", err)
	var names []string
	for _, p := range ve.Params {
		names = append(names, p.Name)
	}
	return names
}

func TestParseObjectRef(t *testing.T) {
	r, err := ParseObjectRef(base + "path/folder/my%20grid.json?version=123")
	require.NoError(t, err)
	assert.Equal(t, org, r.Org)
	assert.Equal(t, ws, r.Workspace)
	assert.Equal(t, "folder/my grid.json", r.Path)
	assert.Equal(t, "123", r.Version)
	r, err = ParseObjectRef(base + oid)
	require.NoError(t, err)
	assert.Equal(t, oid, r.ObjectID)
	r, err = ParseObjectRef("/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/" + oid)
	require.NoError(t, err)
	assert.Equal(t, oid, r.ObjectID)
	for _, bad := range []string{"", "https://x/other", base + "not-a-uuid", "https://h/geoscience-object/orgs/x/workspaces/" + ws + "/objects/" + oid, base} {
		_, err := ParseObjectRef(bad)
		assert.Error(t, err, bad)
	}
}

func TestDecodeKNNSeedShape(t *testing.T) {
	body := `{"source": {"type": "geoscience-object-reference", "object_reference": "` + base + `path/pts.json",
	  "object_element": [{"type": "element", "path": "/locations/attributes/@name=grade"}]},
	 "target": {"object_reference": "` + base + oid + `", "object_element": [{"path": "/cell_attributes/@name=knn"}]},
	 "neighborhood": {"max-samples": 12, "anisotropy": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10},
	   "rotation": {"dip_azimuth": 30, "dip": 10, "pitch": 5}}}}`
	p, err := DecodeKNN(SeedShape, []byte(body))
	require.NoError(t, err)
	assert.Equal(t, "pts.json", p.Source.Object.Path)
	assert.Equal(t, "/locations/attributes/@name=grade", p.Source.Attribute)
	assert.Equal(t, "knn", p.Target.Name)
	assert.Equal(t, 12, p.Neighborhood.MaxSamples)
	assert.Equal(t, 100.0, p.Neighborhood.Ellipsoid.Major)
	assert.Equal(t, 30.0, p.Neighborhood.Ellipsoid.Rotation.DipAzimuth)
	// The {"parameters": …} wrapper is accepted too.
	p2, err := DecodeKNN(SeedShape, []byte(`{"parameters": `+body+`}`))
	require.NoError(t, err)
	assert.Equal(t, p, p2)
}

func TestDecodeKNNCurrentShapeWithFilters(t *testing.T) {
	body := `{"parameters": {
	  "source": {"object": "` + base + `path/pts.json", "attribute": "locations.attributes[?name=='grade']",
	    "filter": {"where": {"type": "all_of", "filters": [
	      {"type": "condition", "attribute": "locations.attributes[?name=='domain']", "operator": "in", "values": ["ore", 3], "threshold": null},
	      {"type": "condition", "attribute": "locations.attributes[?name=='grade']", "operator": "greater_than", "threshold": 0.5, "values": null}]}}},
	  "target": {"object": "` + base + oid + `?version=7", "attribute": {"operation": "create", "name": "knn_grade"}, "filter": null},
	  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 100, "semi_major": 50, "minor": 10}, "rotation": {"dip_azimuth": 0, "dip": 0, "pitch": 0}},
	    "max_samples": 20, "min_samples": 4}}}`
	p, err := DecodeKNN(CurrentShape, []byte(body))
	require.NoError(t, err)
	assert.Equal(t, "knn_grade", p.Target.Name)
	assert.Equal(t, "7", p.Target.Object.Version)
	assert.Nil(t, p.Target.Filter)
	require.NotNil(t, p.Source.Filter)
	assert.Equal(t, "all_of", p.Source.Filter.Type)
	require.Len(t, p.Source.Filter.Filters, 2)
	assert.Equal(t, []any{"ore", 3.0}, p.Source.Filter.Filters[0].Values)
	assert.Equal(t, 0.5, p.Source.Filter.Filters[1].Threshold)
	assert.Equal(t, 4, p.Neighborhood.MinSamples)

	// Evaluate the filter on a small table.
	cols := map[string]*Column{
		"locations.attributes[?name=='domain']": {Keys: []int64{1, 3, 2, 1}, Names: map[int64]string{1: "ore", 2: "waste", 3: "mixed"}},
		"locations.attributes[?name=='grade']":  {Numeric: []float64{0.7, 0.9, 0.9, 0.2}},
	}
	m, err := p.Source.Filter.Eval(4, func(e string) (*Column, error) { return cols[e], nil })
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, false, false}, m)
}

func TestDecodeInvalidFieldsAreNamed(t *testing.T) {
	body := `{"source": "` + base + `path/p.json", "source_attribute": "grade", "target": "` + base + `path/g.json",
	  "distribution": "` + base + `bad", "variogram_model": "` + base + `path/v.json",
	  "realizations": 101, "number_of_lines": 0, "random_seed": 1.5,
	  "block_discretization": {"nx": 10, "ny": 0}, "kriging_method": "universal",
	  "neighborhood": {"max_samples": 0, "ellipsoid": {"ellipsoid_ranges": {"major": -1, "semi_major": 1, "minor": 1}, "rotation": {"dip_azimuth": 400, "dip": 0, "pitch": 0}}}}`
	_, err := DecodeSimulation(CurrentShape, []byte(body))
	names := invalidNames(t, err)
	for _, want := range []string{"distribution", "realizations", "number_of_lines", "random_seed", "block_discretization.nx",
		"block_discretization.ny", "kriging_method", "neighborhood.max_samples", "neighborhood.ellipsoid.ellipsoid_ranges.major",
		"neighborhood.ellipsoid.rotation.dip_azimuth"} {
		assert.Contains(t, names, want)
	}
	_, err = DecodeKNN(CurrentShape, []byte(`{"parameters": {}}`))
	assert.ElementsMatch(t, []string{"parameters.source", "parameters.target", "parameters.neighborhood"}, invalidNames(t, err))
	_, err = DecodeKNN(CurrentShape, []byte(`[1,2]`))
	assert.Contains(t, invalidNames(t, err), "body")
}

func TestDecodeSimulationDefaults(t *testing.T) {
	body := `{"source": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au"}]},
	  "target": {"object_reference": "` + base + `path/g.json", "object_element": [{"path": "/cell_attributes/@name=sims"}]},
	  "distribution": {"object_reference": "` + base + `path/d.json"}, "variogram_model": {"object_reference": "` + base + `path/v.json"}}`
	p, err := DecodeSimulation(SeedShape, []byte(body))
	require.NoError(t, err)
	assert.Equal(t, "sims", p.Target.Name)
	assert.Equal(t, 1, p.Realisations)
	assert.Equal(t, 500, p.Lines)
	assert.Equal(t, int64(DefaultSeed), p.Seed)
	assert.False(t, p.Ordinary)
	assert.True(t, p.Normalise)
	assert.Nil(t, p.Neighborhood)
	assert.Equal(t, 1, p.Discretisation.Count())

	// Current shape: the ensemble is named simulation-results.
	cur := `{"parameters": {"source": "` + base + `path/p.json", "source_attribute": "locations.attributes[?name=='au']",
	  "target": "` + base + `path/g.json", "distribution": "` + base + `path/d.json", "variogram_model": "` + base + `path/v.json",
	  "kriging_method": "ordinary", "realizations": 5, "block_discretization": {"nx": 2, "ny": 2, "nz": 2}}}`
	c, err := DecodeSimulation(CurrentShape, []byte(cur))
	require.NoError(t, err)
	assert.Equal(t, DefaultEnsembleName, c.Target.Name)
	assert.True(t, c.Ordinary)
	assert.Equal(t, 5, c.Realisations)
	assert.Equal(t, 8, c.Discretisation.Count())
}

func TestDecodeBreakTiesAndKriging(t *testing.T) {
	seed := `{"source": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au"}]},
	  "target": {"object_reference": "` + base + `path/p.json", "object_element": [{"path": "/locations/attributes/@name=au_bt"}]}, "random_seed": 7}`
	b, err := DecodeBreakTies(SeedShape, []byte(seed))
	require.NoError(t, err)
	assert.Equal(t, int64(7), b.Seed)
	assert.Nil(t, b.Neighborhood)
	assert.Equal(t, "au_bt", b.Target.Name)

	k, err := DecodeKriging([]byte(`{"parameters": {"source": {"object": "` + base + `path/p.json", "attribute": "au"},
	  "target": {"object": "` + base + `path/g.json", "attribute": {"operation": "update", "reference": "cell_attributes[?key=='k1']"}},
	  "variogram": "` + base + `path/v.json", "kriging_method": {"type": "simple", "mean": 2.5},
	  "neighborhood": {"ellipsoid": {"ellipsoid_ranges": {"major": 1, "semi_major": 1, "minor": 1}}, "max_samples": 16},
	  "block_discretisation": {"nx": 3}, "outputs": ["variance", "slope"]}}`))
	require.NoError(t, err)
	assert.False(t, k.Ordinary)
	assert.Equal(t, 2.5, k.Mean)
	assert.Equal(t, "cell_attributes[?key=='k1']", k.Target.Update)
	assert.Equal(t, 3, k.Discretisation.NX)
	assert.Equal(t, []string{"variance", "slope"}, k.Outputs)

	_, err = DecodeKriging([]byte(`{"parameters": {"outputs": ["bogus"], "kriging_method": {"type": "ordinary", "mean": 1}}}`))
	names := invalidNames(t, err)
	assert.Contains(t, names, "parameters.outputs[0]")
	assert.Contains(t, names, "parameters.kriging_method.mean")
}
