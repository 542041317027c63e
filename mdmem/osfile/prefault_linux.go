package osfile

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// Prefault maps in, with one system call, the pages b lies on whole when
// b is at least minPrefault bytes (a new large allocation, not yet
// touched), so that filling it takes no page fault per page: each one is
// a trap to the kernel, and in a virtual machine often to the host too.
// It changes no byte (the pages are populated as a write would, without
// writing). It is a hint: on kernels before 5.14 it does nothing.
func Prefault(b []byte) {
	if len(b) < minPrefault {
		return
	}
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + page - 1) &^ (page - 1)
	end := (p + uintptr(len(b))) &^ (page - 1)
	if end > start {
		_ = syscall.Madvise(b[start-p:end-p], madvPopulateWrite)
	}
}
