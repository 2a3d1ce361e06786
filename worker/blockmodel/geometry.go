package blockmodel

import (
	"math"

	"github.com/geostat-engine/geostat/geostat"
)

// Geometry is the validated geometry of a block model: kind, origin (the
// model's minimum corner in its own frame), rotation, parent counts and
// size, and the sub-cell grid of a parent. It is immutable.
type Geometry struct {
	kind       ModelType
	origin     [3]float64
	rotation   []RotationItem
	normalized [3]float64
	n          [3]int
	size       [3]float64
	nsub       [3]int
	r, rt      geostat.Matrix3
}

// NewGeometry validates and returns a geometry. origin must be finite,
// rotation a valid block_rotation list (ValidateRotation) and size valid
// size options (SizeOptions.Validate). The error is a *ValidationError
// naming every invalid member: "model_origin.x", "block_rotation[0].axis",
// "size_options.n_blocks.nx" and so on.
func NewGeometry(origin XYZ, rotation []RotationItem, size SizeOptions) (*Geometry, error) {
	var p ValidationError
	for a, v := range origin.Array() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			p.Add("model_origin."+"xyz"[a:a+1], "%v is not a finite number", v)
		}
	}
	if err := ValidateRotation(rotation, "block_rotation"); err != nil {
		p.Params = append(p.Params, err.(*ValidationError).Params...)
	}
	if err := size.Validate("size_options"); err != nil {
		p.Params = append(p.Params, err.(*ValidationError).Params...)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	g := &Geometry{
		kind:     size.ModelType,
		origin:   origin.Array(),
		rotation: append([]RotationItem(nil), rotation...),
		n:        size.Parents(),
		size:     size.ParentSize(),
		nsub:     size.Subblocks(),
	}
	g.normalized = NormalizeRotation(rotation)
	g.r = g.GridRotation().Matrix()
	g.rt = g.r.Transpose()
	return g, nil
}

// Type returns the kind of the model.
func (g *Geometry) Type() ModelType { return g.kind }

// Origin returns model_origin.
func (g *Geometry) Origin() XYZ { return XYZ{g.origin[0], g.origin[1], g.origin[2]} }

// BlockRotation returns a copy of the block_rotation list.
func (g *Geometry) BlockRotation() []RotationItem {
	return append([]RotationItem{}, g.rotation...)
}

// NormalizedRotation returns normalized_rotation [a, d, p].
func (g *Geometry) NormalizedRotation() [3]float64 { return g.normalized }

// GridRotation returns the rotation as the geoscience objects and the
// engine's grids write it: (dip_azimuth, dip, pitch) = normalized_rotation.
// A grid.Grid with this rotation and the model's origin, parent counts and
// parent size has the same cell centres as the model's parents, bit for
// bit.
func (g *Geometry) GridRotation() geostat.Rotation {
	return geostat.Rotation{DipAzimuth: g.normalized[0], Dip: g.normalized[1], Pitch: g.normalized[2]}
}

// Matrix returns the local-to-world rotation matrix R.
func (g *Geometry) Matrix() geostat.Matrix3 { return g.r }

// SizeOptions returns the size options of the geometry.
func (g *Geometry) SizeOptions() SizeOptions {
	n := Size3D{g.n[0], g.n[1], g.n[2]}
	s := XYZ{g.size[0], g.size[1], g.size[2]}
	if g.kind == Regular {
		return RegularSize(n, s)
	}
	return SubBlockedSize(g.kind, n, Size3D{g.nsub[0], g.nsub[1], g.nsub[2]}, s)
}

// Parents returns the parent counts [nx, ny, nz].
func (g *Geometry) Parents() [3]int { return g.n }

// NumParents returns nx·ny·nz.
func (g *Geometry) NumParents() int64 { return int64(g.n[0]) * int64(g.n[1]) * int64(g.n[2]) }

// ParentSize returns the (parent) block size.
func (g *Geometry) ParentSize() [3]float64 { return g.size }

// Subblocks returns n_subblocks_per_parent ((1, 1, 1) for a regular model).
func (g *Geometry) Subblocks() [3]int { return g.nsub }

// SubCells returns the number of sub-cells of a parent, nsx·nsy·nsz.
func (g *Geometry) SubCells() int { return g.nsub[0] * g.nsub[1] * g.nsub[2] }

// ParentIndex returns the flat parent index i + nx·(j + ny·k). It does not
// check bounds.
func (g *Geometry) ParentIndex(i, j, k uint32) int64 {
	return int64(i) + int64(g.n[0])*(int64(j)+int64(g.n[1])*int64(k))
}

// ParentIJK returns the indices of a flat parent index.
func (g *Geometry) ParentIJK(p int64) (i, j, k uint32) {
	nx, ny := int64(g.n[0]), int64(g.n[1])
	return uint32(p % nx), uint32((p / nx) % ny), uint32(p / (nx * ny))
}

// ContainsParent reports whether (i, j, k) is a parent of the model.
func (g *Geometry) ContainsParent(i, j, k uint32) bool {
	return int64(i) < int64(g.n[0]) && int64(j) < int64(g.n[1]) && int64(k) < int64(g.n[2])
}

// Sidx returns the sub-block index of a minimum-corner cell, si + nsx·(sj +
// nsy·sk).
func (g *Geometry) Sidx(start [3]uint8) uint32 {
	return uint32(start[0]) + uint32(g.nsub[0])*(uint32(start[1])+uint32(g.nsub[1])*uint32(start[2]))
}

// SidxCell returns the sub-cell (si, sj, sk) of a sub-block index.
func (g *Geometry) SidxCell(sidx uint32) [3]uint8 {
	nx, ny := uint32(g.nsub[0]), uint32(g.nsub[1])
	return [3]uint8{uint8(sidx % nx), uint8((sidx / nx) % ny), uint8(sidx / (nx * ny))}
}

// WholeCorners returns the corners of a whole parent: (0, 0, 0) to
// n_subblocks_per_parent.
func (g *Geometry) WholeCorners() (start, end [3]uint8) {
	return start, [3]uint8{uint8(g.nsub[0]), uint8(g.nsub[1]), uint8(g.nsub[2])}
}

// LocalToWorld maps a point of the model frame (origin at the model corner,
// axes along the model) to world coordinates: origin + R·u.
func (g *Geometry) LocalToWorld(u, v, w float64) [3]float64 {
	x, y, z := g.r.Apply(u, v, w)
	return [3]float64{g.origin[0] + x, g.origin[1] + y, g.origin[2] + z}
}

// WorldToLocal maps a world point into the model frame: Rᵀ·(w − origin).
func (g *Geometry) WorldToLocal(x, y, z float64) [3]float64 {
	u, v, w := g.rt.Apply(x-g.origin[0], y-g.origin[1], z-g.origin[2])
	return [3]float64{u, v, w}
}

// ParentCentroid returns the world centroid of parent (i, j, k):
// origin + R·((i+½)·bx, (j+½)·by, (k+½)·bz), computed as grid.Grid computes
// its cell centres.
func (g *Geometry) ParentCentroid(i, j, k uint32) [3]float64 {
	return g.LocalToWorld((float64(i)+0.5)*g.size[0], (float64(j)+0.5)*g.size[1], (float64(k)+0.5)*g.size[2])
}

// SubCentroid returns the world centroid of the sub-block of parent
// (i, j, k) covering sub-cells start (inclusive) to end (exclusive):
// origin + R·((i + (s+e)/(2n))·b) per axis. A whole parent's centroid equals
// ParentCentroid bit for bit.
func (g *Geometry) SubCentroid(i, j, k uint32, start, end [3]uint8) [3]float64 {
	idx := [3]uint32{i, j, k}
	var u [3]float64
	for a := 0; a < 3; a++ {
		u[a] = (float64(idx[a]) + float64(int(start[a])+int(end[a]))/float64(2*g.nsub[a])) * g.size[a]
	}
	return g.LocalToWorld(u[0], u[1], u[2])
}

// SubExtent returns the extent (dx, dy, dz) along the model axes of a
// sub-block covering sub-cells start to end: (e − s)/n · parent size per
// axis; a whole parent's extent is exactly the parent size. Block
// discretisation (A.14.4) divides this extent.
func (g *Geometry) SubExtent(start, end [3]uint8) [3]float64 {
	var d [3]float64
	for a := 0; a < 3; a++ {
		d[a] = float64(int(end[a])-int(start[a])) / float64(g.nsub[a]) * g.size[a]
	}
	return d
}

// BBox is the world bounding box of a model, {x_minmax, y_minmax,
// z_minmax}.
type BBox struct {
	XMinMax MinMax `json:"x_minmax"`
	YMinMax MinMax `json:"y_minmax"`
	ZMinMax MinMax `json:"z_minmax"`
}

// Axes returns the intervals along x, y, z, to read or set in a loop over
// the axes.
func (b *BBox) Axes() [3]*MinMax { return [3]*MinMax{&b.XMinMax, &b.YMinMax, &b.ZMinMax} }

// MinMax is a closed interval {min, max}.
type MinMax struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// BBox returns the smallest world-axis-aligned box holding every block: the
// box of the 8 corners origin + R·(u·nx·bx, v·ny·by, w·nz·bz), u, v, w ∈
// {0, 1} (A.2.5).
func (g *Geometry) BBox() BBox {
	ext := [3]float64{float64(g.n[0]) * g.size[0], float64(g.n[1]) * g.size[1], float64(g.n[2]) * g.size[2]}
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for c := 0; c < 8; c++ {
		p := g.LocalToWorld(float64(c&1)*ext[0], float64(c>>1&1)*ext[1], float64(c>>2&1)*ext[2])
		for a := 0; a < 3; a++ {
			lo[a] = math.Min(lo[a], p[a])
			hi[a] = math.Max(hi[a], p[a])
		}
	}
	return BBox{MinMax{lo[0], hi[0]}, MinMax{lo[1], hi[1]}, MinMax{lo[2], hi[2]}}
}

// MatchTolerance is the tolerance of coordinate matching (A.7.4, OPEN-15):
// a fraction of the (sub-)block size per axis.
const MatchTolerance = 1e-3

// ResolveXYZ finds the block a centroid (x, y, z) with extent (dx, dy, dz)
// describes, independently of the model's current sub-blocks (A.7.4
// "Coordinate matching"): f = Rᵀ·(xyz − origin)/parent_size gives the
// parent and the position on its sub-cell grid. For a regular model dx, dy,
// dz are ignored and the result is the parent whose centroid is within
// MatchTolerance·block size per axis. For the sub-blocked kinds the result
// is the parent and the sub-cell cuboid start–end whose centroid and extent
// are both within MatchTolerance·(sub-block extent) per axis. ok is false
// when no block of the grid matches (outside the model, off-centre, or an
// extent that is no whole number of sub-cells). It does not allocate.
func (g *Geometry) ResolveXYZ(x, y, z, dx, dy, dz float64) (i, j, k uint32, start, end [3]uint8, ok bool) {
	l := g.WorldToLocal(x, y, z)
	ext := [3]float64{dx, dy, dz}
	var idx [3]uint32
	for a := 0; a < 3; a++ {
		f := l[a] / g.size[a]
		if g.kind == Regular {
			c := math.Round(f - 0.5)
			if !(c >= 0 && c < float64(g.n[a])) || math.Abs(f-0.5-c) > MatchTolerance {
				return 0, 0, 0, start, end, false
			}
			idx[a] = uint32(c)
			end[a] = 1
			continue
		}
		p := math.Floor(f)
		if !(p >= 0 && p < float64(g.n[a])) {
			return 0, 0, 0, start, end, false
		}
		n := float64(g.nsub[a])
		cu := (f - p) * n            // centroid on the sub-cell grid
		wu := ext[a] / g.size[a] * n // extent in sub-cells
		s, e := math.Round(cu-wu/2), math.Round(cu+wu/2)
		if !(s >= 0 && e <= n && s < e) {
			return 0, 0, 0, start, end, false
		}
		w := e - s
		if math.Abs(cu-(s+e)/2) > MatchTolerance*w || math.Abs(wu-w) > MatchTolerance*w {
			return 0, 0, 0, start, end, false
		}
		idx[a], start[a], end[a] = uint32(p), uint8(s), uint8(e)
	}
	return idx[0], idx[1], idx[2], start, end, true
}
