package transcript

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// TraceDir is the memory-relative directory of kept raw transcripts (L3:
// never injected, searched on demand). It holds its own .gitignore, so the
// traces stay out of git in memories made before it existed.
const TraceDir = mdmem.TraceDir

// traceName is the file name a transcript is kept under:
// <format>-<session><ext>.
func traceName(format, session, src string) string {
	var b strings.Builder
	for _, r := range session {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), ".")
	if name == "" {
		name = "session"
	}
	ext := filepath.Ext(src)
	if ext == "" || len(ext) > 10 {
		ext = ".txt"
	}
	return format + "-" + name + ext
}

// KeepTrace copies the transcript src into the memory's trace directory
// (temp file, fsync, rename), replacing the copy of an earlier, shorter
// state of the same session. It returns the memory-relative path.
func KeepTrace(ctx context.Context, memDir, src, format, session string) (string, error) {
	dir, err := mdmem.SafeDir(memDir, TraceDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	ign := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ign); errors.Is(err, fs.ErrNotExist) {
		if err := mdmem.WriteFileAtomic(ctx, ign, []byte("# raw transcripts kept by memctl extract --keep-trace: never committed\n*\n"), 0o644); err != nil {
			return "", err
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	name := traceName(format, session, src)
	err = mdmem.WriteFileAtomicFunc(ctx, filepath.Join(dir, name), 0o600, func(f *os.File) error {
		return copyRedacted(f, in) // a kept trace never holds a secret in clear
	})
	return filepath.ToSlash(filepath.Join(TraceDir, name)), err
}

// readTraceDir lists the directory of kept transcripts of the memory at
// memDir; none when the directory does not exist.
func readTraceDir(memDir string) (dir string, ents []os.DirEntry, err error) {
	dir = filepath.Join(memDir, filepath.FromSlash(TraceDir))
	ents, err = os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dir, nil, nil
	}
	if err != nil {
		return dir, nil, err
	}
	return dir, ents, nil
}

// PruneTraces removes kept transcripts not modified for maxAge (the
// retention of raw traces) and returns their memory-relative paths.
func PruneTraces(ctx context.Context, memDir string, maxAge time.Duration, now time.Time) ([]string, error) {
	dir, ents, err := readTraceDir(memDir)
	if err != nil {
		return nil, err
	}
	var gone []string
	for _, de := range ents {
		if err := ctx.Err(); err != nil {
			return gone, err
		}
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() || strings.HasPrefix(de.Name(), ".") || now.Sub(fi.ModTime()) <= maxAge {
			continue
		}
		if err := os.Remove(filepath.Join(dir, de.Name())); err != nil {
			return gone, err
		}
		gone = append(gone, filepath.ToSlash(filepath.Join(TraceDir, de.Name())))
	}
	return gone, nil
}

// TraceHit is one turn of a kept transcript that matches a search.
type TraceHit struct {
	File    string `json:"file"` // memory-relative
	Turn    int    `json:"turn"`
	Role    string `json:"role"`
	Score   int    `json:"score"` // query words found
	Snippet string `json:"snippet"`
}

// SearchTraces finds the turns of kept transcripts holding the most query
// words (case-insensitive), best first, at most limit (0: all).
func SearchTraces(ctx context.Context, memDir, query string, limit int) ([]TraceHit, error) {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return nil, errors.New("the query has no words")
	}
	dir, ents, err := readTraceDir(memDir)
	if err != nil {
		return nil, err
	}
	var hits []TraceHit
	for _, de := range ents {
		name := de.Name()
		format, _, ok := strings.Cut(name, "-")
		if !ok || strings.HasPrefix(name, ".") || !de.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		res, err := Read(ctx, f, format, 0, 1)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, t := range res.Turns {
			low := strings.ToLower(t.Text)
			score := 0
			for _, w := range words {
				if strings.Contains(low, w) {
					score++
				}
			}
			if score > 0 {
				hits = append(hits, TraceHit{File: filepath.ToSlash(filepath.Join(TraceDir, name)), Turn: t.N, Role: t.Role, Score: score, Snippet: snippet(t.Text, words)})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		if hits[i].File != hits[j].File {
			return hits[i].File < hits[j].File
		}
		return hits[i].Turn < hits[j].Turn
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// snippet is about 160 bytes of one line around the first query word
// found (matched without case in the original text, whose lower-case form
// may differ in length).
func snippet(text string, words []string) string {
	text = strings.Join(strings.Fields(text), " ")
	at := 0
	for _, w := range words {
		if loc := regexp.MustCompile("(?i)" + regexp.QuoteMeta(w)).FindStringIndex(text); loc != nil {
			at = loc[0]
			break
		}
	}
	i := max(at-60, 0)
	end := min(i+160, len(text))
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	s := text[i:end]
	if i > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
