package inject

import (
	"context"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// Note is what inject, search and stats need of one memory entry. It is a
// flat copy of mdmem.Entry, so the index cache can hold it without the
// Markdown source.
type Note struct {
	ID           string
	Category     string
	Content      string
	Source       string
	Created      time.Time
	Updated      time.Time
	Expires      time.Time
	Scope        []string
	Refs         []string
	Tags         []string
	See          []string
	Notes        []string
	SupersededBy string
	Place        mdmem.Place
	File         string
	Topic        string
	Section      string
	Line         int
}

// Ref is how a note is named in output: its id, or file:line for a
// hand-written item without an id.
func (n *Note) Ref() string {
	if n.ID != "" {
		return n.ID
	}
	return n.File + ":" + itoa(n.Line)
}

// Date is the note's most recent date: updated if set, else created.
func (n *Note) Date() time.Time {
	if !n.Updated.IsZero() {
		return n.Updated
	}
	return n.Created
}

// TopicInfo is what a topic file says about itself: its slug, and the
// description and keywords of its front matter.
type TopicInfo struct {
	Slug        string
	Description string
	Keywords    []string
}

// Corpus is every note of a memory, in file order (MEMORY.md, then topic
// files by slug; Len and Note), with the topics' front matter. Read from
// the index cache, its notes are decoded on first use. A Corpus is not
// safe for concurrent use.
type Corpus struct {
	Topics []TopicInfo // sorted by slug

	notes    []Note     // parsed from the Markdown; nil when lz is set
	lz       *lazyNotes // read in place from the index cache
	topicIdx map[string]int
	indexes  map[string]*Index // by analyzer key, built on demand
	tok      *tokTable         // token counts of the notes' lines, from the cache build
	session  []uint32          // notes' session numbers (Corpus.sessions), when computed

	conflicts []mdmem.ConflictMarker // git conflict markers in the files read
}

// Conflicts returns the git conflict markers of the memory files: their
// conflicted lines are not in the corpus (mdmem.ParseDoc), and a reader
// warns with mdmem.ConflictWarning. A corpus with conflicts is never
// cached, so every read finds them again until the merge is finished.
func (c *Corpus) Conflicts() []mdmem.ConflictMarker { return c.conflicts }

// NewCorpus copies the entries of a loaded memory.
func NewCorpus(m *mdmem.Memory) *Corpus {
	entries := m.Entries()
	c := &Corpus{notes: make([]Note, 0, len(entries))}
	for _, e := range entries {
		c.notes = append(c.notes, noteOf(e))
	}
	c.conflicts = m.Conflicts()
	for _, slug := range m.TopicSlugs() {
		c.Topics = append(c.Topics, topicInfo(slug, m.Topics[slug]))
	}
	c.init()
	return c
}

func topicInfo(slug string, d *mdmem.Doc) TopicInfo {
	ti := TopicInfo{Slug: slug}
	if fm := d.Front; fm != nil {
		ti.Description = fm.Description
		ti.Keywords = fm.Keywords
	}
	return ti
}

func (c *Corpus) init() {
	c.topicIdx = map[string]int{}
	for i, t := range c.Topics {
		c.topicIdx[t.Slug] = i
	}
	c.indexes = map[string]*Index{}
}

// Topic returns the front matter of a topic, or a bare TopicInfo.
func (c *Corpus) Topic(slug string) TopicInfo {
	if i, ok := c.topicIdx[slug]; ok {
		return c.Topics[i]
	}
	return TopicInfo{Slug: slug}
}

func noteOf(e *mdmem.Entry) Note {
	return Note{
		ID: e.ID, Category: e.Category, Content: e.Content, Source: e.Source,
		Created: e.Created, Updated: e.Updated, Expires: e.Expires,
		Scope: e.Scope, Refs: e.Refs, Tags: e.Tags, See: e.See, Notes: e.Notes,
		SupersededBy: e.SupersededBy, Place: e.Place, File: e.File, Topic: e.Topic,
		Section: e.Section, Line: e.Line,
	}
}

// LoadCorpus reads the memory in dir: from the index cache when it is
// fresh, else by parsing the Markdown files (and refreshing the cache when
// useCache is set: segments.go, only the changed files are parsed). Hand
// edits are always picked up: the cache is keyed on every memory file's
// size, mtime, ctime and inode (and content, for files written just before
// the cache).
func LoadCorpus(ctx context.Context, dir string, useCache bool) (*Corpus, error) {
	return LoadCorpusFor(ctx, dir, useCache, nil)
}

// LoadCorpusFor is LoadCorpus that also keeps every note's token count
// for cnt (the configured tokenizer) in the cache, so that later injects
// with that tokenizer need not load it.
func LoadCorpusFor(ctx context.Context, dir string, useCache bool, cnt Counter) (*Corpus, error) {
	// The view keeps writers from applying while the files are read, and
	// hides a write a killed process left half-applied (then the cache,
	// keyed on the disk, is not used).
	v, err := mdmem.OpenReadView(dir)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if v.Overlaid() {
		useCache = false
	}
	if useCache {
		c, err := loadSegments(ctx, v, dir, cnt)
		if err == nil || ctx.Err() != nil {
			return c, err
		}
	}
	return readCorpus(ctx, v, dir)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// hasFold reports whether list holds s, case-insensitively.
func hasFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return true
		}
	}
	return false
}
