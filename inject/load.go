package inject

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/osfile"
)

// readCorpus reads the memory in dir, through the view v, as NewCorpus(mdmem.Load(dir)) does —
// the same files in the same order, through the same mdmem file rules
// (ListTopicSlugs, ReadMemoryFile) — but one
// file at a time: each file is parsed, its entries are copied to notes and
// its parse (source bytes, entry structs, line index) is dropped before
// the next file is read. At 100,000 entries mdmem.Load holds ~90 MB at
// once; this holds the notes, the file texts they point into and one
// file's parse. TestReadCorpusMatchesLoad keeps the two in step.
func readCorpus(ctx context.Context, v *mdmem.ReadView, dir string) (*Corpus, error) {
	c := &Corpus{}
	src, err := v.ReadFile(mdmem.MainFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	slugs, err := v.TopicSlugs()
	if err != nil {
		return nil, err
	}
	// One allocation of the notes array, sized by an upper bound on the
	// entries (each starts on a line of its own with a list marker;
	// capped, past which appends grow it).
	hint := countItemLines(src)
	var buf []byte
	for _, slug := range slugs {
		buf = readInto(buf, filepath.Join(dir, filepath.FromSlash(mdmem.TopicPath(slug))))
		hint += countItemLines(buf)
	}
	buf = nil
	hint = min(hint, maxNotesHint)
	c.notes = make([]Note, 0, hint)
	c.addDoc(mdmem.ParseDoc(mdmem.MainFile, src))
	src = nil
	for _, slug := range slugs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := mdmem.TopicPath(slug)
		src, err := v.ReadFile(p)
		if err != nil {
			return nil, err
		}
		d := mdmem.ParseDoc(p, src)
		c.addDoc(d)
		c.Topics = append(c.Topics, topicInfo(slug, d))
	}
	c.init()
	return c, nil
}

func (c *Corpus) addDoc(d *mdmem.Doc) {
	c.conflicts = append(c.conflicts, d.Conflicts...)
	if n := len(c.notes) + len(d.Entries); n > cap(c.notes) {
		c.notes = slices.Grow(c.notes, len(d.Entries))
		osfile.Prefault(osfile.Bytes(c.notes[len(c.notes):cap(c.notes)]))
	}
	for _, e := range d.Entries {
		c.notes = append(c.notes, noteOf(e))
	}
}

const maxNotesHint = 1 << 21

// countItemLines counts the lines that may start a list item: "-", "*" or
// "+", or up to nine digits and "." or ")", then a space or tab, after
// optional indentation and quote markers.
func countItemLines(b []byte) int {
	n := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l := bytes.TrimLeft(line, " \t>")
		k := 0
		if len(l) > 0 && (l[0] == '-' || l[0] == '*' || l[0] == '+') {
			k = 1
		} else {
			for k < len(l) && k < 9 && '0' <= l[k] && l[k] <= '9' {
				k++
			}
			if k == 0 || k >= len(l) || l[k] != '.' && l[k] != ')' {
				continue
			}
			k++
		}
		if k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			n++
		}
	}
	return n
}

// readInto reads a file into buf (grown as needed); nothing if it cannot
// be read (the count is only a capacity hint; the parse reports errors).
func readInto(buf []byte, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0]
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > mdmem.MaxFileBytes {
		return buf[:0]
	}
	if int64(cap(buf)) < fi.Size() {
		buf = make([]byte, fi.Size())
	}
	k, _ := io.ReadFull(f, buf[:fi.Size()])
	return buf[:k]
}
