package tasks

import (
	"fmt"
	"strings"
)

// InvalidParam names one invalid request field and why, as in the
// problem-details `invalid-params` member.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ValidationError is a request that failed validation: every invalid field
// with its reason. The HTTP layer answers it with 422.
type ValidationError struct {
	Params []InvalidParam
}

// Error lists the invalid fields.
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
