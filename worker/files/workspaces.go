package files

import "github.com/geostat-engine/geostat/worker/store"

// Workspaces returns the workspaces that hold files (deleted ones
// included), in no particular order: what the identity store registers on
// the worker's first start with it.
func (s *Store) Workspaces() []store.Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.Workspace, 0, len(s.spaces))
	for ws, sp := range s.spaces {
		if len(sp.files) > 0 {
			out = append(out, ws)
		}
	}
	return out
}
