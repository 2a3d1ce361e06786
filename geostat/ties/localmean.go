package ties

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
)

// chunk is the number of local means a goroutine computes between looks at
// the context and progress reports.
const chunk = 1024

// search is the neighbour index of the local means.
type search struct {
	ix *neighbor.Index
	// cv are the values in canonical (original-index) order; rank maps a
	// position to its canonical index (nil: the identity).
	cv   []float64
	rank []int32
}

// buildSearch builds the neighbour index over the data in original-index
// order, so that the search's tie-break on equal distances (the source
// index) follows the original indices: the neighbour sets and the order of
// summation then do not depend on how the input was permuted.
func buildSearch(values, coords []float64, p *neighbor.Params, opts *Options) (*search, error) {
	n := len(values)
	cv, cc, ch := values, coords, opts.Holes
	var rank []int32
	if opts.OriginalIndex != nil {
		// canon[k] is the position of the datum of canonical index k; rank
		// is its inverse.
		canon := make([]int32, n)
		for i := range canon {
			canon[i] = int32(i)
		}
		slices.SortFunc(canon, func(a, b int32) int {
			return cmp.Compare(opts.OriginalIndex[a], opts.OriginalIndex[b])
		})
		rank = make([]int32, n)
		cv = make([]float64, n)
		cc = make([]float64, 3*n)
		if p.MaxPerHole > 0 {
			ch = make([]int32, n)
		}
		for k, pos := range canon {
			rank[pos] = int32(k)
			cv[k] = values[pos]
			copy(cc[3*k:3*k+3], coords[3*pos:3*pos+3])
			if ch != nil {
				ch[k] = opts.Holes[pos]
			}
		}
	}
	if p.MaxPerHole == 0 {
		ch = nil
	}
	// One more sample than asked, as the datum finds itself; the minimum is
	// applied after excluding it.
	q := *p
	q.MaxSamples++
	q.MinSamples = 0
	ix, err := neighbor.NewIndex(cc, cv, ch, q)
	if err != nil {
		return nil, fmt.Errorf("ties: neighbourhood: %w", err)
	}
	return &search{ix: ix, cv: cv, rank: rank}, nil
}

// localMeans writes into means[pos] the local mean of the datum at each
// position pos of members: the mean of the original values of its
// up-to-MaxSamples nearest other data inside the search ellipsoid, or its
// own value when fewer than max(1, MinSamples) are found.
func localMeans(ctx context.Context, sr *search, values, coords []float64, p *neighbor.Params, opts *Options, members []int32, means []float64) error {
	ix, cv, rank := sr.ix, sr.cv, sr.rank
	need := max(1, p.MinSamples)

	workers := min(geostat.Workers(ctx), (len(members)+chunk-1)/chunk)
	var next atomic.Int64
	var done int // guarded by mu
	var mu sync.Mutex
	var wg sync.WaitGroup
	var panics geostat.Panics
	var stopped atomic.Bool
	total := len(members)
	for range workers {
		wg.Go(func() {
			defer panics.Recover(func() { stopped.Store(true) })
			s := ix.NewSearcher()
			for ctx.Err() == nil && !stopped.Load() {
				lo := int(next.Add(chunk)) - chunk
				if lo >= total {
					return
				}
				hi := min(lo+chunk, total)
				for t := lo; t < hi; t++ {
					pos := members[t]
					self := pos
					if rank != nil {
						self = rank[pos]
					}
					idx, _ := s.Search(coords[3*pos], coords[3*pos+1], coords[3*pos+2])
					sum, cnt := 0.0, 0
					for _, j := range idx {
						if j == self {
							continue
						}
						if cnt == p.MaxSamples {
							break
						}
						sum += cv[j]
						cnt++
					}
					if cnt < need {
						means[pos] = values[pos]
					} else {
						means[pos] = sum / float64(cnt)
					}
				}
				if opts.Progress != nil {
					func() {
						mu.Lock()
						defer mu.Unlock() // also when Progress panics
						done += hi - lo
						opts.Progress(done, total)
					}()
				}
			}
		})
	}
	wg.Wait()
	if err := panics.Err(); err != nil {
		return fmt.Errorf("ties: local means: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ties: local means: %w", err)
	}
	return nil
}
