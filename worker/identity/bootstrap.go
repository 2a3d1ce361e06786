package identity

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// NeedsRegistration reports whether the one-off registration of existing
// workspaces (RegisterExisting) has not run yet on this bucket, so the
// caller knows whether to scan its stores for workspace ids.
func (s *Store) NeedsRegistration() bool {
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	return !s.v.registered
}

// RegisterExisting registers every workspace id of ids (organisation →
// workspace ids found in the object, file, block model and job stores and
// the tokens file) that has no record yet, named "workspace-<first 8 hex>",
// then records that the registration is done: later calls do nothing. It is
// idempotent and safe to run from several api workers at once. It returns
// the workspaces it registered, as "org/workspace".
func (s *Store) RegisterExisting(ctx context.Context, ids map[string][]string) ([]string, error) {
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	if !s.NeedsRegistration() {
		return nil, nil
	}
	orgs := make([]string, 0, len(ids))
	for org := range ids {
		orgs = append(orgs, org)
	}
	slices.Sort(orgs)
	var out []string
	by := UserRef{Name: "registration of existing workspaces"}
	for _, org := range orgs {
		wss := slices.Clone(ids[org])
		slices.Sort(wss)
		for _, ws := range slices.Compact(wss) {
			o, w, err := lowerIDs(org, ws)
			if err != nil {
				return out, fmt.Errorf("identity: registering existing workspaces: %w", err)
			}
			if s.workspace(o, w).rec != nil {
				continue
			}
			created, err := s.register(ctx, by, o, w)
			if err != nil {
				return out, fmt.Errorf("identity: registering workspace %s/%s: %w", o, w, err)
			}
			if created {
				out = append(out, o+"/"+w)
			}
		}
	}
	if _, err := s.put(ctx, registeredKey, map[string]time.Time{"at": s.now()}, 0); err != nil {
		return out, err
	}
	return out, nil
}
