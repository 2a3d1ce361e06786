package bmstore

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
)

// ErrNotFound is returned for a missing model, version, column or job.
var ErrNotFound = errors.New("not found")

// VersionIDColumn is the name of the per-row version_id system column the
// store maintains (blockmodel.Int64: the version that last wrote a user value of the row).
const VersionIDColumn = "version_id"

// Store is the durable column store rooted at one directory. It is safe for
// concurrent use; writes to one model are serialised by a per-model lock.
type Store struct {
	root string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
	jobMu sync.Mutex

	// testHook, when set, runs at named points of a commit (crash tests).
	testHook func(point string)
}

// Open opens (creating) the store at root and clears the leftovers of
// interrupted writes: temporary files, manifests above a model's latest
// pointer and column files no committed manifest refers to.
func Open(root string) (*Store, error) {
	s := &Store{root: root, locks: map[string]*sync.Mutex{}}
	for _, d := range []string{filepath.Join(root, "models"), filepath.Join(root, "jobs"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("bmstore: open: %w", err)
		}
	}
	if err := clearDir(filepath.Join(root, "tmp")); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(root, "models"))
	if err != nil {
		return nil, fmt.Errorf("bmstore: open: %w", err)
	}
	for _, e := range ents {
		if err := s.recover(e.Name()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func clearDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("bmstore: clear %s: %w", dir, err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("bmstore: clear %s: %w", dir, err)
		}
	}
	return nil
}

// recover removes one model's uncommitted leftovers; a model directory
// without a latest pointer (create interrupted) is removed whole.
func (s *Store) recover(id string) error {
	dir := s.modelDir(id)
	if err := clearDir(filepath.Join(dir, "tmp")); err != nil {
		return err
	}
	latest, err := s.latest(id)
	if errors.Is(err, ErrNotFound) {
		return os.RemoveAll(dir)
	}
	if err != nil {
		return err
	}
	used := map[string]bool{}
	vents, _ := os.ReadDir(filepath.Join(dir, "v"))
	for _, e := range vents {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil || n > latest {
			os.Remove(filepath.Join(dir, "v", e.Name()))
			continue
		}
		m, err := s.manifest(id, n)
		if err != nil {
			return err
		}
		for _, c := range m.Columns {
			used[c.File] = true
		}
		used[m.VersionIDFile] = true
	}
	cents, _ := os.ReadDir(filepath.Join(dir, "c"))
	for _, e := range cents {
		if !used[e.Name()] {
			os.Remove(filepath.Join(dir, "c", e.Name()))
		}
	}
	return nil
}

func (s *Store) modelDir(id string) string { return filepath.Join(s.root, "models", id) }

func validID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\.`) || len(id) > 100 {
		return fmt.Errorf("bmstore: invalid id %q", id)
	}
	return nil
}

func (s *Store) lock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[id] = l
	}
	return l
}

func (s *Store) hook(p string) {
	if s.testHook != nil {
		s.testHook(p)
	}
}

// writeJSON writes v atomically to path via the model's tmp directory.
func writeJSON(tmp, path string, v any, before func()) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(tmp, path, b, before)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("bmstore: %s: %w", filepath.Base(path), ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("bmstore: read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("bmstore: decode %s: %w", path, err)
	}
	return nil
}

// NewUUID returns a random v4 UUID string.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Model is the model record: the caller's fields (Data, verbatim JSON) plus
// the soft-delete marks the store keeps.
type Model struct {
	ID        string          `json:"id"`
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	DeletedAt *time.Time      `json:"deleted_at,omitempty"`
	DeletedBy string          `json:"deleted_by,omitempty"`
}

// PutModel replaces a model's record atomically (metadata edit, soft delete,
// restore); the model must exist.
func (s *Store) PutModel(m Model) error {
	if _, err := s.latest(m.ID); err != nil {
		return err
	}
	dir := s.modelDir(m.ID)
	return writeJSON(filepath.Join(dir, "tmp"), filepath.Join(dir, "model.json"), m, nil)
}

// GetModel returns a model's record.
func (s *Store) GetModel(id string) (Model, error) {
	if err := validID(id); err != nil {
		return Model{}, err
	}
	var m Model
	if _, err := s.latest(id); err != nil {
		return m, err
	}
	return m, readJSON(filepath.Join(s.modelDir(id), "model.json"), &m)
}

// ListModels returns the ids of all committed models.
func (s *Store) ListModels() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, "models"))
	if err != nil {
		return nil, fmt.Errorf("bmstore: list models: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if _, err := s.latest(e.Name()); err == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

type latestPtr struct {
	Version int `json:"version"`
}

func (s *Store) latest(id string) (int, error) {
	var p latestPtr
	if err := readJSON(filepath.Join(s.modelDir(id), "latest"), &p); err != nil {
		return 0, fmt.Errorf("bmstore: model %s: %w", id, err)
	}
	return p.Version, nil
}

// Latest returns the number of a model's latest version.
func (s *Store) Latest(id string) (int, error) {
	if err := validID(id); err != nil {
		return 0, err
	}
	return s.latest(id)
}

func (s *Store) manifest(id string, n int) (*Version, error) {
	var v Version
	if err := readJSON(filepath.Join(s.modelDir(id), "v", strconv.Itoa(n)+".json"), &v); err != nil {
		return nil, fmt.Errorf("bmstore: model %s version %d: %w", id, n, err)
	}
	return &v, nil
}

// Version returns version n of a model (n ≤ latest).
func (s *Store) Version(id string, n int) (*Version, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	l, err := s.latest(id)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > l {
		return nil, fmt.Errorf("bmstore: model %s version %d: %w", id, n, ErrNotFound)
	}
	return s.manifest(id, n)
}

// Versions returns all versions of a model, oldest first.
func (s *Store) Versions(id string) ([]*Version, error) {
	l, err := s.Latest(id)
	if err != nil {
		return nil, err
	}
	out := make([]*Version, 0, l)
	for n := 1; n <= l; n++ {
		v, err := s.manifest(id, n)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
