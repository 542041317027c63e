//go:build linux

package osfile

import (
	"os"
	"syscall"
)

// InodeAndCtime returns the inode number and change time of a file, part
// of the key that says whether a cache still describes it.
func InodeAndCtime(fi os.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return 0, 0
}
