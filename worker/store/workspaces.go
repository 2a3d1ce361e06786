package store

// Workspaces returns the workspaces that hold objects (deleted ones
// included), in no particular order: what the identity store registers on
// the worker's first start with it.
func (s *Embedded) Workspaces() []Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Workspace, 0, len(s.spaces))
	for ws, sp := range s.spaces {
		if len(sp.objects) > 0 {
			out = append(out, ws)
		}
	}
	return out
}
