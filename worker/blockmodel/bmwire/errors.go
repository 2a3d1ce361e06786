package bmwire

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/geostat-engine/geostat/worker/problem"
)

// Problem types of the block model area used by this package (seed 7.2
// suffixes under the worker's base); the route layer registers them.
const (
	// TypeValidation: a body or query parameter is invalid (422).
	TypeValidation = problem.Base + "/block-model-service/validation"
	// TypeInvalidQuery: a query parameter is unusable (400).
	TypeInvalidQuery = problem.Base + "/block-model-service/invalid-query-parameters"
	// TypeJobUpdateError: an update job's file is unusable (FAILED payload).
	TypeJobUpdateError = problem.Base + "/block-model-service/job/update-error"
)

// InvalidParam names one invalid request member and why, as in the
// problem-details invalid-params member.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ValidationError is a body that failed validation: every invalid member
// with its reason, in the order found.
type ValidationError struct {
	Params []InvalidParam
}

// Error lists the invalid members.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid parameters: ")
	for i, p := range e.Params {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Name, p.Reason)
	}
	return b.String()
}

// Problem is the 422 block-model-service/validation document listing the
// invalid members under invalid-params.
func (e *ValidationError) Problem() problem.Problem {
	return problem.Problem{Type: TypeValidation, Title: "Validation Error.", Status: http.StatusUnprocessableEntity,
		Detail: e.Error(), Extra: map[string]any{"invalid-params": e.Params}}
}

// errs accumulates invalid members while a body is decoded.
type errs struct{ list []InvalidParam }

func (p *errs) add(name, format string, args ...any) {
	p.list = append(p.list, InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
}

func (p *errs) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Params: p.list}
}

// QueryError is an unusable query parameter: 400
// block-model-service/invalid-query-parameters naming it.
type QueryError struct {
	Params []InvalidParam
}

// Error lists the parameters.
func (e *QueryError) Error() string { return (&ValidationError{Params: e.Params}).Error() }

// Problem is the 400 document.
func (e *QueryError) Problem() problem.Problem {
	return problem.Problem{Type: TypeInvalidQuery, Title: "Invalid Query Parameters.", Status: http.StatusBadRequest,
		Detail: e.Error(), Extra: map[string]any{"invalid-params": e.Params}}
}
