package geostat

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// PanicError is a panic recovered in a goroutine of a parallel computation
// (ForChunks and the other worker pools of the library): the computation
// returns it as its error instead of crashing the process. A panic is a
// bug, never a user error; the worker fails the job with a 500 and logs the
// stack, which the error's message leaves out.
type PanicError struct {
	// Value is the value the goroutine panicked with.
	Value any
	// Stack is the goroutine's stack at the panic (runtime/debug.Stack).
	Stack []byte
}

// NewPanicError returns the error of a recovered panic value v, with the
// stack of the calling goroutine: call it from the deferred function that
// recovered v, where the stack still shows where the panic happened. A v
// that is already a *PanicError (a panic handed on from another goroutine)
// is returned as it is, with its own stack.
func NewPanicError(v any) *PanicError {
	if pe, ok := v.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// Error says that the computation panicked and with what value, without
// the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error: panic: %v", e.Value)
}

// Unwrap returns the panic value when it is an error (a runtime error such
// as an index out of range), else nil.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Panics keeps the first panic of a group of goroutines. The zero value is
// ready to use; it is safe for concurrent use.
type Panics struct {
	mu  sync.Mutex
	err *PanicError
}

// Recover, deferred at the top of a goroutine (defer p.Recover(stop)),
// recovers a panic of the goroutine, keeps it when it is the group's first
// and then calls stop (when not nil) so that the other goroutines of the
// group wind down.
func (p *Panics) Recover(stop func()) {
	v := recover()
	if v == nil {
		return
	}
	pe := NewPanicError(v)
	p.mu.Lock()
	if p.err == nil {
		p.err = pe
	}
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Err returns the first panic recovered (a *PanicError), or nil.
func (p *Panics) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return nil
	}
	return p.err
}

// Catch runs f and returns its error, or a *PanicError when f panics: for
// the body of a goroutine that must hand its failure on rather than crash
// the process.
func Catch(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = NewPanicError(v)
		}
	}()
	return f()
}
