package osfile

import (
	"io"
	"math"
	"os"
	"unsafe"
)

// minPrefault is the smallest allocation Prefault maps in: below it, the
// faults it saves cost less than the system call.
const minPrefault = 64 << 10

// Bytes views a slice's elements as bytes, for Prefault.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// String returns a copy of b as a string, its pages mapped in with
// Prefault when it is large.
func String(b []byte) string {
	if len(b) < minPrefault {
		return string(b)
	}
	c := make([]byte, len(b))
	Prefault(c)
	copy(c, b)
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// ReadFile reads the file at path as os.ReadFile does, into a buffer
// mapped in with Prefault when it is large.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < minPrefault || fi.Size() > math.MaxInt32 {
		return io.ReadAll(f)
	}
	b := make([]byte, fi.Size(), fi.Size()+1) // +1: ReadAll sees the end without growing
	Prefault(b)
	n, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF { // the file shrank since its stat
		return b[:n], nil
	}
	if err != nil {
		return nil, err
	}
	// The file may have grown since its stat: read the rest as os.ReadFile would.
	rest, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return append(b, rest...), nil
}
