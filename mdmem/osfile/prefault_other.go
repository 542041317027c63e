//go:build !linux

package osfile

// Prefault does nothing on this platform (see the Linux version).
func Prefault(b []byte) {}
