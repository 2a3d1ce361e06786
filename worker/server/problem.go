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
	problem.Write(w, p)
}

// marshalJSON encodes without HTML escaping (<, >, & stay readable).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	data, err := marshalJSON(v)
	if err != nil {
		problem.Write(w, problem.Internal())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
