//go:build !unix

package osfile

import (
	"io"
	"os"
)

// Map reads the first size bytes of f into memory: this platform has
// no syscall.Mmap, so the file is read whole (same output, more memory).
func Map(f *os.File, size int64) (b []byte, unmap func(), err error) {
	b = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
