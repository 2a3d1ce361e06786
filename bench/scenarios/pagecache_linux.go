//go:build linux

package scenarios

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dropFromPageCache writes f's dirty pages to the disk and asks the kernel
// to drop every page of f from the page cache (posix_fadvise
// POSIX_FADV_DONTNEED, which needs no privilege), so that the next read of
// f comes from the disk: the read of a stored blob the machine has not just
// read or written. It returns the fraction of f's pages still resident
// afterwards (mincore), which the caller reports: a kernel may keep pages
// that another process maps.
func dropFromPageCache(f *os.File) (resident float64, err error) {
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("syncing %s: %w", f.Name(), err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("dropping %s from the page cache: %w", f.Name(), err)
	}
	return residentFraction(f)
}

// residentFraction returns the fraction of f's pages in the page cache.
func residentFraction(f *os.File) (float64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := int(st.Size())
	if size == 0 {
		return 0, nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (size+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, fmt.Errorf("mincore of %s: %w", f.Name(), e)
	}
	in := 0
	for _, b := range vec {
		in += int(b & 1)
	}
	return float64(in) / float64(len(vec)), nil
}
