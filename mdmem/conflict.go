package mdmem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memctl/memctl/mdmem/osfile"
)

// Conflict markers: a person's own `git pull` (or merge, rebase, stash
// pop) that git could not finish leaves lines such as "<<<<<<< HEAD",
// "=======" and ">>>>>>> origin/main" in a memory file. ParseDoc finds
// them, reads none of the conflicted region (from "<<<<<<<" to its
// ">>>>>>>", both sides) as memory, and records each marker in
// Doc.Conflicts and Doc.Problems (so `memctl lint` reports it); readers
// warn with ConflictWarning; writers refuse (Store.Lock).

// ConflictHint says how to finish an unfinished merge of memory files.
const ConflictHint = "finish the merge with `memctl resolve`, or abort it with `git merge --abort`"

// ConflictMarker is one git conflict-marker line in a memory file.
type ConflictMarker struct {
	File   string // memory-relative path
	Line   int    // 1-based
	Marker string // "<<<<<<<", "|||||||", "=======" or ">>>>>>>"
}

// String formats the marker as "file:line: git conflict marker <<<<<<<".
func (c ConflictMarker) String() string {
	return fmt.Sprintf("%s:%d: git conflict marker %s", c.File, c.Line, c.Marker)
}

// markerSize is the length of git's conflict markers (merge.conflictStyle
// aside, git writes seven unless a conflict-marker-size attribute says
// otherwise).
const markerSize = 7

// conflictMarkerAt returns the marker a line is ("<<<<<<<", …), or "".
// "=======" counts only inside a conflicted region (elsewhere it may be a
// setext heading's underline); the caller decides that.
func conflictMarkerAt(line []byte) string {
	line = bytes.TrimRight(line, "\r")
	if len(line) < markerSize {
		return ""
	}
	c := line[0]
	if c != '<' && c != '>' && c != '|' && c != '=' {
		return ""
	}
	for i := 1; i < markerSize; i++ {
		if line[i] != c {
			return ""
		}
	}
	rest := line[markerSize:]
	switch {
	case c == '=' && len(bytes.TrimRight(rest, " \t")) != 0:
		return ""
	case len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t':
		return ""
	}
	return string(line[:markerSize])
}

// conflictLine is a marker found in a file's bytes.
type conflictLine struct {
	line   int // 1-based
	marker string
}

// findConflicts returns the marker lines of src and the byte ranges of
// its conflicted regions: from a "<<<<<<<" line through its ">>>>>>>"
// line (to the end of the file when it has none), and a ">>>>>>>" line
// outside every region on its own.
func findConflicts(src []byte) ([]conflictLine, [][2]int) {
	if !bytes.Contains(src, []byte("<<<<<<<")) && !bytes.Contains(src, []byte(">>>>>>>")) {
		return nil, nil
	}
	var (
		marks   []conflictLine
		regions [][2]int
		depth   int
		start   int
	)
	for off, n := 0, 1; off < len(src); n++ {
		end := len(src)
		if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		m := conflictMarkerAt(bytes.TrimRight(src[off:end], "\n"))
		switch {
		case m == "<<<<<<<":
			if depth == 0 {
				start = off
			}
			depth++
		case m == ">>>>>>>" && depth > 0:
			if depth--; depth == 0 {
				regions = append(regions, [2]int{start, end})
			}
		case m == ">>>>>>>":
			regions = append(regions, [2]int{off, end})
		case m != "" && depth == 0:
			m = "" // "=======" or "|||||||" outside a conflict: text
		}
		if m != "" {
			marks = append(marks, conflictLine{n, m})
		}
		off = end
	}
	if depth > 0 {
		regions = append(regions, [2]int{start, len(src)})
	}
	return marks, regions
}

// blankRegions returns a copy of src with every byte of the regions but
// the line ends replaced by a space: the same offsets and lines, and
// blank lines where the conflict was, so nothing of it parses as memory
// and the entries around it end where they end.
func blankRegions(src []byte, regions [][2]int) []byte {
	out := bytes.Clone(src)
	for _, r := range regions {
		for i := r[0]; i < r[1]; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	return out
}

// Conflicts returns the conflict markers of every memory file, in file
// order (MEMORY.md, then topic files by slug).
func (m *Memory) Conflicts() []ConflictMarker {
	var out []ConflictMarker
	for _, d := range m.Docs() {
		out = append(out, d.Conflicts...)
	}
	return out
}

// ConflictWarning is the warning a reader prints when memory files hold
// conflict markers: one line per file, naming its first marker's line and
// how many there are, and what to do. "" when there are none.
func ConflictWarning(markers []ConflictMarker) string {
	if len(markers) == 0 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(markers); {
		j := i
		for j < len(markers) && markers[j].File == markers[i].File {
			j++
		}
		fmt.Fprintf(&b, "memctl: warning: %s:%d: git conflict markers (%d in the file): the conflicted lines are not read as memory; %s\n",
			markers[i].File, markers[i].Line, j-i, ConflictHint)
		i = j
	}
	return b.String()
}

// ConflictError is a write refused because a merge of memory files is
// unfinished: files holding conflict markers, or paths git's index holds
// unmerged. Nothing was written.
type ConflictError struct {
	Markers  []ConflictMarker // the first marker of each file holding some
	Unmerged []string         // memory-relative paths with unmerged index entries
}

// Error names the files, and says how to finish.
func (e *ConflictError) Error() string {
	var where []string
	for _, m := range e.Markers {
		where = append(where, fmt.Sprintf("%s:%d (%s)", m.File, m.Line, m.Marker))
	}
	for _, p := range e.Unmerged {
		where = append(where, p+" (unmerged in git's index)")
	}
	return fmt.Sprintf("an unfinished git merge in the memory: %s; memctl writes nothing until it is finished: %s", strings.Join(where, ", "), ConflictHint)
}

// CheckConflicts returns a *ConflictError when a memory file (MEMORY.md, a
// topic file) holds conflict markers or git's index holds an unmerged
// entry for a path of the memory directory; nil when neither. A file whose
// stat data (size, mtime, ctime, inode) is the one recorded when it was
// last found without markers is not read again (conflictsCheckedPath), as
// git status does not read a file its index describes.
func (s *Store) CheckConflicts(ctx context.Context) error {
	start := time.Now()
	e := &ConflictError{}
	files := []string{MainFile}
	slugs, err := ListTopicSlugs(s.Dir)
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		files = append(files, TopicPath(slug))
	}
	was := s.readConflictsChecked()
	clean := map[string]statKey{}
	for _, rel := range files {
		k, ok := statKeyOf(filepath.Join(s.Dir, filepath.FromSlash(rel)))
		if ok && was[rel] == k {
			clean[rel] = k
			continue
		}
		if m, found := s.firstConflict(rel); found {
			e.Markers = append(e.Markers, m)
		} else if ok {
			clean[rel] = k
		}
	}
	if !maps.Equal(was, settled(clean, start)) {
		s.writeConflictsChecked(ctx, start, clean)
	}
	if e.Unmerged, err = s.unmergedPaths(); err != nil {
		return err
	}
	if len(e.Markers) == 0 && len(e.Unmerged) == 0 {
		return nil
	}
	return e
}

// RacyWindow is the coarsest file timestamp granularity memctl's caches
// allow for (FAT's 2 s; ext4, XFS, APFS and NTFS are much finer): a file
// whose mtime or ctime is that close to a cache's write may change again
// within the same tick, keeping its stat data, so its stat data alone
// does not vouch for it.
const RacyWindow = 2 * time.Second

// conflictsCheckedPath lists the memory files last found without conflict
// markers, each with its stat data then (a cache: CheckConflicts).
const conflictsCheckedPath = CacheDir + "/conflicts-checked"

// statKey is a file's stat data: any write changes its size, mtime or
// ctime (which no program can set back), a replacement its inode.
type statKey struct {
	Size, Mtime, Ctime int64
	Ino                uint64
}

// statKeyOf stats a regular file; false when it is not one, or the
// platform gives no ctime and inode (then nothing is recorded).
func statKeyOf(path string) (statKey, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return statKey{}, false
	}
	k := statKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	k.Ino, k.Ctime = osfile.InodeAndCtime(fi)
	return k, k.Ino != 0 && k.Ctime != 0
}

// readConflictsChecked reads conflictsCheckedPath; empty when it is
// missing or malformed.
func (s *Store) readConflictsChecked() map[string]statKey {
	out := map[string]statKey{}
	b, err := os.ReadFile(s.abs(conflictsCheckedPath))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		var k statKey
		var rel string
		if n, err := fmt.Sscanf(line, "%d %d %d %d %s", &k.Size, &k.Mtime, &k.Ctime, &k.Ino, &rel); err != nil || n != 5 {
			return map[string]statKey{}
		}
		out[rel] = k
	}
	return out
}

// settled returns the files of clean whose mtime and ctime are more than
// RacyWindow before ref: the ones a record may vouch for. The record is
// written only when that set changed, so a memory written just now does
// not rewrite it on every lock.
func settled(clean map[string]statKey, ref time.Time) map[string]statKey {
	limit := ref.UnixNano() - int64(RacyWindow)
	out := map[string]statKey{}
	for rel, k := range clean {
		if k.Mtime < limit && k.Ctime < limit {
			out[rel] = k
		}
	}
	return out
}

// writeConflictsChecked records the files found clean, but for those
// whose mtime or ctime is within the racy window of the record's write (a
// second write in the same timestamp tick could keep their stat data):
// they are read again next time. Best effort: a cache.
func (s *Store) writeConflictsChecked(ctx context.Context, start time.Time, clean map[string]statKey) {
	if EnsureDir(s.Dir, CacheDir) != nil {
		return
	}
	_ = WriteFileAtomicFunc(ctx, s.abs(conflictsCheckedPath), PrivateFileMode, func(f *os.File) error {
		ref := start.UnixNano()
		if fi, err := f.Stat(); err == nil {
			ref = min(ref, fi.ModTime().UnixNano())
		}
		rec := settled(clean, time.Unix(0, ref))
		var b strings.Builder
		for _, rel := range slices.Sorted(maps.Keys(rec)) {
			k := rec[rel]
			fmt.Fprintf(&b, "%d %d %d %d %s\n", k.Size, k.Mtime, k.Ctime, k.Ino, rel)
		}
		_, err := f.WriteString(b.String())
		return err
	})
}

// firstConflict returns the first conflict marker of a memory file. The
// file is scanned through a read-only mapping, not copied: every write
// takes the lock, which scans every file. A file that is missing or
// refused (a symbolic link, too large) has none here: the writer's own
// read says so.
func (s *Store) firstConflict(rel string) (ConflictMarker, bool) {
	if checkMemoryFile(s.Dir, rel) != nil {
		return ConflictMarker{}, false
	}
	f, err := os.Open(filepath.Join(s.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return ConflictMarker{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return ConflictMarker{}, false
	}
	src, unmap, err := osfile.Map(f, fi.Size())
	if err != nil {
		if src, err = ReadMemoryFile(s.Dir, rel); err != nil {
			return ConflictMarker{}, false
		}
		unmap = func() {}
	}
	defer unmap()
	marks, _ := findConflicts(src)
	if len(marks) == 0 {
		return ConflictMarker{}, false
	}
	return ConflictMarker{File: rel, Line: marks[0].line, Marker: marks[0].marker}, true
}

// unmergedPaths returns the memory-relative paths git's index holds at a
// merge stage (1, 2 or 3), each once; none without an index, or with one
// it cannot read.
func (s *Store) unmergedPaths() ([]string, error) {
	f, err := os.Open(filepath.Join(s.Repo.GitDir(), "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var idx index.Index
	if index.NewDecoder(f).Decode(&idx) != nil {
		// An index this decoder cannot read (a newer format) tells
		// nothing here; the markers are still checked, and the commit
		// itself is refused while git's MERGE_HEAD is there.
		return nil, nil
	}
	prefix := s.Repo.Prefix()
	if prefix != "" {
		prefix += "/"
	}
	var out []string
	for _, en := range idx.Entries {
		rel, ok := strings.CutPrefix(en.Name, prefix)
		// Stage 0 is merged (go-git's index.Merged constant says 1, which
		// is the base's stage: compare with 0).
		if en.Stage == 0 || !ok || len(out) > 0 && out[len(out)-1] == rel {
			continue
		}
		out = append(out, rel)
	}
	return out, nil
}
