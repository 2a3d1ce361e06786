package store

import (
	"errors"
	"fmt"
	"github.com/geostat-engine/geostat/worker/problem"
	"net/http"
)

// Problem types of the geoscience object area (seed 7.3): the full type
// URIs, defined once in package problem.
const (
	TypeInvalidObject   = problem.ObjectInvalidObject
	TypeInvalidKey      = problem.ObjectInvalidKey
	TypeDataKeyNotFound = problem.ObjectDataKeyNotFound
	TypeBlobExists      = problem.ObjectBlobExists
	TypeObjectError     = problem.ObjectError
	TypeInvalidPath     = problem.ObjectInvalidPath
	TypeBadRequest      = problem.ObjectBadRequest
	TypeMissingToken    = problem.ObjectMissingToken
	TypeInvalidToken    = problem.ObjectInvalidToken
	TypeInsufficient    = problem.ObjectInsufficient
	TypeNotFound        = problem.ObjectNotFound
	TypeSchemaNotFound  = problem.ObjectSchemaNotFound
	TypeAlreadyExists   = problem.ObjectAlreadyExists
	TypeModified        = problem.ObjectModified
	TypeInvalidFilter   = problem.ObjectInvalidFilter
	TypeInvalidSort     = problem.ObjectInvalidSort
	TypeValidation      = problem.ObjectValidation
	TypeInternal        = problem.ObjectInternal
	TypeStorage         = problem.ObjectStorage
	TypeBadGateway      = problem.ObjectBadGateway
	// TypeInsufficientStorage: the disk cannot hold a write (507).
	TypeInsufficientStorage = problem.ObjectInsufficientStorage
)

// Error is a store error: a problem.Error whose type is one of the Type
// constants, with the extra members of seed 7.3 (json_path, missing,
// existing_id, ...). The HTTP layer renders it with problem.From.
type Error = problem.Error

// AsError returns the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// StatusOf returns the HTTP status of a store error, 500 for other errors.
func StatusOf(err error) int { return problem.StatusOf(err) }

// IsNotFound reports whether err is a 404 store error.
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// NewError returns an error with the given status, type, title and detail.
func NewError(status int, typ, title, detail string) *Error {
	return problem.New(status, typ, title, detail)
}

// with sets an extension member of e and returns e.
func with(e *Error, k string, v any) *Error {
	if e.Extra == nil {
		e.Extra = map[string]any{}
	}
	e.Extra[k] = v
	return e
}

// ErrInvalidObject: the document fails validation against its schema (or has
// non-finite numbers).
func ErrInvalidObject(detail, jsonPath string, schemaPath []string) *Error {
	e := NewError(http.StatusBadRequest, TypeInvalidObject, "The Geoscience Object Is Invalid.", detail)
	var jp any
	if jsonPath != "" {
		jp = jsonPath
	}
	var sp any
	if schemaPath != nil {
		sp = schemaPath
	}
	return with(with(e, "json_path", jp), "schema_path", sp)
}

// ErrInvalidKey: data references that are neither SHA-256 digests nor UUIDs.
func ErrInvalidKey(invalid []string) *Error {
	return with(NewError(http.StatusBadRequest, TypeInvalidKey, "Data Key Not Valid.",
		"data references must be SHA-256 hex digests or UUIDs"), "invalid", invalid)
}

// ErrDataKeyNotFound: referenced blobs that were never uploaded.
func ErrDataKeyNotFound(missing []string) *Error {
	return with(NewError(http.StatusBadRequest, TypeDataKeyNotFound, "Data Key Not Found.",
		fmt.Sprintf("%d referenced data blob(s) do not exist; upload them first", len(missing))), "missing", missing)
}

// ErrObjectError: a schema type change or a name without .json.
func ErrObjectError(detail string) *Error {
	return NewError(http.StatusBadRequest, TypeObjectError, "Object Error.", detail)
}

// ErrInvalidPath: invalid symbols, whitespace around a segment, name too long.
func ErrInvalidPath(detail string) *Error {
	return NewError(http.StatusBadRequest, TypeInvalidPath, "Invalid Path.", detail)
}

// ErrBadRequest: any other client error.
func ErrBadRequest(detail string) *Error {
	return NewError(http.StatusBadRequest, TypeBadRequest, "Bad Request.", detail)
}

// ErrNotFound: no (visible) object with this id or path.
func ErrNotFound(objectID, detail string) *Error {
	var id any
	if objectID != "" {
		id = objectID
	}
	return with(NewError(http.StatusNotFound, TypeNotFound, "Object Not Found.", detail), "object_id", id)
}

// ErrSchemaNotFound: the document names a schema the service does not know.
func ErrSchemaNotFound(schema string) *Error {
	return NewError(http.StatusNotFound, TypeSchemaNotFound, "Failed To Request Geoscience Object Schema.",
		fmt.Sprintf("schema %q is not known", schema))
}

// ErrAlreadyExists: a create conflicts with an existing object at the path
// (compared case-insensitively).
func ErrAlreadyExists(existingID, path string) *Error {
	var id any
	if existingID != "" {
		id = existingID
	}
	e := NewError(http.StatusConflict, TypeAlreadyExists, "Geoscience Object Already Exists.",
		fmt.Sprintf("an object already exists at %q", path))
	return with(with(e, "existing_id", id), "object_path", path)
}

// ErrModified: the If-Match version is not the latest.
func ErrModified(detail string) *Error {
	return NewError(http.StatusPreconditionFailed, TypeModified, "Object Modified", detail)
}

// ErrInvalidFilter: a bad list filter.
func ErrInvalidFilter(detail string) *Error {
	return NewError(http.StatusUnprocessableEntity, TypeInvalidFilter, "Invalid Filter Params.", detail)
}

// ErrInvalidSort: a bad list sort.
func ErrInvalidSort(detail string) *Error {
	return NewError(http.StatusUnprocessableEntity, TypeInvalidSort, "Invalid Sorting Parameters", detail)
}

// ErrValidation: a malformed request (bad ids, too many names, bad paging).
func ErrValidation(detail string) *Error {
	return NewError(http.StatusUnprocessableEntity, TypeValidation, "Validation Error.", detail)
}

// ErrStorage: the storage layer failed (disk, upstream object store). A
// full disk is 507 (ErrInsufficientStorage), not 502.
func ErrStorage(cause error) *Error {
	if problem.NoSpace(cause) {
		return ErrInsufficientStorage("storing data", cause)
	}
	return &Error{Status: http.StatusBadGateway, Type: TypeStorage, Title: "Geoscience Object Storage Operation Failed.", Err: cause}
}

// ErrInsufficientStorage: the disk cannot hold a write (ENOSPC or EDQUOT in
// cause's chain): 507 insufficient-storage naming the operation, e.g.
// "blob upload: no space left on device". Nothing half-written is kept.
func ErrInsufficientStorage(op string, cause error) *Error {
	return problem.InsufficientStorage(TypeInsufficientStorage, op, cause)
}

// writeError is the error of a failed write of op: 507 when the disk is
// full, else 502 storage.
func writeError(op string, cause error) *Error {
	if problem.NoSpace(cause) {
		return ErrInsufficientStorage(op, cause)
	}
	return ErrStorage(fmt.Errorf("%s: %w", op, cause))
}

// ErrInternal: an unexpected server error.
func ErrInternal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Title: "An Error Occurred.", Err: cause}
}
