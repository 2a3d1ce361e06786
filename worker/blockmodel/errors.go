package blockmodel

import (
	"fmt"

	"github.com/geostat-engine/geostat/worker/problem"
)

// TypeValidation is the problem type of input that failed validation in the
// block model area (422, seed 7.2 suffix under the worker's base).
const TypeValidation = problem.Base + "/block-model-service/validation"

// InvalidParam names one invalid request member and why, in the shape of
// the problem-details `invalid-params` member.
type InvalidParam = problem.InvalidParam

// ValidationError is input that failed validation: every invalid member with
// its reason, in the order found. The route layer answers it with Problem, a
// 422 whose invalid-params lists Params. Its zero value is an empty list
// that checks fill with Add, then turn into an error with Err.
type ValidationError struct {
	Params []InvalidParam
}

// Error lists the invalid members.
func (e *ValidationError) Error() string { return problem.InvalidParamsDetail(e.Params) }

// Problem is the 422 block-model-service/validation document listing the
// invalid members under invalid-params.
func (e *ValidationError) Problem() problem.Problem { return problem.Invalid(TypeValidation, e.Params) }

// Add appends an invalid member and its reason (a format and its
// arguments).
func (e *ValidationError) Add(name, format string, args ...any) {
	e.Params = append(e.Params, InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
}

// Err returns nil when nothing was added, else the list as a
// *ValidationError.
func (e *ValidationError) Err() error {
	if len(e.Params) == 0 {
		return nil
	}
	return &ValidationError{Params: e.Params}
}
