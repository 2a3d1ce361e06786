package tasks

import (
	"fmt"
	"net/http"

	"github.com/geostat-engine/geostat/worker/problem"
)

// InvalidParam names one invalid request field and why, as in the
// problem-details `invalid-params` member.
type InvalidParam = problem.InvalidParam

// ValidationError is a request that failed validation: every invalid field
// with its reason. The HTTP layer answers it with 422.
type ValidationError struct {
	Params []InvalidParam
}

// Error lists the invalid fields.
func (e *ValidationError) Error() string { return problem.InvalidParamsDetail(e.Params) }

// Problem is the 422 document listing the invalid parameters.
func (e *ValidationError) Problem() problem.Problem {
	return problem.Invalid(problem.ComputeValidation, e.Params)
}

// problems accumulates invalid fields while a request is decoded.
type problems struct{ list []InvalidParam }

func (p *problems) add(name, format string, args ...any) {
	p.list = append(p.list, InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Params: p.list}
}

// runError is the error a job's run ends with: a full disk met while the
// job writes (ENOSPC or EDQUOT in err's chain, or a 507 from the object
// store, local or upstream) is 507 insufficient-storage, "writing the job's
// output: no space left on device", never 500 task-failed; the target is
// left as it was (the version is committed last). The admission check at
// submit answers 422 for an output known not to fit. Other errors are
// returned as they are.
func runError(err error) error {
	if err == nil {
		return nil
	}
	if problem.NoSpace(err) || problem.StatusOf(err) == http.StatusInsufficientStorage {
		return problem.InsufficientStorage(problem.ComputeInsufficientStorage, "writing the job's output", err)
	}
	return err
}
