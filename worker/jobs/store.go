package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
)

// Store persists job records. The Manager calls it with its lock held, one
// call at a time.
type Store interface {
	// Load returns every stored record (at start-up).
	Load() ([]Record, error)
	// Save creates or replaces a record.
	Save(r Record) error
	// Delete removes a record; a missing one is not an error.
	Delete(id string) error
}

// DirStore keeps one JSON record per job in a directory, each written
// atomically (temporary file, fsync, rename): the store of a Manager with
// Options.Dir, for a single process.
type DirStore struct {
	dir    string
	logger interface{ Warn(string, ...any) }
}

// NewDirStore opens (creating it) a directory of job records.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

// Load reads every record of the directory, skipping unreadable files
// (they are logged by the Manager as skipped).
func (s *DirStore) Load() ([]Record, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	var out []Record
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
			if s.logger != nil {
				s.logger.Warn("skipping unreadable job record", "file", e.Name(), "err", err)
			}
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Save writes a record atomically.
func (s *DirStore) Save(r Record) error {
	b, err := marshal(r, "  ")
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if err := atomicfile.Write(s.dir, filepath.Join(s.dir, r.ID+".json"), b, nil); err != nil {
		return fmt.Errorf("jobs: saving %s: %w", r.ID, err)
	}
	return nil
}

// Delete removes a record's file.
func (s *DirStore) Delete(id string) error {
	if err := os.Remove(filepath.Join(s.dir, id+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
