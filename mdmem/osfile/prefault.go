package osfile

import "unsafe"

// minPrefault is the smallest allocation Prefault maps in: smaller ones
// may share their pages with other objects, and cost few faults anyway.
const minPrefault = 256 << 10

// Bytes views a slice's elements as bytes, for Prefault.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}
