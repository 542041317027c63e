package inject

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
	"github.com/memctl/memctl/mdmem"
)

// Markers around memctl's block in an agent instructions file (AGENTS.md,
// CLAUDE.md, GEMINI.md). Each is a line of its own; only the text between
// them is memctl's.
const (
	BlockBegin = "<!-- memctl:begin"
	BlockEnd   = "<!-- memctl:end -->"
)

const beginLine = BlockBegin + " (memctl inject --write keeps this block current; edits inside it are replaced) -->"

// markerPrefix starts both markers; quotedMarkerPrefix is how stored text
// holding it is written into a block.
const (
	markerPrefix       = "<!-- memctl:"
	quotedMarkerPrefix = "<!-- (quoted) memctl:"
)

// markerLine reports whether line (without its newline) is the marker.
func markerLine(line, marker string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), marker)
}

// ReplaceBlock returns doc with the text between memctl's markers replaced
// by block, or with the markers and block appended at the end when doc has
// none. Every byte outside the markers stays as it was. A marker without
// its pair, or two blocks, is an error: memctl does not guess which text
// is its own.
func ReplaceBlock(doc []byte, block string) ([]byte, error) {
	// Stored text must not close the block early or open another.
	block = strings.ReplaceAll(block, markerPrefix, quotedMarkerPrefix)
	if block != "" && !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	begin, end := -1, -1 // byte offsets: after the begin line, at the end line
	off := 0
	for off < len(doc) {
		nl := bytes.IndexByte(doc[off:], '\n')
		next := len(doc)
		if nl >= 0 {
			next = off + nl + 1
		}
		line := string(doc[off:next])
		switch {
		case markerLine(line, BlockBegin):
			if begin >= 0 {
				return nil, errors.New("two memctl:begin markers; keep one block")
			}
			begin = next
		case markerLine(line, BlockEnd):
			if begin < 0 || end >= 0 {
				return nil, errors.New("a memctl:end marker without its memctl:begin before it")
			}
			end = off
		}
		off = next
	}
	switch {
	case begin >= 0 && end < 0:
		return nil, errors.New("a memctl:begin marker without its memctl:end")
	case begin >= 0:
		out := make([]byte, 0, len(doc)-(end-begin)+len(block))
		out = append(out, doc[:begin]...)
		if begin > 0 && doc[begin-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, block...)
		return append(out, doc[end:]...), nil
	}
	out := append([]byte(nil), doc...)
	if len(out) > 0 {
		if out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	out = append(out, beginLine+"\n"...)
	out = append(out, block...)
	return append(out, BlockEnd+"\n"...), nil
}

// WriteBlock keeps memctl's block in the file at path current: it
// replaces the text between the markers (adding them at the end if
// absent, creating the file if missing) atomically, and writes nothing
// when the file already holds this block, so that editors and git see no
// change. It reports whether it wrote.
//
// It writes only what it was named: never a path inside a .git
// directory, never a file that is not regular (a FIFO or a device is
// refused before it is opened, so nothing blocks), never through a link
// that leaves the directory the file is named in (CLAUDE.md → AGENTS.md
// next to it is written through; a link elsewhere is refused). It splices
// under an flock on the file and reads it again just before replacing
// it: a line a person appended meanwhile is kept (it retries with the new
// content).
func WriteBlock(ctx context.Context, path, block string) (bool, error) {
	target, err := writeTarget(path)
	if err != nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		old, perm, err := readRegular(target)
		if err != nil {
			return false, err
		}
		doc, err := ReplaceBlock(old, block)
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		if bytes.Equal(doc, old) {
			return false, nil
		}
		wrote, err := spliceLocked(ctx, target, old, doc, perm)
		if err != nil || wrote {
			return wrote, err
		}
		if attempt >= 8 {
			return false, fmt.Errorf("%s keeps changing while memctl writes its block; nothing written, try again", path)
		}
	}
}

// writeTarget is the file WriteBlock writes for path: path itself, or
// where its link points when that stays in path's directory tree. It
// refuses a path inside .git and a link that leaves the tree.
func writeTarget(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if inGitDir(abs) {
		return "", fmt.Errorf("%s is inside a .git directory: memctl writes its block only into agents' instruction files", path)
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return abs, err
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s is a link memctl cannot follow: %w", path, err)
	}
	if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is a link to %s, outside %s: memctl does not write through it", path, target, root)
	}
	if inGitDir(target) {
		return "", fmt.Errorf("%s links into a .git directory: memctl does not write there", path)
	}
	return target, nil
}

// inGitDir reports whether a path has a .git component.
func inGitDir(abs string) bool {
	for _, part := range strings.Split(filepath.ToSlash(abs), "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// readRegular reads the file at path (nil when it does not exist) and its
// permissions; anything but a regular file is refused before it is
// opened.
func readRegular(path string) ([]byte, os.FileMode, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file (%s): memctl writes its block only into a regular file", path, fi.Mode().Type())
	}
	b, err := os.ReadFile(path)
	return b, fi.Mode().Perm(), err
}

// spliceLocked replaces the file at path by doc under an flock on it,
// provided it still holds old; it reports false (nothing written) when
// the file changed since old was read.
func spliceLocked(ctx context.Context, path string, old, doc []byte, perm os.FileMode) (bool, error) {
	if old != nil {
		lk := flock.New(path)
		if err := lk.Lock(); err != nil {
			return false, err
		}
		defer lk.Unlock()
		now, _, err := readRegular(path)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(now, old) {
			return false, nil // a person appended meanwhile: splice into that
		}
	}
	return true, mdmem.WriteFileAtomic(ctx, path, doc, perm)
}
