//go:build unix

package osfile

import (
	"os"
	"syscall"
)

// Map maps the first size bytes of f read-only; unmap releases them.
func Map(f *os.File, size int64) (b []byte, unmap func(), err error) {
	b, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
