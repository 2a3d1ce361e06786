package identity

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentRules races two api workers on the rules that span writers:
// the same new name, and the demotion of each of the two owners.
func TestConcurrentRules(t *testing.T) {
	ns := startServer(t, t.TempDir())
	static := []Static{{Token: adminToken, User: adminUser, Orgs: map[string]map[string]Role{org1: {Any: RoleOwner}}}}
	a := open(t, ns, Config{Static: static})
	b := open(t, ns, Config{Static: static})
	ctx := testCtx(t)
	admin, err := a.Authenticate(adminToken)
	require.NoError(t, err)

	race := func(fa, fb func(ctx context.Context) error) [2]error {
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, f := range []func(context.Context) error{fa, fb} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = f(ctx)
			}()
		}
		close(start)
		wg.Wait()
		return errs
	}
	oneOf := func(errs [2]error, want error) {
		t.Helper()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				require.ErrorIs(t, err, want)
			}
		}
		assert.Equal(t, 1, ok, "exactly one of the two succeeds: %v", errs)
	}

	for range 5 {
		name := "Race " + randomSuffix()
		create := func(s *Store) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := s.CreateWorkspace(ctx, admin, org1, WorkspaceInput{Name: &name})
				return err
			}
		}
		oneOf(race(create(a), create(b)), ErrNameConflict)
	}

	x, err := a.CreateUser(ctx, admin, org1, "x@mine.example", "", "")
	require.NoError(t, err)
	y, err := a.CreateUser(ctx, admin, org1, "y@mine.example", "", "")
	require.NoError(t, err)
	px := &Principal{User: UserRef{ID: x.ID}}
	py := &Principal{User: UserRef{ID: y.ID}}
	for range 5 {
		w, err := a.CreateWorkspace(ctx, px, org1, WorkspaceInput{Name: ptr("Owners " + randomSuffix())})
		require.NoError(t, err)
		require.NoError(t, a.SetGrant(ctx, px, org1, w.ID, y.ID, RoleOwner))
		errs := race(
			func(ctx context.Context) error { return a.SetGrant(ctx, px, org1, w.ID, y.ID, RoleEditor) },
			func(ctx context.Context) error { return b.SetGrant(ctx, py, org1, w.ID, x.ID, RoleViewer) },
		)
		oneOf(errs, ErrLastOwner)
		require.NoError(t, a.sync(ctx))
		assert.Equal(t, 1, owners(a.workspace(org1, w.ID).rec.Grants))
	}
}

func randomSuffix() string { return uuid.NewString()[:8] }
