package mdmem

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DefaultMaxWriteBytes is the default size up to which memctl fills a file
// it writes (files.max_bytes): a topic file continues in topics/<slug>-2.md,
// -3, …; MEMORY.md, which cannot be split, is refused beyond it. At 8 MiB
// a file parses in about 0.1 s, and it is an eighth of what memctl reads
// (MaxFileBytes), so hand edits and in-place rewrites have room.
const DefaultMaxWriteBytes = 8 << 20

// MinWriteBytes is the smallest files.max_bytes accepted: room for a
// handful of the largest entries.
const MinWriteBytes = 16 << 10

// FileTooLargeError is a write memctl refuses because a file would be over
// a size limit; nothing has been written.
type FileTooLargeError struct {
	Path  string
	Size  int
	Limit int
	What  string // which limit: "memctl's read limit" or "files.max_bytes"
}

// Error says which file, how large, and which limit.
func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s would be %s, over %s of %s; nothing written", e.Path, byteSize(e.Size), e.What, byteSize(e.Limit))
}

// Hint says what a person can do about it.
func (e *FileTooLargeError) Hint() string {
	if e.Path == MainFile {
		return "MEMORY.md cannot be split: move live entries to topic files by hand, or delete old archive entries (git history keeps them; consolidate --allow-delete commits that; never move the archive into topics/, where every entry is live), or import with a topic; files.max_bytes in .memctl/config.toml raises the limit up to " + byteSize(MaxFileBytes/2)
	}
	return "split the input or the file by hand (topic files continue in topics/<slug>-2.md, -3, …)"
}

// CheckReadable refuses content memctl could not read back: a memory file
// over MaxFileBytes. Every write path calls it before anything is written,
// so no write can leave an unreadable memory.
func CheckReadable(path string, data []byte) error { return checkReadableSize(path, len(data)) }

// checkReadableSize is CheckReadable of a file of size bytes.
func checkReadableSize(path string, size int) error {
	if size > MaxFileBytes {
		return &FileTooLargeError{Path: path, Size: size, Limit: MaxFileBytes, What: "memctl's read limit"}
	}
	return nil
}

// CheckWriteSize checks new content of path (old: its current content, nil
// if new) against the limits: never over the read limit, and MEMORY.md,
// which cannot be split, not grown past maxWrite (files.max_bytes). A
// topic file grown past maxWrite by an in-place rewrite is allowed up to
// the read limit; inserts into it go to its next part (see Editor).
func CheckWriteSize(path string, old, data []byte, maxWrite int) error {
	if err := CheckReadable(path, data); err != nil {
		return err
	}
	if path == MainFile && maxWrite > 0 && len(data) > maxWrite && len(data) > len(old) {
		return &FileTooLargeError{Path: path, Size: len(data), Limit: maxWrite, What: "the limit for a file memctl writes (files.max_bytes)"}
	}
	return nil
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// partSlug is the slug of part k (k ≥ 2) of topic base: "<base>-<k>",
// base shortened so that it stays a valid slug.
func partSlug(base string, k int) string {
	suffix := "-" + strconv.Itoa(k)
	if len(base)+len(suffix) > 64 {
		base = strings.TrimRight(base[:64-len(suffix)], "-_")
	}
	return base + suffix
}

// partTitle is the title of part k of a topic titled title.
func partTitle(title string, k int) string { return fmt.Sprintf("%s (part %d)", title, k) }

var partSuffix = regexp.MustCompile(`^(.+)-([0-9]+)$`)
var partTitleSuffix = regexp.MustCompile(`\(part ([0-9]+)\)$`)

// topicTitle is the first H1 of a document, or "".
func topicTitle(d *Doc) string {
	for _, h := range d.Headings {
		if h.Level == 1 {
			return h.Title
		}
	}
	return ""
}

// isPart reports whether the existing topic file d is part k of a split
// topic: its title ends in "(part k)". A person's own topic that happens
// to be named like a part ("python-3") is not.
func isPart(d *Doc, k int) bool {
	m := partTitleSuffix.FindStringSubmatch(topicTitle(d))
	return m != nil && m[1] == strconv.Itoa(k)
}
