package neighbor

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// Searches served by local candidate lists equal those of the tree walk
// exactly (Search: indices and distances in order; SearchSet: the same
// pairs), on sources with many exact distance ties (a lattice) and on drill
// holes, for targets along grid rows, backwards and across them (lists
// centred ahead of the wrong way; with steps this long lists often do not
// pay and pause), along fine rows (lists serve most targets), and in random
// order (mostly bounds at the search radius, where no list is built; lists
// paused when targets jump between data).
func TestLocalListsMatchTreeWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	lattice := tieLattice()
	holes, holeIDs := drillholes(rng, 60, 40)
	g, err := grid.New([3]float64{-200, -200, -50}, [3]int{60, 30, 6}, [3]float64{25, 50, 50}, geostat.Rotation{})
	require.NoError(t, err)
	rows := g.CellCentres(nil)
	n := len(rows) / 3
	backwards := make([]float64, 0, len(rows))
	for q := n - 1; q >= 0; q-- {
		backwards = append(backwards, rows[3*q:3*q+3]...)
	}
	across := make([]float64, 0, len(rows)) // y fastest
	for q := 0; q < n; q++ {
		i, j, l := q/(30*6), q/6%30, q%6
		c := (l*30+j)*60 + i
		across = append(across, rows[3*c:3*c+3]...)
	}
	// Fine rows: steps short against the neighbourhood, where lists pay.
	gf, err := grid.New([3]float64{100, 100, 20}, [3]int{80, 6, 3}, [3]float64{5, 10, 10}, geostat.Rotation{})
	require.NoError(t, err)
	fine := gf.CellCentres(nil)
	shuffled := slices.Clone(rows)
	for i, p := range rng.Perm(n) {
		copy(shuffled[3*i:3*i+3], rows[3*p:3*p+3])
	}
	for _, src := range []struct {
		name   string
		coords []float64
		holes  []int32
	}{{"lattice", lattice, nil}, {"drillholes", holes, holeIDs}} {
		pauses := 0
		for _, k := range []int{1, 8, 32, 40} {
			ix, err := NewIndex(src.coords, nil, src.holes, Params{Ellipsoid: ellipsoid(300, 200, 50, testRotations[1]), MaxSamples: k})
			require.NoError(t, err)
			for _, order := range []struct {
				name    string
				targets []float64
			}{{"rows", rows}, {"backwards", backwards}, {"across", across}, {"fine", fine}, {"shuffled", shuffled}} {
				local, walk := ix.NewSearcher(), ix.NewSearcher()
				localSet, walkSet := ix.NewSearcher(), ix.NewSearcher()
				walk.noLocal, walkSet.noLocal = true, true
				for q := 0; q < len(order.targets)/3; q++ {
					x, y, z := order.targets[3*q], order.targets[3*q+1], order.targets[3*q+2]
					a, da := local.Search(x, y, z)
					b, db := walk.Search(x, y, z)
					require.Equal(t, b, a, "%s k=%d %s target %d", src.name, k, order.name, q)
					require.Equal(t, db, da, "%s k=%d %s target %d", src.name, k, order.name, q)
					c, dc := localSet.SearchSet(x, y, z)
					d, dd := walkSet.SearchSet(x, y, z)
					require.Equal(t, byIndex(d, dd), byIndex(c, dc), "%s k=%d %s target %d", src.name, k, order.name, q)
				}
				served, paused := localSet.local.served, localSet.local.paused
				nq := len(order.targets) / 3
				t.Logf("%s k=%d %s: %d targets served by lists, %d searched in pauses, of %d", src.name, k, order.name, served, paused, nq)
				assert.Zero(t, walkSet.local.served+walk.local.served)
				switch {
				case order.name == "fine" && k == 8:
					assert.Greater(t, served, nq/2, "%s k=%d: lists serve most targets of fine rows", src.name, k)
				case order.name == "shuffled":
					assert.Less(t, served, nq/50, "%s k=%d: random targets are searched by the walk", src.name, k)
				}
				pauses += paused
			}
		}
		if src.name == "drillholes" {
			assert.Positive(t, pauses, "targets that jump search without lists for a while")
		}
	}
}
