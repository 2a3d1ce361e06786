package blockmodel

import (
	"fmt"
	"strings"
)

// InvalidParam names one invalid request member and why, in the shape of
// the problem-details `invalid-params` member.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ValidationError is input that failed validation: every invalid member with
// its reason. The route layer answers it with a 422 whose invalid-params
// lists Params.
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

// params accumulates invalid members while input is checked.
type params struct{ list []InvalidParam }

func (p *params) add(name, format string, args ...any) {
	p.list = append(p.list, InvalidParam{Name: name, Reason: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was added, else a *ValidationError.
func (p *params) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Params: p.list}
}
