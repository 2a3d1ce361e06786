package blockmodel

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// DiscretisationOffsets writes into dst (grown if too short) the world
// offsets, from the row's centroid, of the d.NX·d.NY·d.NZ discretisation
// points of a row (A.14.4): the centres of equal sub-cells of the row's own
// extent (dx, dy, dz), local offset ((a+½)/nx − ½)·dx per axis, rotated with
// the model, flat xyz with a fastest. For a whole parent they equal
// d.Offsets of the equivalent grid bit for bit. It allocates only when dst
// is too short.
func (b *Blocks) DiscretisationOffsets(row int64, d grid.BlockDiscretisation, dst []float64) []float64 {
	ext := b.Extent(row)
	dst = grow(dst, 3*d.Count())
	n := 0
	for c := 0; c < d.NZ; c++ {
		for bb := 0; bb < d.NY; bb++ {
			for a := 0; a < d.NX; a++ {
				u := ((float64(a)+0.5)/float64(d.NX) - 0.5) * ext[0]
				v := ((float64(bb)+0.5)/float64(d.NY) - 0.5) * ext[1]
				w := ((float64(c)+0.5)/float64(d.NZ) - 0.5) * ext[2]
				dst[n], dst[n+1], dst[n+2] = b.g.r.Apply(u, v, w)
				n += 3
			}
		}
	}
	return dst
}

// SameRows reports whether two row sets have the same geometry and the same
// rows (A.14.5 step 3: a compute job refuses to write when the sub-block
// set changed since it read it).
func (b *Blocks) SameRows(o *Blocks) bool {
	if b.n != o.n || !b.g.Equal(o.g) {
		return false
	}
	if b.whole && o.whole {
		return true
	}
	for r := int64(0); r < b.n; r++ {
		s1, e1 := b.Corners(r)
		s2, e2 := o.Corners(r)
		if b.Parent(r) != o.Parent(r) || s1 != s2 || e1 != e2 {
			return false
		}
	}
	return true
}

// Equal reports whether two geometries are the same: kind, origin,
// normalized rotation, counts and sizes.
func (g *Geometry) Equal(o *Geometry) bool {
	return g.kind == o.kind && g.origin == o.origin && g.normalized == o.normalized &&
		g.n == o.n && g.size == o.size && g.nsub == o.nsub
}

// ObjectGeometry is the geometry member of the block model's geoscience
// object (A.13): one of the four block-model-*-structure components.
// NBlocks and BlockSize are set for a regular model, NParentBlocks,
// ParentBlockSize and NSubblocksPerParent otherwise; Rotation is omitted
// when all three angles are 0.
type ObjectGeometry struct {
	ModelType           ModelType         `json:"model_type"`
	Origin              [3]float64        `json:"origin"`
	NBlocks             *[3]int           `json:"n_blocks,omitempty"`
	BlockSize           *[3]float64       `json:"block_size,omitempty"`
	NParentBlocks       *[3]int           `json:"n_parent_blocks,omitempty"`
	ParentBlockSize     *[3]float64       `json:"parent_block_size,omitempty"`
	NSubblocksPerParent *[3]int           `json:"n_subblocks_per_parent,omitempty"`
	Rotation            *geostat.Rotation `json:"rotation,omitempty"`
}

// ObjectGeometry returns the geoscience object's geometry member.
func (g *Geometry) ObjectGeometry() ObjectGeometry {
	n, s := g.n, g.size
	og := ObjectGeometry{ModelType: g.kind, Origin: g.origin}
	if g.kind == Regular {
		og.NBlocks, og.BlockSize = &n, &s
	} else {
		sub := g.nsub
		og.NParentBlocks, og.ParentBlockSize, og.NSubblocksPerParent = &n, &s, &sub
	}
	if g.normalized != [3]float64{} {
		r := g.GridRotation()
		og.Rotation = &r
	}
	return og
}

// StringList is a list of strings that also decodes from a single string
// (the client's full user role_name may be either).
type StringList []string

// UnmarshalJSON accepts a string or a list of strings (null is empty).
func (l *StringList) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*l = nil
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = StringList{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("must be a string or a list of strings: %w", err)
	}
	*l = list
	return nil
}
