//go:build darwin || freebsd || netbsd || openbsd

package osfile

import (
	"os"
	"syscall"
)

// InodeAndCtime returns the inode number and change time of a file, part
// of the key that says whether a cache still describes it.
func InodeAndCtime(fi os.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), int64(st.Ctimespec.Sec)*1e9 + int64(st.Ctimespec.Nsec)
	}
	return 0, 0
}
