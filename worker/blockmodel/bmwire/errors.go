package bmwire

import (
	"net/http"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/problem"
)

// Problem types of the block model area used by this package besides
// blockmodel.TypeValidation (seed 7.2 suffixes under the worker's base); the
// route layer registers them.
const (
	// TypeInvalidQuery: a query parameter is unusable (400).
	TypeInvalidQuery = problem.Base + "/block-model-service/invalid-query-parameters"
	// TypeJobUpdateError: an update job's file is unusable (FAILED payload).
	TypeJobUpdateError = problem.Base + "/block-model-service/job/update-error"
)

// QueryError is an unusable query parameter: 400
// block-model-service/invalid-query-parameters naming it.
type QueryError struct {
	Params []blockmodel.InvalidParam
}

// Error lists the parameters.
func (e *QueryError) Error() string { return (&blockmodel.ValidationError{Params: e.Params}).Error() }

// Problem is the 400 document.
func (e *QueryError) Problem() problem.Problem {
	return problem.Problem{Type: TypeInvalidQuery, Title: "Invalid Query Parameters.", Status: http.StatusBadRequest,
		Detail: e.Error(), Extra: map[string]any{"invalid-params": e.Params}}
}
