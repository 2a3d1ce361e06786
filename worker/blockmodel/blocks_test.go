package blockmodel

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newRand returns a deterministic random source for the tests.
func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

type cuboid struct{ s, e [3]uint8 }

// randomTiling splits the box s–e of a parent's sub-cell grid at random:
// flexible cuts anywhere, octree halves, fully-sub-blocked whole or unit.
func randomTiling(rng *rand.Rand, kind ModelType, s, e [3]uint8, depth int) []cuboid {
	switch kind {
	case FullySubBlocked:
		if rng.IntN(2) == 0 {
			return []cuboid{{s, e}}
		}
		var out []cuboid
		for z := s[2]; z < e[2]; z++ {
			for y := s[1]; y < e[1]; y++ {
				for x := s[0]; x < e[0]; x++ {
					out = append(out, cuboid{[3]uint8{x, y, z}, [3]uint8{x + 1, y + 1, z + 1}})
				}
			}
		}
		return out
	case Flexible:
		a := rng.IntN(3)
		if depth > 3 || e[a]-s[a] < 2 || rng.IntN(3) == 0 {
			return []cuboid{{s, e}}
		}
		cut := s[a] + 1 + uint8(rng.IntN(int(e[a]-s[a]-1)))
		e1, s2 := e, s
		e1[a], s2[a] = cut, cut
		return append(randomTiling(rng, kind, s, e1, depth+1), randomTiling(rng, kind, s2, e, depth+1)...)
	default: // octree
		if depth > 3 || rng.IntN(3) == 0 {
			return []cuboid{{s, e}}
		}
		var halves [3][]([2]uint8)
		for a := 0; a < 3; a++ {
			w := e[a] - s[a]
			if w >= 2 && rng.IntN(2) == 0 {
				halves[a] = [][2]uint8{{s[a], s[a] + w/2}, {s[a] + w/2, e[a]}}
			} else {
				halves[a] = [][2]uint8{{s[a], e[a]}}
			}
		}
		var out []cuboid
		for _, hx := range halves[0] {
			for _, hy := range halves[1] {
				for _, hz := range halves[2] {
					out = append(out, randomTiling(rng, kind, [3]uint8{hx[0], hy[0], hz[0]}, [3]uint8{hx[1], hy[1], hz[1]}, depth+1)...)
				}
			}
		}
		return out
	}
}

// randomBlocks builds a valid random sub-block set, shuffled then put in
// canonical order with CanonicalPermutation.
func randomBlocks(t *testing.T, rng *rand.Rand, g *Geometry) *Blocks {
	t.Helper()
	var parent []uint32
	var start, end []uint8
	ws, we := g.WholeCorners()
	for p := int64(0); p < g.NumParents(); p++ {
		for _, c := range randomTiling(rng, g.kind, ws, we, 0) {
			parent = append(parent, uint32(p))
			start = append(start, c.s[:]...)
			end = append(end, c.e[:]...)
		}
	}
	n := len(parent)
	rng.Shuffle(n, func(a, b int) {
		parent[a], parent[b] = parent[b], parent[a]
		for x := 0; x < 3; x++ {
			start[3*a+x], start[3*b+x] = start[3*b+x], start[3*a+x]
			end[3*a+x], end[3*b+x] = end[3*b+x], end[3*a+x]
		}
	})
	perm := CanonicalPermutation(g, parent, start)
	p2, s2, e2 := make([]uint32, n), make([]uint8, 3*n), make([]uint8, 3*n)
	for r, from := range perm {
		p2[r] = parent[from]
		copy(s2[3*r:3*r+3], start[3*from:3*from+3])
		copy(e2[3*r:3*r+3], end[3*from:3*from+3])
	}
	b, err := NewBlocks(g, p2, s2, e2)
	require.NoError(t, err)
	return b
}

// LocateNear gives Locate's result whatever its hint: every identity of
// rows and parents (by sidx and by corners, every corner pair), hints on
// the row itself, its neighbours, other rows and off the model, on random
// sub-block sets of each kind and a whole one.
func TestLocateNearEqualsLocate(t *testing.T) {
	rng := newRand()
	sizes := map[ModelType]Size3D{FullySubBlocked: {2, 3, 2}, Flexible: {3, 2, 4}, VariableOctree: {4, 2, 1}}
	for _, kind := range []ModelType{FullySubBlocked, Flexible, VariableOctree} {
		g := mustGeometry(t, XYZ{500, -20, 7}, rot("z", 20, "y", 35), SubBlockedSize(kind, Size3D{3, 2, 2}, sizes[kind], XYZ{6, 4, 2.5}))
		for trial := 0; trial < 3; trial++ {
			b := randomBlocks(t, rng, g)
			if trial == 2 {
				b = g.WholeBlocks()
			}
			ns := g.Subblocks()
			var subs []SubID
			for sidx := uint32(0); sidx <= uint32(g.SubCells()); sidx++ {
				subs = append(subs, SidxID(sidx))
			}
			for sx := 0; sx < ns[0]; sx++ {
				for ex := sx + 1; ex <= ns[0]+1; ex++ {
					for sy := 0; sy < ns[1]; sy++ {
						for ey := sy + 1; ey <= ns[1]; ey++ {
							for sz := 0; sz < ns[2]; sz++ {
								for ez := sz + 1; ez <= ns[2]; ez++ {
									subs = append(subs, CornersID([3]uint8{uint8(sx), uint8(sy), uint8(sz)}, [3]uint8{uint8(ex), uint8(ey), uint8(ez)}))
								}
							}
						}
					}
				}
			}
			for p := int64(-1); p <= g.NumParents(); p++ {
				i, j, k := uint32(1<<31), uint32(0), uint32(0)
				if p >= 0 && p < g.NumParents() {
					i, j, k = g.ParentIJK(p)
				}
				for _, sub := range subs {
					want, wok := b.Locate(i, j, k, sub)
					for _, hint := range []int64{-1, 0, want - 1, want, want + 1, rng.Int64N(b.NumRows()), b.NumRows() - 1, b.NumRows()} {
						got, ok := b.LocateNear(hint, i, j, k, sub)
						require.Equal(t, wok, ok, "parent %d %+v hint %d", p, sub, hint)
						if wok {
							require.Equal(t, want, got, "parent %d %+v hint %d", p, sub, hint)
						}
					}
				}
			}
		}
	}
}

// Locate and LocateXYZ agree with a linear search over every possible
// identity, on random sub-block sets of each kind.
func TestLocateBruteForce(t *testing.T) {
	rng := newRand()
	sizes := map[ModelType]Size3D{FullySubBlocked: {2, 3, 2}, Flexible: {3, 2, 4}, VariableOctree: {4, 2, 1}}
	for _, kind := range []ModelType{FullySubBlocked, Flexible, VariableOctree} {
		g := mustGeometry(t, XYZ{500, -20, 7}, rot("z", 20, "y", 35), SubBlockedSize(kind, Size3D{3, 2, 2}, sizes[kind], XYZ{6, 4, 2.5}))
		for trial := 0; trial < 5; trial++ {
			b := randomBlocks(t, rng, g)
			type id struct {
				p    int64
				s, e [3]uint8
			}
			rows := map[id]int64{}
			bySidx := map[[2]int64]int64{}
			for r := int64(0); r < b.NumRows(); r++ {
				s, e := b.Corners(r)
				rows[id{b.Parent(r), s, e}] = r
				bySidx[[2]int64{b.Parent(r), int64(g.Sidx(s))}] = r
				if r > 0 {
					ps, _ := b.Corners(r - 1)
					require.Less(t, b.Parent(r-1)*1000+int64(g.Sidx(ps)), b.Parent(r)*1000+int64(g.Sidx(s)), "canonical order")
				}
			}
			ns := g.Subblocks()
			for p := int64(-1); p <= g.NumParents(); p++ {
				i, j, k := uint32(1<<31), uint32(0), uint32(0)
				if p >= 0 && p < g.NumParents() {
					i, j, k = g.ParentIJK(p)
				}
				for sidx := uint32(0); sidx < uint32(g.SubCells()); sidx++ {
					want, ok := bySidx[[2]int64{p, int64(sidx)}]
					got, gok := b.Locate(i, j, k, SidxID(sidx))
					require.Equal(t, ok, gok, "parent %d sidx %d", p, sidx)
					if ok {
						require.Equal(t, want, got)
					}
				}
				for sx := 0; sx < ns[0]; sx++ {
					for ex := sx + 1; ex <= ns[0]; ex++ {
						for sy := 0; sy < ns[1]; sy++ {
							for ey := sy + 1; ey <= ns[1]; ey++ {
								for sz := 0; sz < ns[2]; sz++ {
									for ez := sz + 1; ez <= ns[2]; ez++ {
										s := [3]uint8{uint8(sx), uint8(sy), uint8(sz)}
										e := [3]uint8{uint8(ex), uint8(ey), uint8(ez)}
										want, ok := rows[id{p, s, e}]
										got, gok := b.Locate(i, j, k, CornersID(s, e))
										require.Equal(t, ok, gok, "parent %d %v → %v", p, s, e)
										if !ok || i == 1<<31 {
											continue
										}
										require.Equal(t, want, got)
										c := g.SubCentroid(i, j, k, s, e)
										d := g.SubExtent(s, e)
										got, ijk, gok := b.LocateXYZ(c[0], c[1], c[2], d[0], d[1], d[2])
										require.True(t, gok)
										require.Equal(t, want, got)
										require.Equal(t, [3]uint32{i, j, k}, ijk)
									}
								}
							}
						}
					}
				}
			}
			// Every row's identity, centroid and extent lead back to it.
			for r := int64(0); r < b.NumRows(); r++ {
				i, j, k, sub := b.Identity(r)
				got, ok := b.Locate(i, j, k, sub)
				require.True(t, ok)
				require.Equal(t, r, got)
				c, d := b.Centroid(r), b.Extent(r)
				got, ijk, ok := b.LocateXYZ(c[0], c[1], c[2], d[0], d[1], d[2])
				require.True(t, ok)
				require.Equal(t, r, got)
				require.Equal(t, [3]uint32{i, j, k}, ijk)
			}
		}
	}
}

func TestLocateRegularAndWhole(t *testing.T) {
	g := mustGeometry(t, XYZ{1, 2, 3}, rot("x", 20), RegularSize(Size3D{4, 3, 2}, XYZ{1, 2, 3}))
	b := g.WholeBlocks()
	assert.Equal(t, int64(24), b.NumRows())
	for r := int64(0); r < 24; r++ {
		i, j, k, sub := b.Identity(r)
		got, ok := b.Locate(i, j, k, SubID{})
		require.True(t, ok)
		assert.Equal(t, r, got)
		got, ok = b.Locate(i, j, k, sub)
		require.True(t, ok)
		assert.Equal(t, r, got)
		_, ok = b.Locate(i, j, k, SidxID(1))
		assert.False(t, ok)
	}
	_, ok := b.Locate(4, 0, 0, SubID{})
	assert.False(t, ok)
	_, ok = b.Locate(0, 0, 2, SubID{})
	assert.False(t, ok)
	// A centroid half a block off matches nothing.
	p := g.LocalToWorld(1, 2, 1.5)
	_, _, ok = b.LocateXYZ(p[0], p[1], p[2], 0, 0, 0)
	assert.False(t, ok)

	// A sub-blocked model's initial state: one whole row per parent.
	sg := mustGeometry(t, XYZ{}, nil, SubBlockedSize(VariableOctree, Size3D{2, 2, 2}, Size3D{4, 2, 1}, XYZ{4, 2, 1}))
	w := sg.WholeBlocks()
	require.True(t, w.Whole())
	row, ok := w.Locate(1, 1, 1, CornersID([3]uint8{}, [3]uint8{4, 2, 1}))
	require.True(t, ok)
	assert.Equal(t, int64(7), row)
	_, ok = w.Locate(1, 1, 1, CornersID([3]uint8{}, [3]uint8{2, 2, 1}))
	assert.False(t, ok)
	row, ijk, ok := w.LocateXYZ(6, 3, 1.5, 4, 2, 1)
	require.True(t, ok)
	assert.Equal(t, int64(7), row)
	assert.Equal(t, [3]uint32{1, 1, 1}, ijk)
	_, _, ok = w.LocateXYZ(5, 3, 1.5, 2, 2, 1)
	assert.False(t, ok)
}

// Locate and LocateXYZ on a 10,000,000-block regular model cost O(1) and
// allocate nothing.
func TestLocateLargeRegularNoAlloc(t *testing.T) {
	g := mustGeometry(t, XYZ{1000, 2000, 300}, rot("z", 45, "x", 30), RegularSize(Size3D{500, 200, 100}, XYZ{5, 5, 2}))
	b := g.WholeBlocks()
	require.Equal(t, int64(10_000_000), b.NumRows())
	c := g.ParentCentroid(499, 199, 99)
	allocs := testing.AllocsPerRun(100, func() {
		if r, ok := b.Locate(499, 199, 99, SubID{}); !ok || r != 9_999_999 {
			t.Fatal("Locate")
		}
		if r, _, ok := b.LocateXYZ(c[0], c[1], c[2], 0, 0, 0); !ok || r != 9_999_999 {
			t.Fatal("LocateXYZ")
		}
	})
	assert.Zero(t, allocs)

	// A sub-blocked set searches in O(log n), without allocating either.
	sg := mustGeometry(t, XYZ{}, nil, SubBlockedSize(FullySubBlocked, Size3D{100, 100, 10}, Size3D{2, 2, 2}, XYZ{5, 5, 2}))
	n := int(sg.NumParents())
	parent := make([]uint32, 0, n+7)
	start := make([]uint8, 0, 3*(n+7))
	end := make([]uint8, 0, 3*(n+7))
	for p := 0; p < n; p++ {
		if p == n/2 {
			for sidx := uint32(0); sidx < 8; sidx++ {
				s := sg.SidxCell(sidx)
				parent = append(parent, uint32(p))
				start = append(start, s[:]...)
				end = append(end, s[0]+1, s[1]+1, s[2]+1)
			}
			continue
		}
		parent = append(parent, uint32(p))
		start = append(start, 0, 0, 0)
		end = append(end, 2, 2, 2)
	}
	sb, err := NewBlocks(sg, parent, start, end)
	require.NoError(t, err)
	i, j, k := sg.ParentIJK(int64(n / 2))
	allocs = testing.AllocsPerRun(100, func() {
		if r, ok := sb.Locate(i, j, k, SidxID(5)); !ok || r != int64(n/2+5) {
			t.Fatal("Locate")
		}
	})
	assert.Zero(t, allocs)
	r, ok := sb.Locate(i, j+1, k, SubID{})
	require.True(t, ok)
	assert.Equal(t, int64(n/2+8+99), r)
}

func TestNewBlocksRefuses(t *testing.T) {
	fsb := mustGeometry(t, XYZ{}, nil, SubBlockedSize(FullySubBlocked, Size3D{2, 1, 1}, Size3D{2, 1, 1}, XYZ{1, 1, 1}))
	oct := mustGeometry(t, XYZ{}, nil, SubBlockedSize(VariableOctree, Size3D{2, 1, 1}, Size3D{4, 1, 1}, XYZ{1, 1, 1}))
	flex := mustGeometry(t, XYZ{}, nil, SubBlockedSize(Flexible, Size3D{2, 1, 1}, Size3D{3, 2, 1}, XYZ{1, 1, 1}))
	reg := mustGeometry(t, XYZ{}, nil, RegularSize(Size3D{2, 1, 1}, XYZ{1, 1, 1}))
	cases := []struct {
		name   string
		g      *Geometry
		parent []uint32
		start  []uint8
		end    []uint8
		row    int64
	}{
		{"regular", reg, []uint32{0, 1}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 1, 1, 1}, 0},
		{"lengths", fsb, []uint32{0, 1}, []uint8{0, 0, 0}, []uint8{2, 1, 1, 2, 1, 1}, 0},
		{"missing parent", fsb, []uint32{0}, []uint8{0, 0, 0}, []uint8{2, 1, 1}, 1},
		{"skipped parent", fsb, []uint32{1}, []uint8{0, 0, 0}, []uint8{2, 1, 1}, 0},
		{"parent out of range", fsb, []uint32{0, 2}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{2, 1, 1, 2, 1, 1}, 1},
		{"parents out of order", fsb, []uint32{0, 1, 0}, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0}, []uint8{2, 1, 1, 2, 1, 1, 2, 1, 1}, 2},
		{"sidx out of order", fsb, []uint32{0, 0, 1}, []uint8{1, 0, 0, 0, 0, 0, 0, 0, 0}, []uint8{2, 1, 1, 1, 1, 1, 2, 1, 1}, 1},
		{"fsb half split", fsb, []uint32{0, 1}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 2, 1, 1}, 0},
		{"end beyond grid", fsb, []uint32{0, 1}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{3, 1, 1, 2, 1, 1}, 0},
		{"empty cuboid", fsb, []uint32{0, 1}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{2, 0, 1, 2, 1, 1}, 0},
		{"octree misaligned", oct, []uint32{0, 0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 3, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 3, 1, 1, 4, 1, 1, 4, 1, 1}, 1},
		{"octree extent 3", oct, []uint32{0, 0, 1}, []uint8{0, 0, 0, 3, 0, 0, 0, 0, 0}, []uint8{3, 1, 1, 4, 1, 1, 4, 1, 1}, 0},
		{"octree gap", oct, []uint32{0, 0, 1}, []uint8{0, 0, 0, 2, 0, 0, 0, 0, 0}, []uint8{2, 1, 1, 3, 1, 1, 4, 1, 1}, 0},
		{"flexible overlap", flex, []uint32{0, 0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}, []uint8{2, 1, 1, 3, 1, 1, 2, 2, 1, 3, 2, 1}, 1},
		{"flexible overlap pairwise", flex, []uint32{0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 0, 0, 0}, []uint8{2, 2, 1, 3, 1, 1, 3, 2, 1}, 1},
		{"flexible gap", flex, []uint32{0, 0, 1}, []uint8{0, 0, 0, 0, 1, 0, 0, 0, 0}, []uint8{3, 1, 1, 2, 2, 1, 3, 2, 1}, 0},
	}
	for _, c := range cases {
		_, err := NewBlocks(c.g, c.parent, c.start, c.end)
		var ie *InvalidBlocksError
		require.True(t, errors.As(err, &ie), "%s: %v", c.name, err)
		assert.Equal(t, c.row, ie.Row, "%s: %v", c.name, err)
	}
	// The same kinds accept valid sets.
	for _, c := range []struct {
		g          *Geometry
		parent     []uint32
		start, end []uint8
	}{
		{fsb, []uint32{0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 2, 1, 1, 2, 1, 1}},
		{oct, []uint32{0, 0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 2, 1, 1, 4, 1, 1, 4, 1, 1}},
		{flex, []uint32{0, 0, 0, 1}, []uint8{0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}, []uint8{2, 1, 1, 3, 2, 1, 2, 2, 1, 3, 2, 1}},
	} {
		_, err := NewBlocks(c.g, c.parent, c.start, c.end)
		require.NoError(t, err)
	}
	// A parent split into many cells checks overlaps by painting.
	big := mustGeometry(t, XYZ{}, nil, SubBlockedSize(Flexible, Size3D{1, 1, 1}, Size3D{4, 1, 1}, XYZ{1, 1, 1}))
	_, err := NewBlocks(big, []uint32{0, 0, 0}, []uint8{0, 0, 0, 1, 0, 0, 3, 0, 0}, []uint8{2, 1, 1, 2, 1, 1, 4, 1, 1})
	var ie *InvalidBlocksError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, int64(1), ie.Row)
	assert.Contains(t, ie.Reason, "overlaps")
}
