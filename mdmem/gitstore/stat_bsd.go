//go:build darwin || freebsd || netbsd || openbsd

package gitstore

import (
	"os"
	"syscall"
)

// fillStat copies the stat data git keeps in the index.
func fillStat(e *idxEntry, fi os.FileInfo) {
	mt := fi.ModTime()
	e.mtimeS, e.mtimeN = uint32(mt.Unix()), uint32(mt.Nanosecond())
	e.size = uint32(fi.Size())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.ctimeS, e.ctimeN = uint32(st.Ctimespec.Sec), uint32(st.Ctimespec.Nsec)
		e.dev, e.ino = uint32(st.Dev), uint32(st.Ino)
		e.uid, e.gid = st.Uid, st.Gid
	}
}
