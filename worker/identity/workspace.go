package identity

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Workspace is a workspace record (without the caller's role, which
// Resolve gives).
type Workspace struct {
	Org                     string    `json:"org_id"`
	ID                      string    `json:"id"`
	Name                    string    `json:"name"`
	Description             string    `json:"description"`
	Labels                  []string  `json:"labels"`
	DefaultCoordinateSystem string    `json:"default_coordinate_system"`
	BoundingBox             *Polygon  `json:"bounding_box"`
	MLEnabled               bool      `json:"ml_enabled"`
	CreatedAt               time.Time `json:"created_at"`
	CreatedBy               UserRef   `json:"created_by"`
	UpdatedAt               time.Time `json:"updated_at"`
	UpdatedBy               UserRef   `json:"updated_by"`
	// DeletedAt and DeletedBy are set while the workspace is soft-deleted.
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	DeletedBy *UserRef   `json:"deleted_by,omitempty"`
}

// Polygon is a GeoJSON Polygon: a workspace's bounding box is one ring of
// five [lon, lat] positions, closed, counter-clockwise, an axis-aligned
// rectangle.
type Polygon struct {
	Type        string         `json:"type"`
	Coordinates [][][2]float64 `json:"coordinates"`
}

// WorkspaceInput holds the fields of a create or an update; a nil field is
// left as it is (on create: its default). Name is required on create.
type WorkspaceInput struct {
	Name                    *string
	Description             *string
	Labels                  []string // nil: unchanged; empty: no labels
	DefaultCoordinateSystem *string
	BoundingBox             *Polygon
	// ClearBoundingBox sets the bounding box to null.
	ClearBoundingBox bool
	MLEnabled        *bool
}

// State is a workspace's state for a caller.
type State int

// Workspace states.
const (
	// StateUnknown: no such workspace (404).
	StateUnknown State = iota
	// StateActive: the workspace exists.
	StateActive
	// StateDeleted: the workspace is soft-deleted (410).
	StateDeleted
)

// String names the state.
func (s State) String() string {
	switch s {
	case StateActive:
		return "active"
	case StateDeleted:
		return "deleted"
	}
	return "unknown"
}

func (w *Workspace) clone() Workspace {
	c := *w
	c.Labels = slices.Clone(w.Labels)
	if c.Labels == nil {
		c.Labels = []string{}
	}
	return c
}

func (w *Workspace) state() State {
	if w.DeletedAt != nil {
		return StateDeleted
	}
	return StateActive
}

// MaxNameLength is the longest workspace name, in characters.
const MaxNameLength = 60

var (
	epsgRE = regexp.MustCompile(`^EPSG:[0-9]{1,9}$`)
	wkt2RE = regexp.MustCompile(`^(GEODCRS|GEODETICCRS|GEOGCRS|GEOGRAPHICCRS|PROJCRS|PROJECTEDCRS|VERTCRS|VERTICALCRS|ENGCRS|ENGINEERINGCRS|COMPOUNDCRS|BOUNDCRS|DERIVEDPROJCRS|PARAMETRICCRS|TIMECRS)\s*\[`)
)

// validate checks the given fields of in; create requires the name.
func (in *WorkspaceInput) validate(create bool) error {
	var p params
	if in.Name == nil {
		if create {
			p.add("name", "required")
		}
	} else if n := utf8.RuneCountInString(*in.Name); n < 1 || n > MaxNameLength || strings.TrimSpace(*in.Name) == "" {
		p.add("name", "must be 1 to %d characters, not only spaces", MaxNameLength)
	}
	if in.Labels != nil {
		if len(in.Labels) > 20 {
			p.add("labels", "at most 20 labels, got %d", len(in.Labels))
		}
		for i, l := range in.Labels {
			if n := utf8.RuneCountInString(l); n < 1 || n > 100 {
				p.add(fmt.Sprintf("labels[%d]", i), "must be 1 to 100 characters")
			}
		}
	}
	if c := in.DefaultCoordinateSystem; c != nil && *c != "" && !epsgRE.MatchString(*c) && !wkt2RE.MatchString(strings.TrimSpace(*c)) {
		p.add("default_coordinate_system", "must be EPSG:<code> or a WKT2 coordinate reference system")
	}
	if in.BoundingBox != nil && in.ClearBoundingBox {
		p.add("bounding_box", "both set and cleared")
	}
	if b := in.BoundingBox; b != nil {
		if reason := b.check(); reason != "" {
			p.add("bounding_box", "%s", reason)
		}
	}
	return p.err()
}

// check returns why a bounding box is bad, or "".
func (b *Polygon) check() string {
	if b.Type != "Polygon" {
		return fmt.Sprintf("type %q, want Polygon", b.Type)
	}
	if len(b.Coordinates) != 1 || len(b.Coordinates[0]) != 5 {
		return "want one ring of 5 [lon, lat] positions"
	}
	r := b.Coordinates[0]
	for _, q := range r {
		if math.IsNaN(q[0]) || math.IsNaN(q[1]) || q[0] < -180 || q[0] > 180 || q[1] < -90 || q[1] > 90 {
			return "longitudes must be in [-180, 180] and latitudes in [-90, 90]"
		}
	}
	if r[0] != r[4] {
		return "the ring is not closed (first and last positions differ)"
	}
	for i := range 4 {
		a, c := r[i], r[i+1]
		if (a[0] == c[0]) == (a[1] == c[1]) {
			return "not an axis-aligned rectangle"
		}
	}
	var area float64
	for i := range 4 {
		area += r[i][0]*r[i+1][1] - r[i+1][0]*r[i][1]
	}
	if area <= 0 {
		return "the ring must be counter-clockwise"
	}
	return ""
}

func (in *WorkspaceInput) applyTo(w *Workspace) {
	if in.Name != nil {
		w.Name = *in.Name
	}
	if in.Description != nil {
		w.Description = *in.Description
	}
	if in.Labels != nil {
		w.Labels = slices.Clone(in.Labels)
	}
	if in.DefaultCoordinateSystem != nil {
		w.DefaultCoordinateSystem = *in.DefaultCoordinateSystem
	}
	if in.BoundingBox != nil {
		b := *in.BoundingBox
		b.Coordinates = [][][2]float64{slices.Clone(in.BoundingBox.Coordinates[0])}
		w.BoundingBox = &b
	}
	if in.ClearBoundingBox {
		w.BoundingBox = nil
	}
	if in.MLEnabled != nil {
		w.MLEnabled = *in.MLEnabled
	}
}

func lowerIDs(org, ws string) (string, string, error) {
	var p params
	if !isUUID(org) {
		p.add("org_id", "%q is not a UUID", org)
	}
	if !isUUID(ws) {
		p.add("workspace_id", "%q is not a UUID", ws)
	}
	return strings.ToLower(org), strings.ToLower(ws), p.err()
}

// ref is a principal's user as a record's actor.
func ref(p *Principal) UserRef {
	if p == nil {
		return UserRef{}
	}
	return p.User
}

// claimStale is how long a name claim whose workspace record was never
// written (its creator stopped half-way) holds the name.
const claimStale = time.Minute

// claimName reserves name in org for workspace id: ok false when another
// workspace holds it.
func (s *Store) claimName(ctx context.Context, org, name, id string) (ok bool, err error) {
	key := nameKey(org, name)
	for range maxRetries {
		s.v.mu.RLock()
		c, held := s.v.claims[key]
		var holder entry[wsRecord]
		if held {
			holder = s.v.workspaces[orgWS{org, c.rec.ID}]
		}
		s.v.mu.RUnlock()
		val := claim{ID: id, At: s.now()}
		if held && c.rec.ID != id {
			h := holder.rec
			live := h != nil && h.DeletedAt == nil && strings.EqualFold(h.Name, name)
			unfinished := h == nil && s.now().Sub(c.rec.At) < claimStale
			if live || unfinished {
				return false, nil
			}
		}
		if held && c.rec.ID == id {
			return true, nil
		}
		var rev uint64
		if held {
			rev = c.rev
		}
		done, err := s.put(ctx, key, val, rev)
		if err != nil || done {
			return done, err
		}
	}
	return false, fmt.Errorf("identity: claiming name %q: too many concurrent changes", name)
}

// releaseName drops workspace id's claim of name, if it still holds it.
func (s *Store) releaseName(ctx context.Context, org, name, id string) error {
	key := nameKey(org, name)
	s.v.mu.RLock()
	c, held := s.v.claims[key]
	s.v.mu.RUnlock()
	if !held || c.rec.ID != id {
		return nil
	}
	_, err := s.del(ctx, key, c.rev)
	return err
}

// claimFreeName claims name, else "name (1)", "name (2)"… (the base cut so
// the result fits MaxNameLength) and returns the name claimed.
func (s *Store) claimFreeName(ctx context.Context, org, name, id string) (string, error) {
	for n := 0; n < 10000; n++ {
		try := name
		if n > 0 {
			suffix := fmt.Sprintf(" (%d)", n)
			base := []rune(name)
			if max := MaxNameLength - len(suffix); len(base) > max {
				base = base[:max]
			}
			try = string(base) + suffix
		}
		ok, err := s.claimName(ctx, org, try, id)
		if err != nil {
			return "", err
		}
		if ok {
			return try, nil
		}
	}
	return "", errorf(KindNameConflict, "no free name like %q", name)
}

// CreateWorkspace creates a workspace in org named and described by in;
// the creator by, when a stored user, becomes its owner (a static principal
// gets no grant: its roles are its configured ones). A name held by
// another workspace of org that is not deleted (case-insensitively) is
// ErrNameConflict.
func (s *Store) CreateWorkspace(ctx context.Context, by *Principal, org string, in WorkspaceInput) (Workspace, error) {
	id := uuid.NewString()
	org, _, err := lowerIDs(org, id)
	if err != nil {
		return Workspace{}, err
	}
	if err := in.validate(true); err != nil {
		return Workspace{}, err
	}
	if err := s.sync(ctx); err != nil {
		return Workspace{}, err
	}
	ok, err := s.claimName(ctx, org, *in.Name, id)
	if err != nil {
		return Workspace{}, err
	}
	if !ok {
		return Workspace{}, errorf(KindNameConflict, "a workspace of the organisation is named %q", *in.Name)
	}
	now := s.now()
	rec := &wsRecord{Workspace: Workspace{Org: org, ID: id, Labels: []string{}, CreatedAt: now, CreatedBy: ref(by), UpdatedAt: now, UpdatedBy: ref(by)}, Grants: map[string]Role{}}
	in.applyTo(&rec.Workspace)
	if by != nil && !by.Static() {
		rec.Grants[strings.ToLower(by.User.ID)] = RoleOwner
	}
	if _, err := s.put(ctx, wsKey(org, id), rec, 0); err != nil {
		_ = s.releaseName(ctx, org, *in.Name, id)
		return Workspace{}, err
	}
	return rec.clone(), nil
}

// register writes a workspace record for an existing id, named
// "workspace-<first 8 hex>" (renamed "… (n)" on a clash), with no grants.
// created is false when the workspace was there already.
func (s *Store) register(ctx context.Context, by UserRef, org, id string) (created bool, err error) {
	name, err := s.claimFreeName(ctx, org, "workspace-"+id[:8], id)
	if err != nil {
		return false, err
	}
	now := s.now()
	rec := &wsRecord{Workspace: Workspace{Org: org, ID: id, Name: name, Labels: []string{}, CreatedAt: now, CreatedBy: by, UpdatedAt: now, UpdatedBy: by}, Grants: map[string]Role{}}
	ok, err := s.put(ctx, wsKey(org, id), rec, 0)
	if err != nil {
		return false, err
	}
	if !ok {
		// Registered concurrently: drop a claim of ours the other writer
		// did not make its name.
		s.v.mu.RLock()
		e := s.v.workspaces[orgWS{org, id}]
		s.v.mu.RUnlock()
		if e.rec != nil && !strings.EqualFold(e.rec.Name, name) {
			return false, s.releaseName(ctx, org, name, id)
		}
	}
	return ok, nil
}

// workspace returns a workspace's record and revision (nil if unknown).
func (s *Store) workspace(org, id string) entry[wsRecord] {
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	return s.v.workspaces[orgWS{org, id}]
}

// Workspace returns a workspace and its state (StateUnknown: the returned
// Workspace is zero).
func (s *Store) Workspace(org, id string) (Workspace, State) {
	e := s.workspace(strings.ToLower(org), strings.ToLower(id))
	if e.rec == nil {
		return Workspace{}, StateUnknown
	}
	return e.rec.clone(), e.rec.state()
}

// Workspaces returns the workspaces of org sorted by name, the deleted ones
// too when deleted is true.
func (s *Store) Workspaces(org string, deleted bool) []Workspace {
	org = strings.ToLower(org)
	var out []Workspace
	s.v.mu.RLock()
	for k, e := range s.v.workspaces {
		if k.org == org && (deleted || e.rec.DeletedAt == nil) {
			out = append(out, e.rec.clone())
		}
	}
	s.v.mu.RUnlock()
	slices.SortFunc(out, func(a, b Workspace) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// updateWS applies change to a copy of the workspace's record and writes it
// at the revision read, retrying on a concurrent change. change returns an
// error to abort.
func (s *Store) updateWS(ctx context.Context, org, id string, change func(r *wsRecord) error) (*wsRecord, error) {
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	for range maxRetries {
		e := s.workspace(org, id)
		if e.rec == nil {
			return nil, errorf(KindNotFound, "workspace %s not found", id)
		}
		r := *e.rec
		r.Workspace = e.rec.clone()
		r.Grants = make(map[string]Role, len(e.rec.Grants))
		for u, g := range e.rec.Grants {
			r.Grants[u] = g
		}
		if err := change(&r); err != nil {
			return nil, err
		}
		ok, err := s.put(ctx, wsKey(org, id), &r, e.rev)
		if err != nil {
			return nil, err
		}
		if ok {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("identity: workspace %s: too many concurrent changes", id)
}

// UpdateWorkspace changes the given fields of an active workspace (a
// deleted one is ErrGone); a new name must be free (ErrNameConflict).
func (s *Store) UpdateWorkspace(ctx context.Context, by *Principal, org, id string, in WorkspaceInput) (Workspace, error) {
	org, id, err := lowerIDs(org, id)
	if err != nil {
		return Workspace{}, err
	}
	if err := in.validate(false); err != nil {
		return Workspace{}, err
	}
	if err := s.sync(ctx); err != nil {
		return Workspace{}, err
	}
	var oldName string
	claimed := ""
	if in.Name != nil {
		e := s.workspace(org, id)
		if e.rec == nil {
			return Workspace{}, errorf(KindNotFound, "workspace %s not found", id)
		}
		oldName = e.rec.Name
		if !strings.EqualFold(oldName, *in.Name) {
			ok, err := s.claimName(ctx, org, *in.Name, id)
			if err != nil {
				return Workspace{}, err
			}
			if !ok {
				return Workspace{}, errorf(KindNameConflict, "a workspace of the organisation is named %q", *in.Name)
			}
			claimed = *in.Name
		}
	}
	r, err := s.updateWS(ctx, org, id, func(r *wsRecord) error {
		if r.DeletedAt != nil {
			return errorf(KindGone, "workspace %s is deleted", id)
		}
		oldName = r.Name
		in.applyTo(&r.Workspace)
		r.UpdatedAt, r.UpdatedBy = s.now(), ref(by)
		return nil
	})
	if err != nil {
		if claimed != "" {
			_ = s.releaseName(ctx, org, claimed, id)
		}
		return Workspace{}, err
	}
	if claimed != "" && !strings.EqualFold(oldName, claimed) {
		if err := s.releaseName(ctx, org, oldName, id); err != nil {
			return Workspace{}, err
		}
	}
	return r.clone(), nil
}

// DeleteWorkspace soft-deletes an active workspace (ErrGone if it is
// deleted already) and frees its name.
func (s *Store) DeleteWorkspace(ctx context.Context, by *Principal, org, id string) error {
	org, id, err := lowerIDs(org, id)
	if err != nil {
		return err
	}
	r, err := s.updateWS(ctx, org, id, func(r *wsRecord) error {
		if r.DeletedAt != nil {
			return errorf(KindGone, "workspace %s is deleted", id)
		}
		now, u := s.now(), ref(by)
		r.DeletedAt, r.DeletedBy = &now, &u
		r.UpdatedAt, r.UpdatedBy = now, u
		return nil
	})
	if err != nil {
		return err
	}
	return s.releaseName(ctx, org, r.Name, id)
}

// RestoreWorkspace restores a soft-deleted workspace: ErrActive when it is
// not deleted; when another workspace took its name meanwhile it is renamed
// "<name> (1)", "<name> (2)"… as the first free one.
func (s *Store) RestoreWorkspace(ctx context.Context, by *Principal, org, id string) (Workspace, error) {
	org, id, err := lowerIDs(org, id)
	if err != nil {
		return Workspace{}, err
	}
	if err := s.sync(ctx); err != nil {
		return Workspace{}, err
	}
	e := s.workspace(org, id)
	if e.rec == nil {
		return Workspace{}, errorf(KindNotFound, "workspace %s not found", id)
	}
	if e.rec.DeletedAt == nil {
		return Workspace{}, errorf(KindActive, "workspace %s is not deleted", id)
	}
	name, err := s.claimFreeName(ctx, org, e.rec.Name, id)
	if err != nil {
		return Workspace{}, err
	}
	r, err := s.updateWS(ctx, org, id, func(r *wsRecord) error {
		if r.DeletedAt == nil {
			return errorf(KindActive, "workspace %s is not deleted", id)
		}
		r.DeletedAt, r.DeletedBy = nil, nil
		r.Name = name
		r.UpdatedAt, r.UpdatedBy = s.now(), ref(by)
		return nil
	})
	if err != nil {
		_ = s.releaseName(ctx, org, name, id)
		return Workspace{}, err
	}
	return r.clone(), nil
}
