//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package gitstore

import "os"

// fillStat copies the stat data git keeps in the index (mtime and size only
// on this platform; git re-checks the rest).
func fillStat(e *idxEntry, fi os.FileInfo) {
	mt := fi.ModTime()
	e.mtimeS, e.mtimeN = uint32(mt.Unix()), uint32(mt.Nanosecond())
	e.size = uint32(fi.Size())
}
