//go:build !unix

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LockFile is the file in the data directory that a running worker holds an
// exclusive lock on on Unix systems.
const LockFile = "worker.lock"

// DataDirLock stands for a worker's hold on its data directory. Outside Unix
// (no flock) the directory is created but not locked: run one worker per
// data directory yourself.
type DataDirLock struct{ dir string }

// ErrDataDirInUse is wrapped by LockDataDir's error when another process
// holds the data directory (Unix only).
var ErrDataDirInUse = errors.New("data directory in use")

// LockDataDir creates dir if needed; outside Unix it takes no lock.
func LockDataDir(dir string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return &DataDirLock{dir: abs}, nil
}

// Dir returns the directory (absolute).
func (l *DataDirLock) Dir() string { return l.dir }

// Release does nothing outside Unix.
func (l *DataDirLock) Release() error { return nil }
