package harness

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressScale is the number of bar units per run.
const progressScale = 1000

// Progress draws one progress bar per scenario over its warm-up and timed
// runs. The library's progress callback only stores an atomic position; a
// separate goroutine redraws the bar a few times per second, so the timed
// code pays one atomic store per callback. A nil *Progress draws nothing
// and hands nil callbacks to the libraries.
type Progress struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	pos  atomic.Int64
	stop chan struct{}
	done chan struct{}
}

// NewProgress returns a progress display on w (a terminal).
func NewProgress(w io.Writer) *Progress { return &Progress{w: w} }

func (p *Progress) begin(name string, runs int) {
	if p == nil {
		return
	}
	p.pos.Store(0)
	p.bar = progressbar.NewOptions64(int64(runs*progressScale),
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.draw(p.bar, p.stop, p.done)
}

func (p *Progress) draw(bar *progressbar.ProgressBar, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = bar.Set64(p.pos.Load())
		}
	}
}

// run announces run i (0 = warm-up) and returns the callback for its
// library calls.
func (p *Progress) run(i, runs int, name string) func(done, total int) {
	if p == nil {
		return nil
	}
	base := int64(i) * progressScale
	p.pos.Store(base)
	if i == 0 {
		p.bar.Describe(name + " warm-up")
	} else {
		p.bar.Describe(fmt.Sprintf("%s run %d/%d", name, i, runs-1))
	}
	return func(done, total int) {
		if total > 0 {
			p.pos.Store(base + int64(done)*progressScale/int64(total))
		}
	}
}

func (p *Progress) end() {
	if p == nil || p.bar == nil {
		return
	}
	close(p.stop)
	<-p.done
	_ = p.bar.Finish()
	p.bar = nil
}
