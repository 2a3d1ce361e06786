package tasks

import (
	"context"
	"net/http"
)

// notImplemented answers a task the worker does not run yet with 501.
func notImplemented(task string) preparer {
	return func(context.Context, *Env, Request) (Plan, error) {
		return nil, &StatusError{Status: http.StatusNotImplemented, Type: ComputeErrorBase + "/not-implemented",
			Title: "Not Implemented.", Detail: "the " + task + " task is not implemented by this worker yet"}
	}
}

var (
	PrepareReport = notImplemented("simulation-report")
)
