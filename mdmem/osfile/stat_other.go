//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package osfile

import "os"

// InodeAndCtime returns 0, 0: this platform's stat has neither, so a
// cache key is the size and modification time alone.
func InodeAndCtime(os.FileInfo) (ino uint64, ctime int64) { return 0, 0 }
