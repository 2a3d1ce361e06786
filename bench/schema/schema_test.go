package schema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const valid = `{
  "schema_version": 1, "tool": "geostat-bench", "date": "2025-06-11T10:00:00Z",
  "machine": {"cores": 2, "cpu_model": "AMD EPYC", "go_version": "go1.26.8", "os": "linux", "arch": "amd64", "memory_bytes": 0},
  "settings": {"size": "medium", "runs": 3, "threads": 2, "seed": 1, "progress": false},
  "results": [{
    "name": "knn", "description": "d", "size": "medium", "workload": "w", "threads": 2, "runs": 3,
    "setup_seconds": 0.1, "warmup_seconds": 1.1,
    "wall_seconds": {"median": 1, "min": 0.9, "max": 1.2, "runs": [1, 0.9, 1.2]},
    "throughput": {"name": "cells", "per_run": 1000000, "per_second": 1000000},
    "rates": [], "allocations": {"mallocs_per_run": 10, "bytes_per_run": 1000},
    "peak_rss_bytes": null, "peak_rss_scope": "unavailable", "details": {"x": 1}
  }],
  "skipped": [{"name": "tbsim-cond", "reason": "not available yet (needs package tbsim)"}],
  "failed": []
}`

func TestSchemaCompiles(t *testing.T) {
	_, err := Compile()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(JSON, &doc))
	assert.Equal(t, URL, doc["$id"])
}

func TestValidate(t *testing.T) {
	require.NoError(t, Validate([]byte(valid)))

	mutate := func(f func(d map[string]any)) []byte {
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(valid), &d))
		f(d)
		b, err := json.Marshal(d)
		require.NoError(t, err)
		return b
	}
	result := func(d map[string]any) map[string]any { return d["results"].([]any)[0].(map[string]any) }
	for name, bad := range map[string][]byte{
		"missing machine":   mutate(func(d map[string]any) { delete(d, "machine") }),
		"bad size":          mutate(func(d map[string]any) { d["settings"].(map[string]any)["size"] = "huge" }),
		"bad date":          mutate(func(d map[string]any) { d["date"] = "yesterday" }),
		"negative time":     mutate(func(d map[string]any) { result(d)["wall_seconds"].(map[string]any)["median"] = -1 }),
		"no runs":           mutate(func(d map[string]any) { result(d)["wall_seconds"].(map[string]any)["runs"] = []any{} }),
		"unknown field":     mutate(func(d map[string]any) { result(d)["speedup"] = 3 }),
		"bad scope":         mutate(func(d map[string]any) { result(d)["peak_rss_scope"] = "guess" }),
		"string detail":     mutate(func(d map[string]any) { result(d)["details"] = map[string]any{"x": "fast"} }),
		"wrong version":     mutate(func(d map[string]any) { d["schema_version"] = 2 }),
		"missing allocs":    mutate(func(d map[string]any) { delete(result(d), "allocations") }),
		"not json":          []byte("{"),
		"bad scenario name": mutate(func(d map[string]any) { result(d)["name"] = "Knn!" }),
	} {
		assert.Error(t, Validate(bad), name)
	}
}
