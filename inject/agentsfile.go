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
func WriteBlock(ctx context.Context, path, block string) (bool, error) {
	old, err := os.ReadFile(path)
	perm := os.FileMode(0o644)
	switch {
	case err == nil:
		if fi, err := os.Stat(path); err == nil {
			if !fi.Mode().IsRegular() {
				return false, fmt.Errorf("%s is not a regular file", path)
			}
			perm = fi.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, err
	}
	doc, err := ReplaceBlock(old, block)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(doc, old) {
		return false, nil
	}
	// A link (CLAUDE.md → AGENTS.md is common) is written through: the
	// file it points to gets the block, the link stays.
	if target, err := resolveLink(path); err == nil {
		path = target
	}
	return true, mdmem.WriteFileAtomic(ctx, path, doc, perm)
}

func resolveLink(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, err
	}
	return filepath.EvalSymlinks(path)
}
