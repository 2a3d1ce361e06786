package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/geostat-engine/geostat/worker/store"
)

// ErrorBase is the {error_base} of the problem type URIs this worker emits.
// Errors of the geoscience object area have the type
// ErrorBase + "/geoscienceobject" + the seed 7.3 suffix, e.g.
// https://errors.geostat-engine.dev/geoscienceobject/objects/not-found.
// HTTP-level errors that seed 7.3 does not list (unknown route, wrong method,
// body too large, overload, bad upload signature) use
// ErrorBase + "/http/<name>".
const ErrorBase = "https://errors.geostat-engine.dev"

// ObjectErrorBase is the base of the geoscience object area's problem types.
const ObjectErrorBase = ErrorBase + "/geoscienceobject"

// HTTP-level problem types.
const (
	TypeRouteNotFound    = ErrorBase + "/http/not-found"
	TypeMethodNotAllowed = ErrorBase + "/http/method-not-allowed"
	TypePayloadTooLarge  = ErrorBase + "/http/payload-too-large"
	TypeUnavailable      = ErrorBase + "/http/service-unavailable"
	TypeBadSignature     = ErrorBase + "/http/invalid-signature"
)

// Problem is a problem-details body (RFC 9457): type, title, status, detail
// and extra members.
type Problem struct {
	Type   string
	Title  string
	Status int
	Detail string
	Extra  map[string]any
}

// MarshalJSON renders the problem with its extra members at the top level.
func (p Problem) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(p.Extra)+4)
	for k, v := range p.Extra {
		m[k] = v
	}
	m["type"], m["title"], m["status"] = p.Type, p.Title, p.Status
	if p.Detail != "" {
		m["detail"] = p.Detail
	} else {
		m["detail"] = nil
	}
	return marshalJSON(m)
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

// ProblemFor converts an error to a problem: a *store.Error keeps its status,
// type (under ObjectErrorBase), title, detail and extra members; a body over
// the size limit is 413; anything else is a 500 whose detail does not leak
// the cause.
func ProblemFor(err error) Problem {
	if e := store.AsError(err); e != nil {
		p := Problem{Type: ObjectErrorBase + e.Type, Title: e.Title, Status: e.Status, Detail: e.Detail, Extra: e.Extra}
		if e.Status >= 500 && p.Detail == "" {
			p.Detail = "the server could not complete the request"
		}
		return p
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Problem{Type: TypePayloadTooLarge, Title: "Payload Too Large.", Status: http.StatusRequestEntityTooLarge,
			Detail: "the request body exceeds the limit of " + itoa(mbe.Limit) + " bytes"}
	}
	return Problem{Type: ObjectErrorBase + store.TypeInternal, Title: "An Error Occurred.", Status: http.StatusInternalServerError,
		Detail: "the server could not complete the request"}
}

// WriteProblem writes err as an application/problem+json response whose
// status member equals the HTTP status. Server errors are logged (without
// request credentials).
func WriteProblem(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	p := ProblemFor(err)
	if p.Status >= 500 && logger != nil {
		logger.Error("request failed", "method", r.Method, "route", r.Pattern, "status", p.Status, "err", err)
	}
	writeProblem(w, p)
}

func writeProblem(w http.ResponseWriter, p Problem) {
	data, err := json.Marshal(p)
	if err != nil {
		data = []byte(`{"type":"` + ObjectErrorBase + store.TypeInternal + `","title":"An Error Occurred.","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Del("Content-Length")
	w.WriteHeader(p.Status)
	w.Write(append(data, '\n'))
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	data, err := marshalJSON(v)
	if err != nil {
		writeProblem(w, ProblemFor(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
