// Package osfile holds the platform-dependent file operations that the
// caches of inject and consolidate share: a read-only memory map of a
// file, and the inode number and change time that, with size and
// modification time, say whether a file changed since a cache described
// it.
package osfile
