package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkspaceCreateConflictUpdate(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	ana, pa := f.user(t, "ana@mine.example", InstanceMember)

	w, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Pit A"), Labels: []string{"gold"}, DefaultCoordinateSystem: ptr("EPSG:32750")})
	require.NoError(t, err)
	assert.Equal(t, "Pit A", w.Name)
	assert.Equal(t, ana.ID, w.CreatedBy.ID)
	res, err := f.s.Resolve(ctx, pa, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateActive}, res, "the creator owns the workspace")

	// Case-insensitive name conflict in the same org, none in another org.
	_, err = f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("pit a")})
	require.ErrorIs(t, err, ErrNameConflict)
	assert.Equal(t, "workspace-service/name-conflict", err.(*Error).Kind.ProblemType())
	assert.Equal(t, 409, err.(*Error).Kind.Status())
	_, err = f.s.CreateWorkspace(ctx, f.admin, org2, WorkspaceInput{Name: ptr("Pit A")})
	require.NoError(t, err)

	// Renaming frees the old name and takes the new one.
	other, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Pit B")})
	require.NoError(t, err)
	_, err = f.s.UpdateWorkspace(ctx, pa, org1, other.ID, WorkspaceInput{Name: ptr("PIT A")})
	require.ErrorIs(t, err, ErrNameConflict)
	got, err := f.s.UpdateWorkspace(ctx, pa, org1, w.ID, WorkspaceInput{Name: ptr("Pit C"), Description: ptr("the big one")})
	require.NoError(t, err)
	assert.Equal(t, "Pit C", got.Name)
	assert.Equal(t, "the big one", got.Description)
	assert.Equal(t, []string{"gold"}, got.Labels, "unchanged fields stay")
	_, err = f.s.UpdateWorkspace(ctx, pa, org1, other.ID, WorkspaceInput{Name: ptr("pit a")})
	require.NoError(t, err, "the old name is free after the rename")
	_, err = f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Pit B")})
	require.NoError(t, err)
	// A rename that only changes case keeps the workspace's own claim.
	_, err = f.s.UpdateWorkspace(ctx, pa, org1, w.ID, WorkspaceInput{Name: ptr("PIT C")})
	require.NoError(t, err)

	names := []string{}
	for _, x := range f.s.Workspaces(org1, false) {
		names = append(names, x.Name)
	}
	assert.Equal(t, []string{"pit a", "Pit B", "PIT C"}, names)
}

func TestWorkspaceValidation(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	bad := &Polygon{Type: "Polygon", Coordinates: [][][2]float64{{{0, 0}, {0, 1}, {1, 1}, {1, 0}, {0, 0}}}} // clockwise
	_, err := f.s.CreateWorkspace(ctx, f.admin, org1, WorkspaceInput{
		Name: ptr(strings.Repeat("x", 61)), Labels: []string{""}, DefaultCoordinateSystem: ptr("UTM 50"), BoundingBox: bad,
	})
	var e *Error
	require.True(t, errors.As(err, &e))
	require.ErrorIs(t, err, ErrValidation)
	assert.Equal(t, "workspace-service/validation", e.Kind.ProblemType())
	var names []string
	for _, p := range e.Params {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"name", "labels[0]", "default_coordinate_system", "bounding_box"}, names)
	_, err = f.s.CreateWorkspace(ctx, f.admin, org1, WorkspaceInput{})
	require.ErrorIs(t, err, ErrValidation, "the name is required")

	good := &Polygon{Type: "Polygon", Coordinates: [][][2]float64{{{115, -32}, {116, -32}, {116, -31}, {115, -31}, {115, -32}}}}
	w, err := f.s.CreateWorkspace(ctx, f.admin, org1, WorkspaceInput{Name: ptr("ok"), BoundingBox: good, DefaultCoordinateSystem: ptr(`PROJCRS["GDA2020 / MGA zone 50", BASEGEOGCRS["GDA2020"]]`)})
	require.NoError(t, err)
	require.NotNil(t, w.BoundingBox)
	w, err = f.s.UpdateWorkspace(ctx, f.admin, org1, w.ID, WorkspaceInput{ClearBoundingBox: true})
	require.NoError(t, err)
	assert.Nil(t, w.BoundingBox)
	_, err = f.s.UpdateWorkspace(ctx, f.admin, org1, "not-a-uuid", WorkspaceInput{})
	require.ErrorIs(t, err, ErrValidation)
}

func TestWorkspaceSoftDeleteRestore(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	_, pa := f.user(t, "ana@mine.example", InstanceMember)
	w, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Drillholes")})
	require.NoError(t, err)

	_, err = f.s.RestoreWorkspace(ctx, pa, org1, w.ID)
	require.ErrorIs(t, err, ErrActive, "restoring an active workspace")
	assert.Equal(t, 303, err.(*Error).Kind.Status())

	require.NoError(t, f.s.DeleteWorkspace(ctx, pa, org1, w.ID))
	got, st := f.s.Workspace(org1, w.ID)
	assert.Equal(t, StateDeleted, st)
	require.NotNil(t, got.DeletedAt)
	assert.Equal(t, pa.User.ID, got.DeletedBy.ID)
	res, err := f.s.Resolve(ctx, pa, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateDeleted}, res, "a deleted workspace resolves as deleted (410), the role kept for restore")
	require.ErrorIs(t, f.s.DeleteWorkspace(ctx, pa, org1, w.ID), ErrGone)
	_, err = f.s.UpdateWorkspace(ctx, pa, org1, w.ID, WorkspaceInput{Description: ptr("x")})
	require.ErrorIs(t, err, ErrGone)
	assert.Len(t, f.s.Workspaces(org1, false), 0)
	assert.Len(t, f.s.Workspaces(org1, true), 1)

	// The name is free while deleted; restoring renames "<name> (1)", then "(2)".
	taker, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("drillholes")})
	require.NoError(t, err)
	back, err := f.s.RestoreWorkspace(ctx, pa, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, "Drillholes (1)", back.Name)
	assert.Nil(t, back.DeletedAt)
	_, st = f.s.Workspace(org1, w.ID)
	assert.Equal(t, StateActive, st)

	require.NoError(t, f.s.DeleteWorkspace(ctx, pa, org1, taker.ID))
	_, err = f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Drillholes")})
	require.NoError(t, err)
	back, err = f.s.RestoreWorkspace(ctx, pa, org1, taker.ID)
	require.NoError(t, err)
	assert.Equal(t, "drillholes (2)", back.Name)

	// A long name is cut to fit with its suffix.
	long := strings.Repeat("é", MaxNameLength)
	l, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: &long})
	require.NoError(t, err)
	require.NoError(t, f.s.DeleteWorkspace(ctx, pa, org1, l.ID))
	_, err = f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: &long})
	require.NoError(t, err)
	back, err = f.s.RestoreWorkspace(ctx, pa, org1, l.ID)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("é", MaxNameLength-4)+" (1)", back.Name)

	_, err = f.s.RestoreWorkspace(ctx, pa, org1, ws2)
	require.ErrorIs(t, err, ErrNotFound)
}
