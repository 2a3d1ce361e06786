//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package atomicfile

import (
	"os"
	"syscall"
)

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE of sync_file_range(2).
const syncFileRangeWrite = 2

// StartWriteback asks the kernel to start writing a range of f to disk
// now, without waiting (sync_file_range(2) with SYNC_FILE_RANGE_WRITE): the
// fsync of Commit then waits only for what was written last. It is a hint:
// an error changes nothing (the fsync still writes everything).
func StartWriteback(f *os.File, off, n int64) {
	_, _, _ = syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, f.Fd(), uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
}
