package blockmodel

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// ModelType is the kind of a block model, the tag of its size options.
type ModelType string

// The four kinds of block model.
const (
	// Regular: every parent block is one row.
	Regular ModelType = "regular"
	// FullySubBlocked: each parent is whole or split into exactly the
	// n_subblocks_per_parent grid.
	FullySubBlocked ModelType = "fully-sub-blocked"
	// Flexible: each parent is tiled by cuboids of its sub-cell grid.
	Flexible ModelType = "flexible"
	// VariableOctree: parents are halved repeatedly along each axis.
	VariableOctree ModelType = "variable-octree"
)

// Valid reports whether t is one of the four kinds.
func (t ModelType) Valid() bool {
	switch t {
	case Regular, FullySubBlocked, Flexible, VariableOctree:
		return true
	}
	return false
}

// SubBlocked reports whether the kind has sub-blocks (every kind but
// Regular).
func (t ModelType) SubBlocked() bool { return t != Regular }

// Limits of the geometry (A.2.1, A.12).
const (
	// MaxBlocks bounds each parent count and their product.
	MaxBlocks = 500_000_000
	// MaxSubblocks bounds the sub-block count per parent per axis of the
	// fully-sub-blocked and flexible kinds.
	MaxSubblocks = 100
	// MaxOctreeSubblocks bounds the octree sub-block count per axis (a
	// power of two).
	MaxOctreeSubblocks = 64
	// MaxBlockSize is the exclusive upper bound of a (parent) block size;
	// sizes are in (0, MaxBlockSize).
	MaxBlockSize = 1_000_000
)

// Size3D is a block count per axis, {nx, ny, nz}.
type Size3D struct {
	NX int `json:"nx"`
	NY int `json:"ny"`
	NZ int `json:"nz"`
}

// Array returns [nx, ny, nz].
func (s Size3D) Array() [3]int { return [3]int{s.NX, s.NY, s.NZ} }

// XYZ is a point or a size per axis, {x, y, z}.
type XYZ struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Array returns [x, y, z].
func (v XYZ) Array() [3]float64 { return [3]float64{v.X, v.Y, v.Z} }

// SizeOptions is the size_options union, tagged by ModelType: NBlocks and
// BlockSize for Regular; NParentBlocks, NSubblocksPerParent and
// ParentBlockSize for the sub-blocked kinds. The members of the other kinds
// are nil.
type SizeOptions struct {
	ModelType           ModelType `json:"model_type"`
	NBlocks             *Size3D   `json:"n_blocks,omitempty"`
	BlockSize           *XYZ      `json:"block_size,omitempty"`
	NParentBlocks       *Size3D   `json:"n_parent_blocks,omitempty"`
	NSubblocksPerParent *Size3D   `json:"n_subblocks_per_parent,omitempty"`
	ParentBlockSize     *XYZ      `json:"parent_block_size,omitempty"`
}

// RegularSize returns the size options of a regular model.
func RegularSize(n Size3D, size XYZ) SizeOptions {
	return SizeOptions{ModelType: Regular, NBlocks: &n, BlockSize: &size}
}

// SubBlockedSize returns the size options of a sub-blocked model of kind t.
func SubBlockedSize(t ModelType, parents, sub Size3D, parentSize XYZ) SizeOptions {
	return SizeOptions{ModelType: t, NParentBlocks: &parents, NSubblocksPerParent: &sub, ParentBlockSize: &parentSize}
}

// Parents returns the parent counts (n_blocks or n_parent_blocks); zero when
// absent.
func (s SizeOptions) Parents() [3]int {
	if s.ModelType == Regular {
		if s.NBlocks != nil {
			return s.NBlocks.Array()
		}
	} else if s.NParentBlocks != nil {
		return s.NParentBlocks.Array()
	}
	return [3]int{}
}

// ParentSize returns the parent block size (block_size or
// parent_block_size); zero when absent.
func (s SizeOptions) ParentSize() [3]float64 {
	if s.ModelType == Regular {
		if s.BlockSize != nil {
			return s.BlockSize.Array()
		}
	} else if s.ParentBlockSize != nil {
		return s.ParentBlockSize.Array()
	}
	return [3]float64{}
}

// Subblocks returns n_subblocks_per_parent, (1, 1, 1) for a regular model.
func (s SizeOptions) Subblocks() [3]int {
	if s.ModelType == Regular || s.NSubblocksPerParent == nil {
		return [3]int{1, 1, 1}
	}
	return s.NSubblocksPerParent.Array()
}

// members of each kind, in the order errors name them.
var (
	regularMembers    = []string{"n_blocks", "block_size"}
	subBlockedMembers = []string{"n_parent_blocks", "n_subblocks_per_parent", "parent_block_size"}
)

// DecodeSizeOptions decodes and validates a size_options JSON object. A
// missing or null model_type is "regular" (the client's default); an
// unknown model_type, a missing required member, a member of another kind,
// a count that is not an integer or a value beyond the limits of A.2.1 is a
// *ValidationError naming each member under prefix (e.g. "size_options").
// Other unknown members are ignored; numbers may be written as 25 or 25.0.
func DecodeSizeOptions(raw json.RawMessage, prefix string) (SizeOptions, error) {
	var p ValidationError
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		p.Add(prefix, "must be an object")
		return SizeOptions{}, p.Err()
	}
	s := SizeOptions{ModelType: Regular}
	if r, ok := m["model_type"]; ok && !isNull(r) {
		var t string
		if err := json.Unmarshal(r, &t); err != nil {
			p.Add(prefix+".model_type", "must be a string")
			return SizeOptions{}, p.Err()
		}
		s.ModelType = ModelType(t)
		if !s.ModelType.Valid() {
			p.Add(prefix+".model_type", "%q is not one of regular, fully-sub-blocked, flexible, variable-octree", t)
			return SizeOptions{}, p.Err()
		}
	}
	own, other := regularMembers, subBlockedMembers
	if s.ModelType.SubBlocked() {
		own, other = other, own
	}
	for _, name := range other {
		if r, ok := m[name]; ok && !isNull(r) {
			p.Add(prefix+"."+name, "is not a member of a %s model", s.ModelType)
		}
	}
	for _, name := range own {
		r, ok := m[name]
		if !ok || isNull(r) {
			p.Add(prefix+"."+name, "is required for a %s model", s.ModelType)
			continue
		}
		path := prefix + "." + name
		switch name {
		case "n_blocks":
			s.NBlocks = decodeCounts(r, path, &p)
		case "n_parent_blocks":
			s.NParentBlocks = decodeCounts(r, path, &p)
		case "n_subblocks_per_parent":
			s.NSubblocksPerParent = decodeCounts(r, path, &p)
		case "block_size":
			s.BlockSize = decodeXYZ(r, path, &p)
		case "parent_block_size":
			s.ParentBlockSize = decodeXYZ(r, path, &p)
		}
	}
	// Check the members that decoded against the limits too, leaving out
	// what decoding already reported (a member, or a member inside it).
	if err := s.Validate(prefix); err != nil {
		for _, v := range err.(*ValidationError).Params {
			if !reported(p.Params, v.Name) {
				p.Params = append(p.Params, v)
			}
		}
	}
	if err := p.Err(); err != nil {
		return SizeOptions{}, err
	}
	return s, nil
}

// reported reports whether name, or a member inside it, is in list.
func reported(list []InvalidParam, name string) bool {
	for _, q := range list {
		if q.Name == name || strings.HasPrefix(q.Name, name+".") {
			return true
		}
	}
	return false
}

// UnmarshalJSON decodes with DecodeSizeOptions under the name
// "size_options"; its error is a *ValidationError.
func (s *SizeOptions) UnmarshalJSON(b []byte) error {
	v, err := DecodeSizeOptions(b, "size_options")
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Validate checks the values against the limits of A.2.1 and A.12: parent
// counts integers in 1…MaxBlocks with a product at most MaxBlocks, sizes in
// (0, MaxBlockSize), sub-block counts 1…MaxSubblocks, or for an octree a
// power of two up to MaxOctreeSubblocks. Members are named under prefix.
func (s SizeOptions) Validate(prefix string) error {
	var p ValidationError
	if !s.ModelType.Valid() {
		p.Add(prefix+".model_type", "%q is not one of regular, fully-sub-blocked, flexible, variable-octree", string(s.ModelType))
		return p.Err()
	}
	countsName, sizeName := "n_blocks", "block_size"
	counts, size := s.NBlocks, s.BlockSize
	if s.ModelType.SubBlocked() {
		countsName, sizeName = "n_parent_blocks", "parent_block_size"
		counts, size = s.NParentBlocks, s.ParentBlockSize
	}
	for _, m := range []struct {
		name    string
		present bool
	}{
		{"n_blocks", s.NBlocks != nil}, {"block_size", s.BlockSize != nil}, {"n_parent_blocks", s.NParentBlocks != nil},
		{"n_subblocks_per_parent", s.NSubblocksPerParent != nil}, {"parent_block_size", s.ParentBlockSize != nil},
	} {
		own := (m.name == "n_blocks" || m.name == "block_size") != s.ModelType.SubBlocked()
		if m.present && !own {
			p.Add(prefix+"."+m.name, "is not a member of a %s model", s.ModelType)
		}
	}
	axes := [3]string{"nx", "ny", "nz"}
	if counts == nil {
		p.Add(prefix+"."+countsName, "is required for a %s model", s.ModelType)
	} else {
		total := 1
		ok := true
		for a, n := range counts.Array() {
			if n < 1 || n > MaxBlocks {
				p.Add(prefix+"."+countsName+"."+axes[a], "%d must be between 1 and %d", n, MaxBlocks)
				ok = false
			} else if ok {
				total *= n // both ≤ MaxBlocks: no overflow
				if total > MaxBlocks {
					p.Add(prefix+"."+countsName, "%d × %d × %d blocks are more than %d", counts.NX, counts.NY, counts.NZ, MaxBlocks)
					ok = false
				}
			}
		}
	}
	if size == nil {
		p.Add(prefix+"."+sizeName, "is required for a %s model", s.ModelType)
	} else {
		for a, v := range size.Array() {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v >= MaxBlockSize {
				p.Add(prefix+"."+sizeName+"."+"xyz"[a:a+1], "%v must be greater than 0 and less than %d", v, MaxBlockSize)
			}
		}
	}
	if s.ModelType.SubBlocked() {
		if s.NSubblocksPerParent == nil {
			p.Add(prefix+".n_subblocks_per_parent", "is required for a %s model", s.ModelType)
		} else {
			for a, n := range s.NSubblocksPerParent.Array() {
				name := prefix + ".n_subblocks_per_parent." + axes[a]
				if s.ModelType == VariableOctree {
					if n < 1 || n > MaxOctreeSubblocks || n&(n-1) != 0 {
						p.Add(name, "%d must be one of 1, 2, 4, 8, 16, 32, 64", n)
					}
				} else if n < 1 || n > MaxSubblocks {
					p.Add(name, "%d must be between 1 and %d", n, MaxSubblocks)
				}
			}
		}
	}
	return p.Err()
}

// decodeCounts reads {nx, ny, nz} of integers (25 or 25.0). A count that
// is missing or no integer is reported and read as 1, so that Validate
// still checks the others; nil when r is no object.
func decodeCounts(r json.RawMessage, path string, p *ValidationError) *Size3D {
	m, ok := object(r, path, p)
	if !ok {
		return nil
	}
	out := [3]int{1, 1, 1}
	for a, name := range [3]string{"nx", "ny", "nz"} {
		v, ok := number(m, name, path, p)
		if !ok {
			continue
		}
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			p.Add(path+"."+name, "%v must be an integer", v)
			continue
		}
		// Out-of-range counts are Validate's to name; clamp so the
		// conversion is defined.
		out[a] = int(math.Max(-1, math.Min(v, MaxBlocks+1)))
	}
	return &Size3D{out[0], out[1], out[2]}
}

// decodeXYZ reads {x, y, z} of numbers; a member that is missing or no
// number is reported and read as 1; nil when r is no object.
func decodeXYZ(r json.RawMessage, path string, p *ValidationError) *XYZ {
	m, ok := object(r, path, p)
	if !ok {
		return nil
	}
	out := [3]float64{1, 1, 1}
	for a, name := range [3]string{"x", "y", "z"} {
		if v, ok := number(m, name, path, p); ok {
			out[a] = v
		}
	}
	return &XYZ{out[0], out[1], out[2]}
}

// DecodeXYZ decodes a required {x, y, z} object of finite numbers (e.g.
// model_origin), naming the members under path.
func DecodeXYZ(raw json.RawMessage, path string) (XYZ, error) {
	var p ValidationError
	v := decodeXYZ(raw, path, &p)
	if err := p.Err(); err != nil {
		return XYZ{}, err
	}
	for a, c := range v.Array() {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			p.Add(path+"."+"xyz"[a:a+1], "%v is not a finite number", c)
		}
	}
	if err := p.Err(); err != nil {
		return XYZ{}, err
	}
	return *v, nil
}

func object(r json.RawMessage, path string, p *ValidationError) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil || m == nil {
		p.Add(path, "must be an object")
		return nil, false
	}
	return m, true
}

func number(m map[string]json.RawMessage, name, path string, p *ValidationError) (float64, bool) {
	r, ok := m[name]
	if !ok || isNull(r) {
		p.Add(path+"."+name, "is required")
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(r, &v); err != nil {
		p.Add(path+"."+name, "must be a number")
		return 0, false
	}
	return v, true
}

func isNull(r json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(r), []byte("null")) }
