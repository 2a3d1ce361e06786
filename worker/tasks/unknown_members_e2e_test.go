package tasks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/tasks"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// invalidParams returns the reasons of a validation problem by name.
func invalidParams(t *testing.T, p map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	list, ok := p["invalid-params"].([]any)
	require.True(t, ok, "%v", p)
	for _, ip := range list {
		m := ip.(map[string]any)
		out[m["name"].(string)] = m["reason"].(string)
	}
	return out
}

// edit decodes body, applies change to it and encodes it again.
func edit(t *testing.T, body []byte, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	change(m)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// TestMisspeltMembersAre422 checks that a member no rule declares is
// refused with 422 naming it and the closest known name, at every nesting
// level, in both topics, and that no job is created; the well-formed
// request it was made from succeeds.
func TestMisspeltMembersAre422(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(40, 3)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade),
		b.Category("domain", "k-dom", make([]int64, 40), map[int64]string{0: "ore"})))
	current := "/compute/orgs/" + org + "/geostatistics/knn"
	seed := "/compute/orgs/" + org + "/geostat/knn"
	good := knnBody(h, "pts.json", "au", "pts.json")

	for _, c := range []struct {
		path   string
		body   []byte
		name   string
		reason string
	}{
		{current, edit(t, good, func(m map[string]any) { obj(m, "parameters", "neighborhood")["min_sample"] = 16 }),
			"parameters.neighborhood.min_sample", `unknown member; did you mean "min_samples"?`},
		{current, edit(t, good, func(m map[string]any) { obj(m, "parameters", "neighborhood")["maxsamples"] = 3 }),
			"parameters.neighborhood.maxsamples", `unknown member; did you mean "max_samples"?`},
		{current, edit(t, good, func(m map[string]any) {
			obj(m, "parameters", "neighborhood", "ellipsoid", "rotation")["dip_azimut"] = 10
		}), "parameters.neighborhood.ellipsoid.rotation.dip_azimut", `unknown member; did you mean "dip_azimuth"?`},
		{current, edit(t, good, func(m map[string]any) { obj(m, "parameters", "target", "attribute")["nmae"] = "x" }),
			"parameters.target.attribute.nmae", `unknown member; did you mean "name"?`},
		{current, edit(t, good, func(m map[string]any) {
			obj(m, "parameters", "source")["filter"] = map[string]any{"where": map[string]any{"type": "all_of", "filters": []any{
				map[string]any{"type": "condition", "attribute": "domain", "operator": "in", "values": []any{"ore"}, "threshold": nil},
				map[string]any{"type": "condition", "attribute": "au", "operator": "greater_than", "treshold": 1},
			}}}
		}), "parameters.source.filter.where.filters[1].treshold", `unknown member; did you mean "threshold"?`},
		{current, edit(t, good, func(m map[string]any) { obj(m, "parameters", "target", "attribute")["reference"] = "au" }),
			"parameters.target.attribute.reference", `applies only when operation is update`},
		{current, edit(t, good, func(m map[string]any) { obj(m, "parameters")["colour"] = "blue" }),
			"parameters.colour", "unknown member"},
		{seed, edit(t, seedKNNBody(h, "pts.json", "au", "pts.json"), func(m map[string]any) { obj(m, "neighborhood")["max_samples"] = 3 }),
			"neighborhood.max_samples", `unknown member; did you mean "max-samples"?`},
		{seed, edit(t, seedKNNBody(h, "pts.json", "au", "pts.json"), func(m map[string]any) {
			obj(m, "source")["object_refrence"] = h.url("pts.json")
		}), "source.object_refrence", `unknown member; did you mean "object_reference"?`},
		{seed, edit(t, seedKNNBody(h, "pts.json", "au", "pts.json"), func(m map[string]any) {
			obj(m, "target")["object_element"].([]any)[0].(map[string]any)["paht"] = "x"
		}), "target.object_element[0].paht", `unknown member; did you mean "path"?`},
	} {
		p := problem(t, h, c.path, c.body, http.StatusUnprocessableEntity, "/validation")
		params := invalidParams(t, p)
		assert.Equal(t, c.reason, params[c.name], "%s: %v", c.body, params)
	}
	assert.Empty(t, h.jobs.List(org), "no job was created")

	// The requests they were made from run.
	r, err := h.c.Do(h.ctx, http.MethodPost, current, good)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	job, err := h.c.Follow(h.ctx, r.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)

	// Every task of both topics refuses an unknown member, bare or wrapped.
	for _, topic := range []string{tasks.TopicSeed, tasks.TopicCurrent} {
		for _, task := range tasks.Tasks(topic) {
			path := "/compute/orgs/" + org + "/" + topic + "/" + task
			p := problem(t, h, path, []byte(`{"parameters": {"bogus_member": 1}}`), http.StatusUnprocessableEntity, "/validation")
			assert.Equal(t, "unknown member", invalidParams(t, p)["parameters.bogus_member"], "%s/%s", topic, task)
			p = problem(t, h, path, []byte(`{"bogus_member": null}`), http.StatusUnprocessableEntity, "/validation")
			assert.Equal(t, "unknown member", invalidParams(t, p)["bogus_member"], "%s/%s", topic, task)
		}
	}
}

// TestUnknownAttributeListsTheAttributes checks that an attribute the
// object does not have is refused naming the attributes it has, for an
// expression and for a seed element path.
func TestUnknownAttributeListsTheAttributes(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(30, 4)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("cu", "k-cu", grade), b.Scalar("au", "k-au", grade)))
	want := `has no attribute named "copper" in locations.attributes; its attributes are: "cu" (key "k-cu"), "au" (key "k-au")`
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/knn", knnBody(h, "pts.json", "locations.attributes[?name=='copper']", "pts.json"),
		http.StatusUnprocessableEntity, "/validation")
	assert.Contains(t, invalidParams(t, p)["source.attribute"], want, "%v", p)
	p = problem(t, h, "/compute/orgs/"+org+"/geostat/knn", seedKNNBody(h, "pts.json", "copper", "pts.json"),
		http.StatusUnprocessableEntity, "/validation")
	assert.Contains(t, p["detail"], want)
}

// TestJSONSyntaxErrorSaysWhere checks that a body that is not JSON is 400
// with the line and column of the error, on the task routes and on the
// object routes that read JSON.
func TestJSONSyntaxErrorSaysWhere(t *testing.T) {
	h := start(t, 1)
	bad := []byte("{\n  \"parameters\": {\n    \"source\": {},}\n}")
	for _, path := range []string{"/compute/orgs/" + org + "/geostatistics/knn", "/compute/orgs/" + org + "/geostat/knn"} {
		p := problem(t, h, path, bad, http.StatusBadRequest, "/bad-request")
		assert.Equal(t, "invalid JSON at line 3, column 18: invalid character '}' looking for beginning of object key string", p["detail"])
	}
	objPath := "/geoscience-object/orgs/" + org + "/workspaces/" + ws
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, objPath + "/objects/path/x.json"},
		{http.MethodPatch, objPath + "/objects"},
		{http.MethodPut, objPath + "/data"},
	} {
		r, err := h.c.Do(h.ctx, c.method, c.path, bad)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s %s: %s", c.method, c.path, r.Body)
		assert.True(t, strings.Contains(string(r.Body), "invalid JSON at line 3, column 18"), "%s %s: %s", c.method, c.path, r.Body)
	}
}
