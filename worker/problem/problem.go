// Package problem is the worker's one problem-details type (RFC 9457): the
// document every error response and every failed job carries, the error
// that knows its document, one renderer, and the problem type URIs of every
// area of the API as constants.
//
// An error gets its HTTP answer where it arises: a handler or a task returns
// an *Error (or any error with a Problem method, such as a validation error
// listing invalid parameters), and From turns whatever reaches the top into a
// document. Errors that carry no document are faults of the worker: 500,
// with a detail that does not leak the cause.
package problem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
)

// Base is the {error_base} of every problem type URI the worker emits.
const Base = "https://errors.geostat-engine.dev"

// Area bases: the geoscience object API (seed 7.3 suffixes), the file API
// (seed 7.4), the compute routes and HTTP-level errors that no area lists.
const (
	ObjectBase  = Base + "/geoscienceobject"
	FileBase    = Base + "/file-api"
	ComputeBase = Base + "/compute"
	HTTPBase    = Base + "/http"
)

// HTTP-level problem types.
const (
	RouteNotFound    = HTTPBase + "/not-found"
	MethodNotAllowed = HTTPBase + "/method-not-allowed"
	PayloadTooLarge  = HTTPBase + "/payload-too-large"
	Unavailable      = HTTPBase + "/service-unavailable"
	TooManyRequests  = HTTPBase + "/too-many-requests"
	BadSignature     = HTTPBase + "/invalid-signature"
)

// Problem types of the geoscience object area (seed 7.3).
const (
	ObjectInvalidObject   = ObjectBase + "/schemas/invalid-object"
	ObjectInvalidKey      = ObjectBase + "/data/invalid-key"
	ObjectDataKeyNotFound = ObjectBase + "/objects/data-key-not-found"
	ObjectBlobExists      = ObjectBase + "/data/blob-exists"
	ObjectError           = ObjectBase + "/objects/invalid-object"
	ObjectInvalidPath     = ObjectBase + "/invalid-path"
	ObjectBadRequest      = ObjectBase + "/bad-request"
	ObjectMissingToken    = ObjectBase + "/auth/missing-token"
	ObjectInvalidToken    = ObjectBase + "/auth/invalid-token"
	ObjectInsufficient    = ObjectBase + "/auth/insufficient-role"
	ObjectNotFound        = ObjectBase + "/objects/not-found"
	ObjectSchemaNotFound  = ObjectBase + "/schemas/not-found"
	ObjectAlreadyExists   = ObjectBase + "/objects/already-exists"
	ObjectModified        = ObjectBase + "/objects/modified"
	ObjectInvalidFilter   = ObjectBase + "/filtering/invalid-params"
	ObjectInvalidSort     = ObjectBase + "/sorting/invalid-params"
	ObjectValidation      = ObjectBase + "/validation"
	ObjectInternal        = ObjectBase + "/api-errors"
	ObjectStorage         = ObjectBase + "/objects/storage"
	ObjectBadGateway      = ObjectBase + "/bad-gateway"
	// ObjectInsufficientStorage: the disk cannot hold a write (507).
	ObjectInsufficientStorage = ObjectBase + "/insufficient-storage"
)

// Problem types of the file area (seed 7.4 names invalid-path; the others
// follow its pattern).
const (
	FileInvalidPath   = FileBase + "/files/invalid-path"
	FileNotFound      = FileBase + "/files/not-found"
	FileVersionExists = FileBase + "/files/version-exists"
	FileValidation    = FileBase + "/validation"
	FileInternal      = FileBase + "/internal"
	// FileInsufficientStorage: the disk cannot hold a write (507).
	FileInsufficientStorage = FileBase + "/insufficient-storage"
)

// Problem types of the compute routes and of failed jobs.
const (
	ComputeValidation      = ComputeBase + "/validation"
	ComputeBadJSON         = ComputeBase + "/bad-request"
	ComputePayloadTooLarge = ComputeBase + "/payload-too-large"
	ComputeUnknownTask     = ComputeBase + "/unknown-task"
	ComputeJobNotFound     = ComputeBase + "/job-not-found"
	ComputeNotImplemented  = ComputeBase + "/not-implemented"
	ComputeUnavailable     = ComputeBase + "/unavailable"
	// ComputeInvalidData: an object's stored data is unusable (corrupt
	// Parquet, a row count that differs from the declared length, no finite
	// values); 422, naming the object and the member.
	ComputeInvalidData = ComputeBase + "/invalid-data"
	// ComputeInsufficientStorage: the data directory cannot hold a job's
	// output (422 at submit, naming both figures; 507 when a running job
	// finds the disk full while writing it).
	ComputeInsufficientStorage = ComputeBase + "/insufficient-storage"
	ComputeTaskFailed          = ComputeBase + "/task-failed"
	// ComputeInternal: a job failed on a bug of the worker (a panic in one
	// of its goroutines); 500, the stack in the worker's log only.
	ComputeInternal    = ComputeBase + "/internal"
	ComputeInterrupted = ComputeBase + "/interrupted"
	ComputeCancelled   = ComputeBase + "/cancelled"
)

// Problem is a problem-details document: type, title, status, detail and
// extension members (rendered at the top level).
type Problem struct {
	Type   string
	Title  string
	Status int
	Detail string
	Extra  map[string]any
}

// MarshalJSON renders the problem with its extension members at the top
// level and detail null when empty.
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
	return marshal(m)
}

// UnmarshalJSON reads a document MarshalJSON wrote (the members it does not
// know go to Extra).
func (p *Problem) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*p = Problem{}
	for k, raw := range m {
		var err error
		switch k {
		case "type":
			err = json.Unmarshal(raw, &p.Type)
		case "title":
			err = json.Unmarshal(raw, &p.Title)
		case "status":
			err = json.Unmarshal(raw, &p.Status)
		case "detail":
			var d *string
			if err = json.Unmarshal(raw, &d); err == nil && d != nil {
				p.Detail = *d
			}
		default:
			var v any
			if err = json.Unmarshal(raw, &v); err == nil {
				if p.Extra == nil {
					p.Extra = map[string]any{}
				}
				p.Extra[k] = v
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// With returns a copy of p with one more extension member.
func (p Problem) With(key string, v any) Problem {
	extra := make(map[string]any, len(p.Extra)+1)
	for k, x := range p.Extra {
		extra[k] = x
	}
	extra[key] = v
	p.Extra = extra
	return p
}

// marshal encodes without HTML escaping (<, >, & stay readable).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Carrier is an error that knows its problem document.
type Carrier interface {
	error
	Problem() Problem
}

// Error is an error answered with a given problem document. Err, when set,
// is the cause: it is logged, never shown to clients.
type Error struct {
	Status int
	Type   string
	Title  string
	Detail string
	Extra  map[string]any
	Err    error
}

// New returns an error with the given status, type, title and detail.
func New(status int, typ, title, detail string) *Error {
	return &Error{Status: status, Type: typ, Title: title, Detail: detail}
}

// Error returns the detail (or the title) and the cause, if any.
func (e *Error) Error() string {
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	if msg == "" {
		msg = strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Problem returns the document (a server error without a detail gets a
// generic one).
func (e *Error) Problem() Problem {
	p := Problem{Type: e.Type, Title: e.Title, Status: e.Status, Detail: e.Detail, Extra: e.Extra}
	if p.Status >= 500 && p.Detail == "" {
		p.Detail = "the server could not complete the request"
	}
	return p
}

// NoSpace reports whether err's chain holds a file system's "no space left
// on device" (ENOSPC) or "disk quota exceeded" (EDQUOT): a write the disk
// cannot hold, however many layers wrapped it.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// InsufficientStorage is the 507 error of a write the disk cannot hold: typ
// is the area's insufficient-storage type, op names the operation ("blob
// upload") and the detail is op and the reason ("blob upload: no space left
// on device"). cause is logged, never shown.
func InsufficientStorage(typ, op string, cause error) *Error {
	reason := "no space left on device"
	if errors.Is(cause, syscall.EDQUOT) {
		reason = "disk quota exceeded"
	}
	return &Error{Status: http.StatusInsufficientStorage, Type: typ, Title: "Insufficient Storage.",
		Detail: op + ": " + reason, Err: cause}
}

// insufficientType is the insufficient-storage type of the area of a
// problem type.
func insufficientType(typ string) string {
	switch {
	case strings.HasPrefix(typ, ObjectBase+"/"):
		return ObjectInsufficientStorage
	case strings.HasPrefix(typ, FileBase+"/"):
		return FileInsufficientStorage
	case strings.HasPrefix(typ, ComputeBase+"/"):
		return ComputeInsufficientStorage
	}
	return ObjectInsufficientStorage
}

// Internal is the document of a fault of the worker itself.
func Internal() Problem {
	return Problem{Type: ObjectInternal, Title: "An Error Occurred.", Status: http.StatusInternalServerError,
		Detail: "the server could not complete the request"}
}

// From returns the document of err: 413 for a body over
// http.MaxBytesReader's limit (whatever wraps it), else the first Carrier in
// its chain, else Internal (the cause is not shown). A server error whose
// chain holds a full disk (NoSpace) is 507 insufficient-storage instead of
// 500 or 502: the write paths name their operation (InsufficientStorage);
// this catches a path that did not.
func From(err error) Problem {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Problem{Type: PayloadTooLarge, Title: "Payload Too Large.", Status: http.StatusRequestEntityTooLarge,
			Detail: "the request body exceeds the limit of " + strconv.FormatInt(mbe.Limit, 10) + " bytes"}
	}
	var c Carrier
	if errors.As(err, &c) {
		p := c.Problem()
		if p.Status >= 500 && p.Status != http.StatusInsufficientStorage && NoSpace(err) {
			return InsufficientStorage(insufficientType(p.Type), "writing data", err).Problem()
		}
		return p
	}
	if NoSpace(err) {
		return InsufficientStorage(ObjectInsufficientStorage, "writing data", err).Problem()
	}
	return Internal()
}

// StatusOf is the HTTP status From gives err.
func StatusOf(err error) int { return From(err).Status }

// Write answers p as application/problem+json with the status p.Status
// (<, > and & left readable).
// Headers describing a body that is not sent (Content-Length, ETag,
// Content-Disposition, Last-Modified) are removed.
func Write(w http.ResponseWriter, p Problem) {
	data, err := marshal(p)
	if err != nil || p.Status < 400 || p.Status > 599 {
		p = Internal()
		data, _ = marshal(p)
	}
	h := w.Header()
	for _, k := range []string{"Content-Length", "ETag", "Content-Disposition", "Last-Modified"} {
		h.Del(k)
	}
	h.Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	w.Write(append(data, '\n'))
}

// InvalidParam names one invalid request member and why: an item of the
// problem-details `invalid-params` extension member of a 422.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// InvalidParamsDetail lists invalid members as the detail of a 422:
// "invalid parameters: a: why; b: why".
func InvalidParamsDetail(params []InvalidParam) string {
	var b strings.Builder
	b.WriteString("invalid parameters: ")
	for i, p := range params {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Name, p.Reason)
	}
	return b.String()
}

// Invalid is the 422 document of the problem type typ listing params under
// invalid-params.
func Invalid(typ string, params []InvalidParam) Problem {
	return Problem{Type: typ, Title: "Validation Error.", Status: http.StatusUnprocessableEntity,
		Detail: InvalidParamsDetail(params), Extra: map[string]any{"invalid-params": params}}
}
