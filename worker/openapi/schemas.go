package openapi

import (
	"reflect"
	"strings"

	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/tasks"
)

// jobStatuses returns the states a job reports, in the order they are
// reached.
func jobStatuses() []jobs.Status {
	return []jobs.Status{jobs.Requested, jobs.InProgress, jobs.Succeeded, jobs.Failed, jobs.Cancelling, jobs.Cancelled}
}

// responseSchemas returns the named schemas of the responses: the problem
// documents, the job status and results, and the task result.
func responseSchemas() map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": tasks.SchemaRefPrefix + name} }
	orNull := func(name string) map[string]any {
		return map[string]any{"anyOf": []any{ref(name), map[string]any{"type": "null"}}}
	}
	var statuses []any
	for _, s := range jobStatuses() {
		statuses = append(statuses, string(s))
	}
	str := func(doc string) map[string]any { return map[string]any{"type": "string", "description": doc} }
	jobMembers := func() map[string]any {
		return map[string]any{
			"status":   map[string]any{"enum": statuses, "description": "The job's state; succeeded, failed and cancelled are final"},
			"progress": map[string]any{"type": "integer", "minimum": 0, "maximum": 100, "description": "Percent done"},
			"message":  str("What the job is doing, or its outcome"),
			"error":    orNull("JobError"),
		}
	}
	status := jobMembers()
	status["links"] = map[string]any{"type": "object", "description": "Where to go next: results once finished, cancel while running",
		"required": []string{"status"}, "properties": map[string]any{
			"status": str("This status"), "results": str("The job's results"), "cancel": str("DELETE to cancel the job")}}
	results := jobMembers()
	results["results"] = orNull("TaskResult")

	invalid := structSchema(reflect.TypeFor[tasks.InvalidParam]())
	invalid["description"] = "One invalid request member: its dotted name (e.g. parameters.neighborhood.max_samples) and why"
	// A job's error is the same problem document (problem.Problem) the
	// routes answer with.
	jobError := map[string]any{"allOf": []any{ref("Problem")},
		"description": "Why a job failed or was cancelled, as a problem document"}

	out := map[string]any{
		"Problem": map[string]any{
			"type":        "object",
			"description": "A problem document (RFC 9457); further members may follow",
			"required":    []string{"type", "title", "status"},
			"properties": map[string]any{
				"type":   map[string]any{"type": "string", "format": "uri", "description": "The problem type's URI"},
				"title":  str("A short summary of the problem type"),
				"status": map[string]any{"type": "integer", "minimum": 100, "maximum": 599, "description": "The HTTP status"},
				"detail": map[string]any{"type": []string{"string", "null"}, "description": "This occurrence's explanation"},
			},
		},
		"ValidationProblem": map[string]any{
			"allOf":       []any{ref("Problem")},
			"description": "A problem document whose invalid-params lists every invalid request member",
			"properties": map[string]any{
				"invalid-params": map[string]any{"type": "array", "items": ref("InvalidParam")},
			},
		},
		"InvalidParam": invalid,
		"JobError":     jobError,
		"JobStatus":    withRequired(status, "A job's state", "status", "progress", "message", "error", "links"),
		"JobResults":   withRequired(results, "A job's state and, once it succeeded, the task result", "status", "progress", "message", "results", "error"),
		"TaskResult": map[string]any{
			"type":        "object",
			"description": "A task's result: a message (every task but consim and the current shape's simulation-report, which have none) and what was written (object_modified in the seed's shape, target in the current one), with what the task adds (warnings, variogram_reproduction, validation_summary, validation_report, links; consim always has links)",
			"properties": map[string]any{
				"message":         str("What the task did"),
				"links":           map[string]any{"type": "object", "description": "consim and simulation-report: dashboard (and view) of the validation report; {} without one"},
				"object_modified": map[string]any{"type": "object", "description": "The version written, as a geoscience-object-reference whose element path names the attribute"},
				"target":          map[string]any{"type": "object", "description": "The version written: reference, name, description, schema_id and the attribute (or simulations) written"},
				"warnings":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
		},
	}
	for name, s := range blockModelSchemas(ref) {
		out[name] = s
	}
	return out
}

func withRequired(props map[string]any, doc string, required ...string) map[string]any {
	return map[string]any{"type": "object", "description": doc, "properties": props, "required": required}
}

// structSchema renders a struct of string, integer, number and boolean
// fields by their json tags; fields without omitempty are required.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var typ string
		switch f.Type.Kind() {
		case reflect.String:
			typ = "string"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			typ = "integer"
		case reflect.Float32, reflect.Float64:
			typ = "number"
		case reflect.Bool:
			typ = "boolean"
		default:
			panic("openapi: no schema for the field " + t.Name() + "." + f.Name)
		}
		props[name] = map[string]any{"type": typ}
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}
