package geostat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Variogram is a nested variogram model: a nugget c0 plus structures, each
// with its own type, contribution and anisotropy.
//
//	γ(h) = c0·1[h ≠ 0] + Σ_s c_s (1 − ρ_s(|A_s h|))
//	C(h) = c0·1[h = 0] + Σ_s c_s ρ_s(|A_s h|)
//
// The nugget is a discontinuity at the origin: C contains it only at a zero
// lag. A linear structure is intrinsic (no covariance); in C it contributes
// its generalised covariance −c·r, which is only meaningful for ordinary
// kriging (see RequireCovariance).
//
// Build one with NewVariogram or DecodeVariogram; the zero value is not
// usable.
type Variogram struct {
	// Nugget is c0 ≥ 0.
	Nugget float64
	// Structures are the nested structures; treat as read-only.
	Structures []Structure
	// Sill is the sill declared by the variogram object (informational; 0
	// when not given). TotalSill is the model's sill.
	Sill float64
	// DataVariance is the object's data_variance when given, else 0.
	DataVariance float64
	// ModellingSpace is "data", "normalscore" or "" when not given.
	ModellingSpace string
}

// NewVariogram validates the nugget and structures and returns a model with
// precomputed anisotropy transforms. The structures are copied.
func NewVariogram(nugget float64, structures ...Structure) (*Variogram, error) {
	if math.IsNaN(nugget) || math.IsInf(nugget, 0) || nugget < 0 {
		return nil, fmt.Errorf("nugget: %v must be a finite number ≥ 0", nugget)
	}
	if len(structures) == 0 {
		return nil, fmt.Errorf("structures: a variogram needs at least one structure")
	}
	v := &Variogram{Nugget: nugget, Structures: make([]Structure, len(structures))}
	copy(v.Structures, structures)
	for i := range v.Structures {
		if err := v.Structures[i].validate(i); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// TotalSill returns c0 + Σ c_s (for a linear structure its contribution is
// its value at the range).
func (v *Variogram) TotalSill() float64 {
	s := v.Nugget
	for i := range v.Structures {
		s += v.Structures[i].Contribution
	}
	return s
}

// Normalised returns a copy scaled to unit total sill: c0/S and c_s/S with
// S = TotalSill. Ratios and ranges are unchanged.
func (v *Variogram) Normalised() *Variogram {
	s := v.TotalSill()
	out := *v
	out.Nugget = v.Nugget / s
	out.Structures = make([]Structure, len(v.Structures))
	copy(out.Structures, v.Structures)
	for i := range out.Structures {
		out.Structures[i].Contribution /= s
	}
	out.Sill = 1
	return &out
}

// Intrinsic reports whether the model has a linear (intrinsic) structure.
func (v *Variogram) Intrinsic() bool {
	for i := range v.Structures {
		if v.Structures[i].Type == Linear {
			return true
		}
	}
	return false
}

// RequireCovariance returns an error naming the first linear structure, for
// callers that need a true covariance (simple kriging, turning bands
// conditioned by simple kriging). It returns nil when the model is stationary.
func (v *Variogram) RequireCovariance() error {
	for i := range v.Structures {
		if v.Structures[i].Type == Linear {
			return fmt.Errorf("variogram structure %d (linear) is intrinsic and has no covariance: use ordinary kriging", i)
		}
	}
	return nil
}

// LongestStructure returns the index of the structure with the longest major
// range (the first on ties).
func (v *Variogram) LongestStructure() int {
	best := 0
	for i := range v.Structures {
		if v.Structures[i].Ellipsoid.Major > v.Structures[best].Ellipsoid.Major {
			best = i
		}
	}
	return best
}

// CovarianceLag returns C(h) for the lag h = (dx, dy, dz), including the
// nugget when the lag is exactly zero.
func (v *Variogram) CovarianceLag(dx, dy, dz float64) float64 {
	c := 0.0
	if dx == 0 && dy == 0 && dz == 0 {
		c = v.Nugget
	}
	for i := range v.Structures {
		s := &v.Structures[i]
		c += s.Contribution * Correlation(s.Type, s.Alpha, s.aniso.Norm(dx, dy, dz))
	}
	return c
}

// Covariance returns C(b − a).
func (v *Variogram) Covariance(a, b [3]float64) float64 {
	return v.CovarianceLag(b[0]-a[0], b[1]-a[1], b[2]-a[2])
}

// GammaLag returns γ(h) for the lag h = (dx, dy, dz); γ(0) = 0.
func (v *Variogram) GammaLag(dx, dy, dz float64) float64 {
	if dx == 0 && dy == 0 && dz == 0 {
		return 0
	}
	g := v.Nugget
	for i := range v.Structures {
		s := &v.Structures[i]
		r := s.aniso.Norm(dx, dy, dz)
		if s.Type == Linear {
			g += s.Contribution * r // intrinsic: γ = c·r, no sill
			continue
		}
		g += s.Contribution * (1 - Correlation(s.Type, s.Alpha, r))
	}
	return g
}

// Gamma returns γ(b − a).
func (v *Variogram) Gamma(a, b [3]float64) float64 {
	return v.GammaLag(b[0]-a[0], b[1]-a[1], b[2]-a[2])
}

// SillTolerance is the relative tolerance of the check that a variogram
// object's declared sill equals its nugget plus contributions.
const SillTolerance = 1e-6

// DecodedVariogram is the result of DecodeVariogram: the model and the
// warnings a user should see (for example a declared sill that disagrees with
// the structures).
type DecodedVariogram struct {
	*Variogram
	// Schema is the object's schema id.
	Schema string
	// Warnings are non-fatal findings.
	Warnings []string
}

type jsonVariogram struct {
	Schema         string            `json:"schema"`
	Sill           *float64          `json:"sill"`
	Nugget         *float64          `json:"nugget"`
	DataVariance   *float64          `json:"data_variance"`
	ModellingSpace string            `json:"modelling_space"`
	Structures     []json.RawMessage `json:"structures"`
}

type jsonStructure struct {
	VariogramType string   `json:"variogram_type"`
	Contribution  *float64 `json:"contribution"`
	Alpha         *int     `json:"alpha"`
	Anisotropy    *struct {
		Ranges *struct {
			Major     *float64 `json:"major"`
			SemiMajor *float64 `json:"semi_major"`
			Minor     *float64 `json:"minor"`
		} `json:"ellipsoid_ranges"`
		Rotation *struct {
			DipAzimuth *float64 `json:"dip_azimuth"`
			Dip        *float64 `json:"dip"`
			Pitch      *float64 `json:"pitch"`
		} `json:"rotation"`
	} `json:"anisotropy"`
}

// DecodeVariogram decodes a variogram object (schema versions 1.0.1, 1.1.0
// and 1.2.0) into a model. Rotation angles are checked against the rotation
// component of the object's version (1.0.1: dip ≤ 90, pitch ≤ 180). Errors
// name the offending member, e.g. "structures[1].alpha".
func DecodeVariogram(doc []byte) (*DecodedVariogram, error) {
	var jv jsonVariogram
	if err := json.Unmarshal(doc, &jv); err != nil {
		return nil, fmt.Errorf("variogram: %w", err)
	}
	rotSchema, err := variogramRotationSchema(jv.Schema)
	if err != nil {
		return nil, err
	}
	out := &DecodedVariogram{Schema: jv.Schema}
	nugget := 0.0
	if jv.Nugget != nil {
		nugget = *jv.Nugget
	}
	if len(jv.Structures) == 0 {
		return nil, fmt.Errorf("variogram: structures: at least one structure is required")
	}
	structs := make([]Structure, len(jv.Structures))
	for i, raw := range jv.Structures {
		s, err := decodeStructure(raw, i, rotSchema)
		if err != nil {
			return nil, fmt.Errorf("variogram: %w", err)
		}
		structs[i] = s
	}
	v, err := NewVariogram(nugget, structs...)
	if err != nil {
		return nil, fmt.Errorf("variogram: %w", err)
	}
	if jv.Sill == nil {
		return nil, fmt.Errorf("variogram: sill: required")
	}
	v.Sill = *jv.Sill
	if jv.DataVariance != nil {
		v.DataVariance = *jv.DataVariance
	}
	v.ModellingSpace = jv.ModellingSpace
	total := v.TotalSill()
	if math.Abs(total-v.Sill) > SillTolerance*math.Max(1, v.Sill) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("sill %g differs from nugget + contributions %g; the structures are used", v.Sill, total))
	}
	out.Variogram = v
	return out, nil
}

// EncodeStructures returns the structures member of a variogram object
// for the model's structures, the inverse of what DecodeVariogram reads:
// variogram_type, contribution, alpha (only for the types that have one)
// and anisotropy {ellipsoid_ranges, rotation}. The caller adds the envelope
// and the nugget, sill and modelling members.
func EncodeStructures(v *Variogram) []map[string]any {
	out := make([]map[string]any, len(v.Structures))
	for i, s := range v.Structures {
		e := s.Ellipsoid
		st := map[string]any{
			"variogram_type": s.Type.String(),
			"contribution":   s.Contribution,
			"anisotropy": map[string]any{
				"ellipsoid_ranges": map[string]any{"major": e.Major, "semi_major": e.SemiMajor, "minor": e.Minor},
				"rotation":         map[string]any{"dip_azimuth": e.Rotation.DipAzimuth, "dip": e.Rotation.Dip, "pitch": e.Rotation.Pitch},
			},
		}
		if s.Type.HasAlpha() {
			st["alpha"] = s.Alpha
		}
		out[i] = st
	}
	return out
}

// variogramRotationSchema maps a variogram schema id to the rotation version
// its structures use.
func variogramRotationSchema(schema string) (RotationSchema, error) {
	switch {
	case strings.HasPrefix(schema, "/objects/variogram/1.0.1/"):
		return RotationV1_0_1, nil
	case strings.HasPrefix(schema, "/objects/variogram/1.1.0/"), strings.HasPrefix(schema, "/objects/variogram/1.2.0/"):
		return RotationV1_1_0, nil
	}
	return 0, fmt.Errorf("variogram: schema: %q is not a supported variogram schema (1.0.1, 1.1.0, 1.2.0)", schema)
}

func decodeStructure(raw json.RawMessage, i int, rs RotationSchema) (Structure, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var js jsonStructure
	if err := dec.Decode(&js); err != nil {
		return Structure{}, fmt.Errorf("structures[%d]: %w", i, err)
	}
	t, err := ParseStructureType(js.VariogramType)
	if err != nil {
		return Structure{}, fmt.Errorf("structures[%d].variogram_type: %w", i, err)
	}
	if js.Contribution == nil {
		return Structure{}, fmt.Errorf("structures[%d].contribution: required", i)
	}
	s := Structure{Type: t, Contribution: *js.Contribution}
	if js.Alpha != nil {
		s.Alpha = *js.Alpha
		if !t.HasAlpha() {
			return Structure{}, fmt.Errorf("structures[%d].alpha: a %s structure takes no alpha", i, t)
		}
	} else if t.HasAlpha() {
		return Structure{}, fmt.Errorf("structures[%d].alpha: required for a %s structure", i, t)
	}
	a := js.Anisotropy
	if a == nil || a.Ranges == nil || a.Rotation == nil {
		return Structure{}, fmt.Errorf("structures[%d].anisotropy: ellipsoid_ranges and rotation are required", i)
	}
	if a.Ranges.Major == nil || a.Ranges.SemiMajor == nil || a.Ranges.Minor == nil {
		return Structure{}, fmt.Errorf("structures[%d].anisotropy.ellipsoid_ranges: major, semi_major and minor are required", i)
	}
	if a.Rotation.DipAzimuth == nil || a.Rotation.Dip == nil || a.Rotation.Pitch == nil {
		return Structure{}, fmt.Errorf("structures[%d].anisotropy.rotation: dip_azimuth, dip and pitch are required", i)
	}
	s.Ellipsoid = Ellipsoid{
		Major: *a.Ranges.Major, SemiMajor: *a.Ranges.SemiMajor, Minor: *a.Ranges.Minor,
		Rotation: Rotation{DipAzimuth: *a.Rotation.DipAzimuth, Dip: *a.Rotation.Dip, Pitch: *a.Rotation.Pitch},
	}
	if err := s.Ellipsoid.Rotation.ValidateSchema(rs); err != nil {
		return Structure{}, fmt.Errorf("structures[%d].anisotropy.%w", i, err)
	}
	return s, nil
}
