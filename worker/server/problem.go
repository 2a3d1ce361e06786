package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/geostat-engine/geostat/worker/problem"
)

// WriteProblem writes err as an application/problem+json response (see
// problem.From) whose status member equals the HTTP status. Server errors
// are logged (without request credentials).
func WriteProblem(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	p := problem.From(err)
	if p.Status >= 500 && logger != nil {
		logger.Error("request failed", "method", r.Method, "route", r.Pattern, "status", p.Status, "err", err)
	}
	// The statuses of each route are documented in one table
	// (problem.RouteStatuses, rendered by the OpenAPI document); an answer
	// outside it is a defect to fix there or here.
	if logger != nil && problem.Undocumented(r.Method, r.Pattern, p.Status) {
		logger.Error("undocumented status", "method", r.Method, "route", r.Pattern, "status", p.Status, "type", p.Type)
	}
	problem.Write(w, p)
}

// WriteJSON writes v as a JSON response with the given status, without
// HTML escaping (<, >, & stay readable).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		problem.Write(w, problem.Internal())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
