//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package consolidate

import "os"

// inodeAndCtime returns 0, 0: this platform's stat has neither, so the
// cache key is the size and modification time alone.
func inodeAndCtime(os.FileInfo) (ino uint64, ctime int64) { return 0, 0 }
