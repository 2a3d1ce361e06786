package identity

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/geostat-engine/geostat/worker/problem"
)

// Kind classifies the errors of the package for the route layer.
type Kind int

// Kinds of error.
const (
	// KindNotFound: no such workspace, user, token or invitation.
	KindNotFound Kind = iota + 1
	// KindGone: the workspace is soft-deleted.
	KindGone
	// KindNameConflict: another workspace of the organisation has the name.
	KindNameConflict
	// KindLastOwner: the change would leave a workspace without an owner.
	KindLastOwner
	// KindValidation: bad input, with one InvalidParam per bad field.
	KindValidation
	// KindActive: restore of a workspace that is not deleted (303 to it).
	KindActive
	// KindUserExists: an instance user of the organisation has the email.
	KindUserExists
	// KindInvalidToken: the token is unknown, revoked or expired.
	KindInvalidToken
	// KindReadOnly: a static principal cannot be changed through the store.
	KindReadOnly
)

// Sentinel errors, one per Kind, for errors.Is (an *Error matches the
// sentinel of its Kind whatever its detail).
var (
	ErrNotFound     = &Error{Kind: KindNotFound}
	ErrGone         = &Error{Kind: KindGone}
	ErrNameConflict = &Error{Kind: KindNameConflict}
	ErrLastOwner    = &Error{Kind: KindLastOwner}
	ErrValidation   = &Error{Kind: KindValidation}
	ErrActive       = &Error{Kind: KindActive}
	ErrUserExists   = &Error{Kind: KindUserExists}
	ErrInvalidToken = &Error{Kind: KindInvalidToken}
	ErrReadOnly     = &Error{Kind: KindReadOnly}
)

// InvalidParam names a bad input field and why (a problem document's
// invalid-params member).
type InvalidParam = problem.InvalidParam

// Error is an error of the identity store the route layer maps to a
// problem document: Kind.ProblemType and Kind.Status.
type Error struct {
	Kind   Kind
	Detail string
	// Params lists the bad fields of a KindValidation error.
	Params []InvalidParam
}

// Error implements error.
func (e *Error) Error() string {
	msg := "identity: " + e.Kind.title()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	for _, p := range e.Params {
		msg += fmt.Sprintf("; %s: %s", p.Name, p.Reason)
	}
	return msg
}

// Is reports whether target is the sentinel of e's Kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Detail == "" && t.Params == nil
}

func (k Kind) title() string {
	switch k {
	case KindNotFound:
		return "not found"
	case KindGone:
		return "workspace deleted"
	case KindNameConflict:
		return "workspace name taken"
	case KindLastOwner:
		return "last owner"
	case KindValidation:
		return "invalid input"
	case KindActive:
		return "workspace not deleted"
	case KindUserExists:
		return "user exists"
	case KindInvalidToken:
		return "invalid token"
	case KindReadOnly:
		return "read-only principal"
	}
	return "error"
}

// ProblemType is the path suffix of the kind's problem type under the
// worker's error base (e.g. "workspace-service/last-owner").
func (k Kind) ProblemType() string {
	switch k {
	case KindNotFound:
		return "workspace-service/workspace-not-found"
	case KindGone:
		return "workspace-service/gone"
	case KindNameConflict:
		return "workspace-service/name-conflict"
	case KindLastOwner:
		return "workspace-service/last-owner"
	case KindValidation, KindReadOnly:
		return "workspace-service/validation"
	case KindActive:
		return "workspace-service/not-deleted"
	case KindUserExists:
		return "workspace-service/user-exists"
	case KindInvalidToken:
		return "workspace-service/auth/invalid-token"
	}
	return "workspace-service/internal"
}

// Status is the kind's HTTP status.
func (k Kind) Status() int {
	switch k {
	case KindNotFound:
		return http.StatusNotFound
	case KindGone:
		return http.StatusGone
	case KindNameConflict, KindLastOwner, KindUserExists:
		return http.StatusConflict
	case KindValidation, KindReadOnly:
		return http.StatusUnprocessableEntity
	case KindActive:
		return http.StatusSeeOther
	case KindInvalidToken:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

func errorf(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, Detail: fmt.Sprintf(format, a...)}
}

// params collects the bad fields of one input.
type params []InvalidParam

func (p *params) add(name, format string, a ...any) {
	*p = append(*p, InvalidParam{Name: name, Reason: fmt.Sprintf(format, a...)})
}

func (p params) err() error {
	if len(p) == 0 {
		return nil
	}
	names := make([]string, len(p))
	for i, q := range p {
		names[i] = q.Name
	}
	return &Error{Kind: KindValidation, Detail: "bad " + strings.Join(names, ", "), Params: p}
}
