package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/worker/problem"
)

// admissionWait bounds how long a request that cannot be admitted at once
// waits for a slot (within its own context) before it is answered 429 or
// 503.
const admissionWait = 500 * time.Millisecond

// limiter admits requests fairly: the pool of in-flight requests (the
// global limit G, Options.MaxConcurrent) is shared among the callers that
// have requests in flight. With n such callers (counting the one asking),
// a caller's share is min(perPrincipal, max(1, G/n)); a caller at or over
// its share waits briefly and then gets 429, so busy callers cannot starve
// the others.
//
// A caller under its share is admitted while the total in flight is below
// G plus the debt, the slots the other callers hold beyond their shares
// (a share shrinks when a caller arrives; the requests already admitted
// keep their slots and the debt drains as they finish, for a caller over
// its share acquires nothing). While there are no more callers than slots
// (n <= G), the holdings within the shares add up to at most n*s-1 <= G-1
// when the asker is under its share s, so the total is below G plus the
// debt: a caller under its share is never refused because others are
// busy. A hard ceiling, G plus a quarter of G, still bounds the
// total; it is reached only when the debt exceeds that quarter (many
// callers arriving faster than the busy ones' requests finish, each
// shrinking the shares); then a caller under its share waits briefly for a
// slot and gets 503 if none frees.
type limiter struct {
	global       int // G: the pool shared fairly
	ceiling      int // hard bound of the total in flight
	perPrincipal int
	wait         time.Duration

	mu       sync.Mutex
	total    int
	inFlight map[string]int
	wake     chan struct{} // closed on a release when requests wait; nil otherwise
}

func newLimiter(global, perPrincipal int) *limiter {
	return &limiter{global: global, ceiling: global + max(1, global/4), perPrincipal: perPrincipal,
		wait: admissionWait, inFlight: map[string]int{}}
}

// callerKey tells callers apart without authenticating them: the digest of
// the Authorization header, else the remote address's host.
func callerKey(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		d := sha256.Sum256([]byte(h))
		return "token:" + hex.EncodeToString(d[:16])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}

// verdict is why a request cannot be admitted now (admitted when it can).
type verdict int

const (
	admitted  verdict = iota
	overOwn           // the caller holds perPrincipal slots
	overShare         // the caller holds its fair share of the pool
	full              // the total is at its bound
)

// share returns the fair share of a caller when n callers have requests in
// flight, itself included.
func (l *limiter) share(n int) int {
	return min(l.perPrincipal, max(1, l.global/n))
}

// admitLocked decides on one more request of key; l.mu is held.
func (l *limiter) admitLocked(key string) verdict {
	held := l.inFlight[key]
	if held >= l.perPrincipal {
		return overOwn
	}
	n := len(l.inFlight)
	if held == 0 {
		n++
	}
	s := l.share(n)
	if held >= s {
		return overShare
	}
	debt := 0
	for k, h := range l.inFlight {
		if k != key && h > s {
			debt += h - s
		}
	}
	if l.total >= min(l.global+debt, l.ceiling) {
		return full
	}
	return admitted
}

// acquire admits a request of the caller key, waiting up to l.wait (and no
// longer than ctx) when it cannot be admitted at once. It returns the
// release function (idempotent) or the problem to answer: 429 for a caller
// over its own limit or its share, 503 when the total is at its bound.
func (l *limiter) acquire(ctx context.Context, key string) (func(), *problem.Problem) {
	var timer *time.Timer
	for {
		l.mu.Lock()
		v := l.admitLocked(key)
		if v == admitted {
			l.inFlight[key]++
			l.total++
			l.mu.Unlock()
			return l.releaser(key), nil
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		wake, held, n := l.wake, l.inFlight[key], len(l.inFlight)
		l.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(l.wait)
			defer timer.Stop()
		}
		select {
		case <-wake:
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		return nil, l.refusal(v, held, n)
	}
}

// refusal is the problem answering a request refused with v; held is what
// the caller holds and n the number of callers with requests in flight.
func (l *limiter) refusal(v verdict, held, n int) *problem.Problem {
	tooMany := func(detail string) *problem.Problem {
		return &problem.Problem{Type: problem.TooManyRequests, Title: "Too Many Requests.", Status: http.StatusTooManyRequests, Detail: detail}
	}
	switch v {
	case overOwn:
		return tooMany(fmt.Sprintf("this caller already has %d requests in flight, its limit; retry later", l.perPrincipal))
	case overShare:
		return tooMany(fmt.Sprintf("this caller has %d requests in flight, its fair share of the %d slots while %d callers are busy; retry later",
			held, l.global, n))
	default:
		return &problem.Problem{Type: problem.Unavailable, Title: "Service Unavailable.", Status: http.StatusServiceUnavailable,
			Detail: "too many requests in flight; retry later"}
	}
}

// releaser returns the idempotent function giving back one slot of key and
// waking the requests that wait.
func (l *limiter) releaser(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.inFlight[key]--; l.inFlight[key] <= 0 {
				delete(l.inFlight, key)
			}
			l.total--
			if l.wake != nil {
				close(l.wake)
				l.wake = nil
			}
			l.mu.Unlock()
		})
	}
}
