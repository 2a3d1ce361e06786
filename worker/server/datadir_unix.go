//go:build unix

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// LockFile is the file in the data directory that a running worker holds an
// exclusive lock on (it also holds the worker's PID).
const LockFile = "worker.lock"

// DataDirLock is a worker's exclusive hold on its data directory: an OS
// file lock (flock) on DATA/worker.lock. The kernel drops it when the
// process ends, however it ends (also after SIGKILL), so a stale lock file
// never blocks the next worker.
type DataDirLock struct {
	dir  string
	f    *os.File
	once sync.Once
	err  error
}

// ErrDataDirInUse is wrapped by LockDataDir's error when another process
// holds the data directory.
var ErrDataDirInUse = errors.New("data directory in use")

// LockDataDir creates dir if needed and takes the exclusive lock on it
// without waiting. When another worker holds it, the error names the
// directory and the holder's PID and wraps ErrDataDirInUse.
func LockDataDir(dir string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil && pid > 0 {
				holder = "another worker (pid " + strconv.Itoa(pid) + ")"
			}
			return nil, fmt.Errorf("%w: %s is used by %s; stop it or give this worker another -data directory", ErrDataDirInUse, abs, holder)
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	return &DataDirLock{dir: abs, f: f}, nil
}

// Dir returns the locked directory (absolute).
func (l *DataDirLock) Dir() string { return l.dir }

// Release drops the lock. It is idempotent.
func (l *DataDirLock) Release() error {
	l.once.Do(func() {
		// Closing the descriptor releases the flock; the file stays (an
		// unlocked file means nothing).
		l.err = l.f.Close()
	})
	return l.err
}
