package tasks

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ObjectRef is a parsed geoscience object reference URL:
//
//	https://<hub>/geoscience-object/orgs/{org}/workspaces/{ws}/objects/{uuid}[?version=V]
//	https://<hub>/geoscience-object/orgs/{org}/workspaces/{ws}/objects/path/{path}[?version=V]
//
// The host is not used: references resolve against the worker's store
// whatever their host.
type ObjectRef struct {
	// Raw is the reference as given.
	Raw       string
	Org       string
	Workspace string
	// ObjectID is set for references by id, Path for references by path.
	ObjectID string
	Path     string
	// Version pins the version read ("" = latest).
	Version string
}

// uuidPattern matches a UUID string (8-4-4-4-12 hex digits).
const uuidPattern = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

var uuidRE = regexp.MustCompile(`^` + uuidPattern + `$`)

// objectRefPattern matches every reference that ParseObjectRef accepts (an
// unanchored search: it is what the request schemas ask of a reference).
const objectRefPattern = `/geoscience-object/orgs/` + uuidPattern + `/workspaces/` + uuidPattern +
	`/objects/(path/[^?#]|` + uuidPattern + `([?#]|$))`

// IsUUID reports whether s is a UUID string (8-4-4-4-12 hex digits).
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// ParseObjectRef parses an object reference URL (absolute, or a path
// starting with /geoscience-object/). The error says what is wrong.
func ParseObjectRef(raw string) (ObjectRef, error) {
	if strings.TrimSpace(raw) == "" {
		return ObjectRef{}, fmt.Errorf("an object reference URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ObjectRef{}, fmt.Errorf("not a URL: %v", err)
	}
	p := u.EscapedPath()
	i := strings.Index(p, "/geoscience-object/orgs/")
	if i < 0 {
		return ObjectRef{}, fmt.Errorf("not a geoscience object URL (want .../geoscience-object/orgs/{org}/workspaces/{ws}/objects/...)")
	}
	parts := strings.SplitN(p[i+len("/geoscience-object/orgs/"):], "/", 5)
	if len(parts) < 5 || parts[1] != "workspaces" || parts[3] != "objects" || parts[4] == "" {
		return ObjectRef{}, fmt.Errorf("not a geoscience object URL (want .../orgs/{org}/workspaces/{ws}/objects/{id} or .../objects/path/{path})")
	}
	ref := ObjectRef{Raw: raw, Org: parts[0], Workspace: parts[2], Version: u.Query().Get("version")}
	if !IsUUID(ref.Org) {
		return ObjectRef{}, fmt.Errorf("organisation id %q is not a UUID", ref.Org)
	}
	if !IsUUID(ref.Workspace) {
		return ObjectRef{}, fmt.Errorf("workspace id %q is not a UUID", ref.Workspace)
	}
	rest := parts[4]
	if strings.HasPrefix(rest, "path/") {
		path, err := url.PathUnescape(strings.TrimPrefix(rest, "path/"))
		if err != nil || path == "" {
			return ObjectRef{}, fmt.Errorf("invalid object path %q", rest)
		}
		ref.Path = path
		return ref, nil
	}
	if !IsUUID(rest) {
		return ObjectRef{}, fmt.Errorf("object id %q is not a UUID", rest)
	}
	ref.ObjectID = rest
	return ref, nil
}
