package mdmem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkWriteDirs refuses to write when one of the git-ignored directories
// a writer may write in is a link out of the memory directory.
func checkWriteDirs(dir string) error {
	for _, rel := range []string{CacheDir, QueueDir + "/held"} {
		if _, err := SafeDir(dir, rel); err != nil {
			return err
		}
	}
	return nil
}

// SafeDir returns dir/rel, a directory memctl is about to write in (the
// queue, the cache, the held candidates), after checking that no part of
// rel is a symbolic link or something other than a directory: memctl never
// writes through a link to a place outside the memory directory. Parts
// that do not exist yet are fine (the caller creates them).
func SafeDir(dir, rel string) (string, error) {
	cur := dir
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == "" || part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		shown := filepath.ToSlash(strings.TrimPrefix(cur, dir+string(filepath.Separator)))
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(cur)
			return "", fmt.Errorf("%s is a symbolic link (to %s); memctl does not write through links: replace it with a directory inside the memory directory", shown, target)
		case !fi.IsDir():
			return "", fmt.Errorf("%s is not a directory; move it away so memctl can create the directory", shown)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}
