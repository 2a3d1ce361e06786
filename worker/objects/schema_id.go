package objects

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is the object type named by a schema id, e.g. "pointset".
type Kind string

// The object kinds the worker models.
const (
	KindPointset            Kind = "pointset"
	KindDownholeIntervals   Kind = "downhole-intervals"
	KindRegular3DGrid       Kind = "regular-3d-grid"
	KindRegularMasked3DGrid Kind = "regular-masked-3d-grid"
	KindVariogram           Kind = "variogram"
	KindDistribution        Kind = "non-parametric-continuous-cumulative-distribution"
)

// supportedVersions lists the schema versions of each modelled kind, oldest
// first (docs/objects.md 1.5-1.11).
var supportedVersions = map[Kind][]string{
	KindPointset:            {"1.0.1", "1.1.0", "1.2.0", "1.3.0"},
	KindDownholeIntervals:   {"1.0.1", "1.1.0", "1.2.0", "1.3.0"},
	KindRegular3DGrid:       {"1.0.1", "1.1.0", "1.2.0", "1.3.0"},
	KindRegularMasked3DGrid: {"1.0.1", "1.1.0", "1.2.0", "1.3.0"},
	KindVariogram:           {"1.0.1", "1.1.0", "1.2.0"},
	KindDistribution:        {"1.0.1", "1.1.0", "1.2.0"},
}

// SchemaID is a parsed object schema id
// "/objects/<kind>/<version>/<kind>.schema.json".
type SchemaID struct {
	Kind    Kind
	Version string
}

// ParseSchemaID parses an object schema id. It accepts any kind and version of
// the right shape; Supported tells whether the worker models it.
func ParseSchemaID(s string) (SchemaID, error) {
	parts := strings.Split(s, "/")
	// "", "objects", kind, version, file
	if len(parts) != 5 || parts[0] != "" || parts[1] != "objects" || parts[2] == "" || parts[3] == "" ||
		parts[4] != parts[2]+".schema.json" {
		return SchemaID{}, fmt.Errorf("schema %q is not of the form /objects/<kind>/<version>/<kind>.schema.json", s)
	}
	v := parts[3]
	for _, p := range strings.Split(v, ".") {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return SchemaID{}, fmt.Errorf("schema %q: version %q is not of the form major.minor.patch", s, v)
		}
	}
	return SchemaID{Kind: Kind(parts[2]), Version: v}, nil
}

// String returns the schema id, e.g. "/objects/pointset/1.3.0/pointset.schema.json".
func (id SchemaID) String() string {
	return "/objects/" + string(id.Kind) + "/" + id.Version + "/" + string(id.Kind) + ".schema.json"
}

// Supported reports whether the worker models this kind and version.
func (id SchemaID) Supported() bool {
	return slices.Contains(supportedVersions[id.Kind], id.Version)
}

// SupportedSchemas returns every schema id the worker models.
func SupportedSchemas() []SchemaID {
	var out []SchemaID
	for _, k := range []Kind{KindPointset, KindDownholeIntervals, KindRegular3DGrid, KindRegularMasked3DGrid, KindVariogram, KindDistribution} {
		for _, v := range supportedVersions[k] {
			out = append(out, SchemaID{Kind: k, Version: v})
		}
	}
	return out
}
