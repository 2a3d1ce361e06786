package files

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/geostat-engine/geostat/worker/problem"
)

// Problem types of the file area (defined once in package problem).
const (
	// TypeInvalidPath: leading or trailing spaces (with the preview flag),
	// invalid symbols, empty segments, a name too long (400).
	TypeInvalidPath = problem.FileInvalidPath
	// TypeNotFound: no live file or version with this id or path (404).
	TypeNotFound = problem.FileNotFound
	// TypeVersionExists: content uploaded twice for one version (409);
	// versions are immutable.
	TypeVersionExists = problem.FileVersionExists
	// TypeValidation: a malformed request (ids, version ids, paging) (422).
	TypeValidation = problem.FileValidation
	// TypeInternal: an unexpected server or storage error (500).
	TypeInternal = problem.FileInternal
	// TypeInsufficientStorage: the disk cannot hold a write (507).
	TypeInsufficientStorage = problem.FileInsufficientStorage
)

// Error is an error of the file area: a problem.Error whose type is one of
// the Type constants. Err, when set, is the cause and is never shown to
// clients.
type Error = problem.Error

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

// errInternal is the error of a failed step, what: 507
// insufficient-storage naming it when the disk is full (ENOSPC or EDQUOT in
// cause's chain), else 500.
func errInternal(what string, cause error) *Error {
	if problem.NoSpace(cause) {
		return problem.InsufficientStorage(TypeInsufficientStorage, what, cause)
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Title: "An Error Occurred.",
		Detail: "the server could not complete the request", Err: fmt.Errorf("%s: %w", what, cause)}
}

func errSignature(detail string) *Error {
	return &Error{Status: http.StatusForbidden, Type: problem.BadSignature, Title: "Authentication Failed.", Detail: detail}
}
