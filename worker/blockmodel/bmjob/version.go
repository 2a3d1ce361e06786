package bmjob

import (
	"fmt"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
)

// FindVersion returns the version of a model whose version_uuid is uuid,
// or the latest version when uuid is empty (a query without version_uuid,
// a task target, an object version without block_model_version_uuid). An
// unknown uuid is bmstore.ErrNotFound.
func FindVersion(s *bmstore.Store, modelID, uuid string) (*bmstore.Version, error) {
	if uuid == "" {
		n, err := s.Latest(modelID)
		if err != nil {
			return nil, fmt.Errorf("bmjob: model %s: %w", modelID, err)
		}
		return s.Version(modelID, n)
	}
	vs, err := s.Versions(modelID)
	if err != nil {
		return nil, fmt.Errorf("bmjob: model %s: %w", modelID, err)
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].VersionUUID == uuid {
			return vs[i], nil
		}
	}
	return nil, fmt.Errorf("bmjob: model %s version %s: %w", modelID, uuid, bmstore.ErrNotFound)
}
