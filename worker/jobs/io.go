package jobs

import (
	"context"
	"sync"
	"time"
)

// storeIO runs the Manager's writes to its store and queue, one at a time
// and in the order they were asked for, on its own goroutine: the
// Manager's lock is never held across a store call, so that status reads,
// cancels, progress reports and metrics never wait on the store (a paused
// NATS server, say). Each call gets a context with ioTimeout; what a call
// learns (a claim's outcome, a record taken over by another worker) is
// applied afterwards under the lock by the call itself, checked against
// the job's current state.
//
// One goroutine keeps the writes of a job in order (a "cancelling" saved
// before the job's final record can never overwrite it), and it lets the
// worker catch up by itself when the store comes back: the calls wait in
// the queue meanwhile.
type storeIO struct {
	mu      sync.Mutex
	items   []func(context.Context)
	wake    chan struct{}
	idle    *sync.Cond // signalled when the queue empties and nothing runs
	busy    bool
	stopped bool
	done    chan struct{}
}

// ioTimeout bounds each store call of the Manager.
const ioTimeout = 30 * time.Second

func newStoreIO() *storeIO {
	s := &storeIO{wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.idle = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// do queues f; it runs after every call queued before it.
func (s *storeIO) do(f func(context.Context)) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		// After stop (the Manager has shut down; a run left behind ends):
		// run it on its own goroutine, so that nothing asked for is lost
		// and a caller holding the Manager's lock is not made to wait
		// (f may take that lock).
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			defer cancel()
			f(ctx)
		}()
		return
	}
	s.items = append(s.items, f)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// wait queues f and waits until it has run or ctx ends; it reports whether
// f ran (it still runs later when ctx ended first, unless f checks for
// that itself).
func (s *storeIO) wait(ctx context.Context, f func(context.Context)) bool {
	ran := make(chan struct{})
	s.do(func(c context.Context) {
		defer close(ran)
		f(c)
	})
	select {
	case <-ran:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *storeIO) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.items) == 0 {
			s.busy = false
			s.idle.Broadcast()
			if s.stopped {
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		f := s.items[0]
		s.items[0] = nil
		s.items = s.items[1:]
		s.busy = true
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		f(ctx)
		cancel()
	}
}

// drain waits until every queued call has run, or until d has passed; it
// reports whether the queue emptied.
func (s *storeIO) drain(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.mu.Lock()
		for len(s.items) > 0 || s.busy {
			s.idle.Wait()
		}
		s.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// stop ends the goroutine once the queue is empty; later calls of do run
// each on a goroutine of its own.
func (s *storeIO) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
