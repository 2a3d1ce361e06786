package files

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/geostat-engine/geostat/worker/server"
)

// ErrorBase is the base of the file area's problem types (seed 7.4).
const ErrorBase = server.ErrorBase + "/file-api"

// Problem types of the file area. Seed 7.4 names only invalid-path; the
// others follow its pattern.
const (
	// TypeInvalidPath: leading or trailing spaces (with the preview flag),
	// invalid symbols, empty segments, a name too long (400).
	TypeInvalidPath = ErrorBase + "/files/invalid-path"
	// TypeNotFound: no live file or version with this id or path (404).
	TypeNotFound = ErrorBase + "/files/not-found"
	// TypeVersionExists: content uploaded twice for one version (409);
	// versions are immutable.
	TypeVersionExists = ErrorBase + "/files/version-exists"
	// TypeValidation: a malformed request (ids, version ids, paging) (422).
	TypeValidation = ErrorBase + "/validation"
	// TypeInternal: an unexpected server or storage error (500).
	TypeInternal = ErrorBase + "/internal"
)

// Error is an error of the file area in the shape of a problem-details
// response: the HTTP status, the full problem type URI, a title and a
// detail. Err, when set, is the cause and is never shown to clients.
type Error struct {
	Status int
	Type   string
	Title  string
	Detail string
	Err    error
}

// Error returns "files: " and the detail (or title), with the cause if any.
func (e *Error) Error() string {
	msg := "files: " + e.Detail
	if e.Detail == "" {
		msg = "files: " + e.Title
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsNotFound reports whether err is a 404 of the file area.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

func errInvalidPath(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidPath, Title: "Invalid Path.", Detail: detail}
}

func errNotFound(detail string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeNotFound, Title: "File Not Found.", Detail: detail}
}

func errValidation(detail string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Type: TypeValidation, Title: "Validation Error.", Detail: detail}
}

func errVersionExists(detail string) *Error {
	return &Error{Status: http.StatusConflict, Type: TypeVersionExists, Title: "Version Already Uploaded.", Detail: detail}
}

func errInternal(what string, cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Title: "An Error Occurred.",
		Detail: "the server could not complete the request", Err: fmt.Errorf("%s: %w", what, cause)}
}

func errSignature(detail string) *Error {
	return &Error{Status: http.StatusForbidden, Type: server.TypeBadSignature, Title: "Authentication Failed.", Detail: detail}
}
