package identity

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// authFixture fills a store's view with users users, one token each, and
// grants grants spread over workspaces of 100 users each, and returns the
// tokens' secrets with one workspace each token's user has a role in.
func authFixture(b *testing.B, users, grants int) (*Store, []string, []string) {
	ns := startServer(b, b.TempDir())
	s := open(b, ns, Config{})
	const perWS = 100
	nws := grants / perWS
	now := time.Now().UTC()
	secrets := make([]string, users)
	wsOf := make([]string, users)
	userIDs := make([]string, users)
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	for i := range users {
		id := uuid.NewString()
		userIDs[i] = id
		email := fmt.Sprintf("u%d@mine.example", i)
		s.v.users[id] = entry[userRecord]{&userRecord{ID: id, Email: email, Orgs: map[string]InstanceRole{org1: InstanceMember}}, 1}
		s.v.byEmail[email] = id
		secrets[i] = fmt.Sprintf("gst_bench-%d", i)
		d := sha256.Sum256([]byte(secrets[i]))
		tokID := uuid.NewString()
		// Used a moment ago: the steady state between two flushes.
		s.v.tokens[d] = entry[tokenRecord]{&tokenRecord{ID: tokID, UserID: id, Name: "bench", CreatedAt: now, LastUsedAt: &now}, 1}
		s.v.tokenByID[tokID] = d
	}
	n := 0
	for w := range nws {
		id := uuid.NewString()
		g := make(map[string]Role, perWS)
		for j := range perWS {
			u := (w*perWS + j*7919) % users
			g[userIDs[u]] = []Role{RoleViewer, RoleEditor, RoleOwner}[j%3]
			wsOf[u] = id
			n++
		}
		s.v.workspaces[orgWS{org1, id}] = entry[wsRecord]{&wsRecord{Workspace: Workspace{Org: org1, ID: id, Name: id}, Grants: g}, 1}
	}
	require.Equal(b, grants, n)
	for i, w := range wsOf {
		require.NotEmpty(b, w, "user %d has no grant", i)
	}
	return s, secrets, wsOf
}

// BenchmarkAuthLookup (auth-lookup) measures a request's identity work with
// 10,000 users and 100,000 grants: token digest → principal → role in a
// workspace, all from the in-memory view.
func BenchmarkAuthLookup(b *testing.B) {
	s, secrets, wsOf := authFixture(b, 10000, 100000)
	ctx := testCtx(b)
	// Check the result first.
	p, err := s.Authenticate(secrets[0])
	require.NoError(b, err)
	res, err := s.Resolve(ctx, p, org1, wsOf[0])
	require.NoError(b, err)
	require.True(b, res.Role.Valid())
	require.Equal(b, StateActive, res.State)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		k := i % len(secrets)
		i++
		p, err := s.Authenticate(secrets[k])
		if err != nil {
			b.Fatal(err)
		}
		res, _ := s.Resolve(ctx, p, org1, wsOf[k])
		if res.Role == None {
			b.Fatal("no role")
		}
	}
}
