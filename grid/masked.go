package grid

import (
	"fmt"
	"math"
)

// Masked is a regular grid whose attributes cover only its active cells: the
// active cells in x-fastest order of the full grid (an attribute row r is the
// r-th active cell).
type Masked struct {
	*Grid
	active []int   // active index → full index
	lookup []int32 // full index → active index, −1 when inactive
}

// NewMasked builds a masked grid from a mask over every cell of g in flat
// order (true = active). The mask length must equal g.NumCells() and at least
// one cell must be active, and at most math.MaxInt32 (active indices are
// held as int32).
func NewMasked(g *Grid, mask []bool) (*Masked, error) {
	if len(mask) != g.NumCells() {
		return nil, fmt.Errorf("mask: length %d does not match the %d cells of the grid", len(mask), g.NumCells())
	}
	active := 0
	for _, on := range mask {
		if on {
			active++
		}
	}
	if active > math.MaxInt32 {
		return nil, fmt.Errorf("mask: %d active cells are more than %d", active, math.MaxInt32)
	}
	m := &Masked{Grid: g, active: make([]int, 0, active), lookup: make([]int32, len(mask))}
	for i, on := range mask {
		if on {
			m.lookup[i] = int32(len(m.active))
			m.active = append(m.active, i)
		} else {
			m.lookup[i] = -1
		}
	}
	if len(m.active) == 0 {
		return nil, fmt.Errorf("mask: no active cell (number_of_active_cells must be > 0)")
	}
	return m, nil
}

// NumActive returns the number of active cells.
func (m *Masked) NumActive() int { return len(m.active) }

// FullIndex returns the full-grid flat index of active cell a.
func (m *Masked) FullIndex(a int) int { return m.active[a] }

// ActiveIndex returns the active index of full-grid cell c, and false when
// the cell is inactive.
func (m *Masked) ActiveIndex(c int) (int, bool) {
	a := m.lookup[c]
	return int(a), a >= 0
}

// ActiveCells returns the full indices of the active cells in order (a
// read-only view).
func (m *Masked) ActiveCells() []int { return m.active }

// ActiveCentres writes the world centres of the active cells as flat xyz into
// dst (grown if too short) and returns it.
func (m *Masked) ActiveCentres(dst []float64) []float64 {
	n := len(m.active)
	if cap(dst) < 3*n {
		dst = make([]float64, 3*n)
	}
	dst = dst[:3*n]
	for a, c := range m.active {
		i, j, k := m.IJK(c)
		p := m.CellCentre(i, j, k)
		dst[3*a], dst[3*a+1], dst[3*a+2] = p[0], p[1], p[2]
	}
	return dst
}
