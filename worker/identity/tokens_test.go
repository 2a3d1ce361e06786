package identity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokensExpiryRevokeLastUsed(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	ana, _ := f.user(t, "ana@mine.example", InstanceMember)

	exp := f.clock.Now().Add(time.Hour)
	tok, err := f.s.CreateToken(ctx, ana.ID, "laptop", &exp)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.Secret, TokenPrefix))
	assert.Len(t, tok.Secret, len(TokenPrefix)+43, "32 bytes in unpadded base64url")
	assert.Equal(t, "laptop", tok.Name)
	p, err := f.s.Authenticate(tok.Secret)
	require.NoError(t, err)
	assert.Equal(t, UserRef{ID: ana.ID, Name: ana.FullName, Email: ana.Email}, p.User)
	assert.Equal(t, tok.ID, p.TokenID)
	assert.False(t, p.Static())

	// last_used_at: recorded in memory, written by a flush, at most once per TouchEvery.
	var listed Token
	for _, x := range f.s.Tokens(ana.ID) {
		if x.ID == tok.ID {
			listed = x
		}
	}
	require.NotNil(t, listed.LastUsedAt)
	assert.Equal(t, f.clock.Now(), *listed.LastUsedAt)
	rev := f.s.Revision()
	require.NoError(t, f.s.FlushLastUsed(ctx))
	assert.Greater(t, f.s.Revision(), rev, "the flush wrote the token")
	rev = f.s.Revision()
	f.clock.Add(10 * time.Second)
	_, err = f.s.Authenticate(tok.Secret)
	require.NoError(t, err)
	require.NoError(t, f.s.FlushLastUsed(ctx))
	assert.Equal(t, rev, f.s.Revision(), "no write for a use within TouchEvery")
	f.clock.Add(time.Minute)
	_, err = f.s.Authenticate(tok.Secret)
	require.NoError(t, err)
	require.NoError(t, f.s.FlushLastUsed(ctx))
	assert.Greater(t, f.s.Revision(), rev)
	for _, x := range f.s.Tokens(ana.ID) {
		if x.ID == tok.ID {
			require.NotNil(t, x.LastUsedAt)
			assert.Equal(t, f.clock.Now(), *x.LastUsedAt)
		}
	}

	// Expiry by the injected clock.
	f.clock.Add(time.Hour)
	_, err = f.s.Authenticate(tok.Secret)
	require.ErrorIs(t, err, ErrInvalidToken)
	assert.Equal(t, 401, err.(*Error).Kind.Status())
	_, err = f.s.CreateToken(ctx, ana.ID, "past", &exp)
	require.ErrorIs(t, err, ErrValidation)
	_, err = f.s.CreateToken(ctx, ana.ID, "", nil)
	require.ErrorIs(t, err, ErrValidation)
	_, err = f.s.CreateToken(ctx, "7c9e6679-7425-40de-944b-e07fc1f90ae7", "x", nil)
	require.ErrorIs(t, err, ErrNotFound)

	// Revoke.
	tok2, err := f.s.CreateToken(ctx, ana.ID, "ci", nil)
	require.NoError(t, err)
	_, err = f.s.Authenticate(tok2.Secret)
	require.NoError(t, err)
	bob, _ := f.user(t, "bob@mine.example", InstanceMember)
	require.ErrorIs(t, f.s.RevokeToken(ctx, bob.ID, tok2.ID), ErrNotFound, "another user's token")
	require.NoError(t, f.s.RevokeToken(ctx, ana.ID, tok2.ID))
	_, err = f.s.Authenticate(tok2.Secret)
	require.ErrorIs(t, err, ErrInvalidToken)
	require.ErrorIs(t, f.s.RevokeToken(ctx, ana.ID, tok2.ID), ErrNotFound)
}

func TestRemoveUserRevokesTokensAndGrants(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	ana, pa := f.user(t, "ana@mine.example", InstanceMember)
	bob, pb := f.user(t, "bob@mine.example", InstanceMember)
	w, err := f.s.CreateWorkspace(ctx, pb, org1, WorkspaceInput{Name: ptr("W")})
	require.NoError(t, err)
	require.NoError(t, f.s.SetGrant(ctx, pb, org1, w.ID, ana.ID, RoleEditor))
	solo, err := f.s.CreateWorkspace(ctx, pa, org1, WorkspaceInput{Name: ptr("Solo")})
	require.NoError(t, err)
	tok, err := f.s.CreateToken(ctx, ana.ID, "second", nil)
	require.NoError(t, err)

	// Removing a user is an admin's act: even the last owner of Solo goes.
	require.NoError(t, f.s.RemoveUser(ctx, f.admin, org1, ana.ID))
	_, err = f.s.Authenticate(tok.Secret)
	require.ErrorIs(t, err, ErrInvalidToken)
	assert.Empty(t, f.s.Tokens(ana.ID))
	_, ok := f.s.User(ana.ID)
	assert.False(t, ok)
	assert.Equal(t, Resolution{State: StateActive}, f.s.RoleOfUser(ana.ID, org1, w.ID))
	assert.Equal(t, Resolution{State: StateActive}, f.s.RoleOfUser(ana.ID, org1, solo.ID))
	assert.Len(t, f.s.Grants(org1, w.ID), 1)
	assert.Empty(t, f.s.Grants(org1, solo.ID))
	res, _ := f.s.Resolve(ctx, pa, org1, w.ID)
	assert.Equal(t, None, res.Role, "a principal authenticated before the removal has no role after it")
	require.ErrorIs(t, f.s.RemoveUser(ctx, f.admin, org1, ana.ID), ErrNotFound)

	// The email is free again.
	again, err := f.s.CreateUser(ctx, f.admin, org1, "ana@mine.example", "Ana", "")
	require.NoError(t, err)
	assert.NotEqual(t, ana.ID, again.ID)

	// A user of two orgs removed from one keeps the other and its tokens.
	_, err = f.s.CreateUser(ctx, f.admin, org2, bob.Email, "", InstanceAdmin)
	require.NoError(t, err)
	require.NoError(t, f.s.RemoveUser(ctx, f.admin, org1, bob.ID))
	p, err := f.s.Authenticate(tokenOf(t, f, pb))
	require.NoError(t, err)
	r, ok := f.s.InstanceRoleOf(p, org2)
	assert.True(t, ok)
	assert.Equal(t, InstanceAdmin, r)
	_, ok = f.s.InstanceRoleOf(p, org1)
	assert.False(t, ok)
}

// tokenOf creates another token for p's user and returns its secret.
func tokenOf(t *testing.T, f fixture, p *Principal) string {
	tok, err := f.s.CreateToken(testCtx(t), p.User.ID, "again", nil)
	require.NoError(t, err)
	return tok.Secret
}

func TestUsersAndInvitations(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	inv, err := f.s.Invite(ctx, f.admin, org1, "cho@mine.example", InstanceAdmin)
	require.NoError(t, err)
	assert.Equal(t, "pending", inv.Status(f.clock.Now()))
	assert.Equal(t, f.clock.Now().Add(7*24*time.Hour), inv.ExpiresAt)
	assert.Equal(t, adminUser.Email, inv.InvitedByEmail)
	assert.Equal(t, []Invitation{inv}, f.s.Invitations(org1))
	assert.Empty(t, f.s.Invitations(org2))

	// Creating the user consumes the invitation and takes its role.
	u, err := f.s.CreateUser(ctx, f.admin, org1, "cho@mine.example", "Cho", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]InstanceRole{org1: InstanceAdmin}, u.Orgs)
	assert.Empty(t, f.s.Invitations(org1))
	_, err = f.s.CreateUser(ctx, f.admin, org1, "CHO@mine.example", "", "")
	require.ErrorIs(t, err, ErrUserExists)
	_, err = f.s.Invite(ctx, f.admin, org1, "cho@mine.example", "")
	require.ErrorIs(t, err, ErrUserExists)
	got, ok := f.s.UserByEmail("Cho@Mine.example")
	require.True(t, ok)
	assert.Equal(t, u.ID, got.ID)

	u2, err := f.s.SetUserRole(ctx, org1, u.ID, InstanceMember)
	require.NoError(t, err)
	assert.Equal(t, InstanceMember, u2.Orgs[org1])
	_, err = f.s.SetUserRole(ctx, org2, u.ID, InstanceMember)
	require.ErrorIs(t, err, ErrNotFound)

	// A second invitation replaces the first; invitations expire; delete.
	a, err := f.s.Invite(ctx, f.admin, org1, "dan@mine.example", "")
	require.NoError(t, err)
	b, err := f.s.Invite(ctx, f.admin, org1, "dan@mine.example", InstanceMember)
	require.NoError(t, err)
	assert.Equal(t, []Invitation{b}, f.s.Invitations(org1))
	require.ErrorIs(t, f.s.DeleteInvitation(ctx, org1, a.ID), ErrNotFound)
	f.clock.Add(8 * 24 * time.Hour)
	assert.Equal(t, "expired", f.s.Invitations(org1)[0].Status(f.clock.Now()))
	require.NoError(t, f.s.DeleteInvitation(ctx, org1, b.ID))
	assert.Empty(t, f.s.Invitations(org1))

	_, err = f.s.CreateUser(ctx, f.admin, org1, "not an email", "", "")
	require.ErrorIs(t, err, ErrValidation)
	_, err = f.s.CreateUser(ctx, f.admin, org1, "x@mine.example", "", "root")
	require.ErrorIs(t, err, ErrValidation)
	assert.Len(t, f.s.Users(org1), 1)
}

// TestTwoViews runs two stores on one server, as two api workers: a new
// token, a grant and a revoke made through one take effect on the other
// within a second.
func TestTwoViews(t *testing.T) {
	ns := startServer(t, t.TempDir())
	static := []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}
	a := open(t, ns, Config{Static: static})
	b := open(t, ns, Config{Static: static})
	ctx := testCtx(t)
	admin, err := a.Authenticate(adminToken)
	require.NoError(t, err)

	u, err := a.CreateUser(ctx, admin, org1, "ana@mine.example", "Ana", "")
	require.NoError(t, err)
	w, err := a.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: ptr("Shared")})
	require.NoError(t, err)
	tok, err := a.CreateToken(ctx, u.ID, "laptop", nil)
	require.NoError(t, err)
	var pb *Principal
	d := eventually(t, b, time.Second, func() bool {
		var err error
		pb, err = b.Authenticate(tok.Secret)
		return err == nil
	})
	t.Logf("new token seen by the other view after %s", d)

	require.NoError(t, a.SetGrant(ctx, admin, org1, w.ID, u.ID, RoleEditor))
	d = eventually(t, b, time.Second, func() bool {
		res, err := b.Resolve(ctx, pb, org1, w.ID)
		return err == nil && res.Role == RoleEditor
	})
	t.Logf("grant seen after %s", d)

	require.NoError(t, a.RemoveGrant(ctx, admin, org1, w.ID, u.ID))
	eventually(t, b, time.Second, func() bool { return b.RoleOfUser(u.ID, org1, w.ID).Role == None })

	require.NoError(t, a.RevokeToken(ctx, u.ID, tok.ID))
	d = eventually(t, b, time.Second, func() bool {
		_, err := b.Authenticate(tok.Secret)
		return err != nil
	})
	t.Logf("revoke seen after %s", d)

	// A rule spanning views: the name taken through a is a conflict on b.
	_, err = b.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: ptr("SHARED")})
	require.ErrorIs(t, err, ErrNameConflict)
}

// TestRestart closes everything, restarts the server over the same store
// directory, reopens and finds every record.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	ns := startServer(t, dir)
	clock := newClock()
	static := []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}
	s, err := Open(testCtx(t), connect(t, ns), Config{Static: static, Now: clock.Now})
	require.NoError(t, err)
	ctx := testCtx(t)
	admin, err := s.Authenticate(adminToken)
	require.NoError(t, err)
	u, err := s.CreateUser(ctx, admin, org1, "ana@mine.example", "Ana", "")
	require.NoError(t, err)
	w, err := s.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: ptr("Kept"), Labels: []string{"a"}})
	require.NoError(t, err)
	require.NoError(t, s.SetGrant(ctx, admin, org1, w.ID, u.ID, RoleOwner))
	gone, err := s.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: ptr("Gone")})
	require.NoError(t, err)
	require.NoError(t, s.DeleteWorkspace(ctx, admin, org1, gone.ID))
	tok, err := s.CreateToken(ctx, u.ID, "laptop", nil)
	require.NoError(t, err)
	_, err = s.Authenticate(tok.Secret)
	require.NoError(t, err)
	inv, err := s.Invite(ctx, admin, org1, "bo@mine.example", "")
	require.NoError(t, err)
	_, err = s.RegisterExisting(ctx, map[string][]string{org1: {ws1}})
	require.NoError(t, err)
	s.Close() // flushes last_used_at
	ns.Shutdown()
	ns.WaitForShutdown()

	ns = startServer(t, dir)
	s = open(t, ns, Config{Static: static, Now: clock.Now})
	p, err := s.Authenticate(tok.Secret)
	require.NoError(t, err)
	res, err := s.Resolve(ctx, p, org1, w.ID)
	require.NoError(t, err)
	assert.Equal(t, Resolution{Role: RoleOwner, State: StateActive}, res)
	got, st := s.Workspace(org1, w.ID)
	assert.Equal(t, StateActive, st)
	assert.Equal(t, w.Labels, got.Labels)
	_, st = s.Workspace(org1, gone.ID)
	assert.Equal(t, StateDeleted, st)
	_, st = s.Workspace(org1, ws1)
	assert.Equal(t, StateActive, st)
	assert.False(t, s.NeedsRegistration())
	assert.Equal(t, []Invitation{inv}, s.Invitations(org1))
	toks := s.Tokens(u.ID)
	require.Len(t, toks, 1)
	require.NotNil(t, toks[0].LastUsedAt, "the last use was flushed at Close")
	_, err = s.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: ptr("kept")})
	require.ErrorIs(t, err, ErrNameConflict, "name claims survive too")
}

// TestTokenSecretNotStored searches the server's JetStream files and every
// value of the bucket for a created token's secret: only its digest is
// there.
func TestTokenSecretNotStored(t *testing.T) {
	dir := t.TempDir()
	ns := startServer(t, dir)
	f := fixture{clock: newClock()}
	f.s = open(t, ns, Config{Now: f.clock.Now, Static: []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}})
	var err error
	f.admin, err = f.s.Authenticate(adminToken)
	require.NoError(t, err)
	ana, _ := f.user(t, "ana@mine.example", InstanceMember)
	ctx := testCtx(t)
	tok, err := f.s.CreateToken(ctx, ana.ID, "laptop", nil)
	require.NoError(t, err)
	_, err = f.s.Authenticate(tok.Secret)
	require.NoError(t, err)
	require.NoError(t, f.s.FlushLastUsed(ctx))
	digest := sha256.Sum256([]byte(tok.Secret))
	digestHex := hex.EncodeToString(digest[:])
	secretBody := strings.TrimPrefix(tok.Secret, TokenPrefix)
	needles := [][]byte{[]byte(tok.Secret), []byte(secretBody), []byte(secretBody[:20])}

	// Every value of the bucket.
	keys, err := f.s.kv.ListKeys(ctx)
	require.NoError(t, err)
	nkeys := 0
	for k := range keys.Keys() {
		nkeys++
		e, err := f.s.kv.Get(ctx, k)
		require.NoError(t, err)
		for _, n := range needles {
			assert.False(t, bytes.Contains(e.Value(), n) || strings.Contains(k, string(n)), "the secret is in %s", k)
		}
	}
	assert.Greater(t, nkeys, 3)

	// Every file of the server's store directory; the digest, as a key,
	// is found there (the search does read the files).
	ns.Shutdown()
	ns.WaitForShutdown()
	sawDigest := false
	nfiles := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nfiles++
		for _, n := range needles {
			assert.False(t, bytes.Contains(b, n), "the secret is in %s", path)
		}
		sawDigest = sawDigest || bytes.Contains(b, []byte(digestHex))
		return nil
	}))
	assert.Greater(t, nfiles, 0)
	assert.True(t, sawDigest, "the token's digest is on disk (the search works)")
}

// TestLastUsedFlushedInBackground: a use on one api worker reaches the
// stored token, seen by another, through the background flush alone.
func TestLastUsedFlushedInBackground(t *testing.T) {
	ns := startServer(t, t.TempDir())
	static := []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}
	a := open(t, ns, Config{Static: static, TouchEvery: 20 * time.Millisecond})
	b := open(t, ns, Config{Static: static})
	ctx := testCtx(t)
	admin, err := a.Authenticate(adminToken)
	require.NoError(t, err)
	u, err := a.CreateUser(ctx, admin, org1, "ana@mine.example", "Ana", "")
	require.NoError(t, err)
	tok, err := a.CreateToken(ctx, u.ID, "laptop", nil)
	require.NoError(t, err)
	require.NoError(t, b.sync(ctx))
	require.Nil(t, b.Tokens(u.ID)[0].LastUsedAt)
	_, err = a.Authenticate(tok.Secret)
	require.NoError(t, err)
	eventually(t, b, 5*time.Second, func() bool { return b.Tokens(u.ID)[0].LastUsedAt != nil })
}
