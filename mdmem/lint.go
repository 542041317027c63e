package mdmem

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem/redact"
)

// Lint returns the format problems of the memory, sorted by file and line
// (Linter).
func (m *Memory) Lint() []Problem {
	l := NewLinter(m.Dir)
	for _, d := range m.Docs() {
		l.Check(d)
	}
	return l.Problems()
}

// Linter finds the format problems of a memory one file at a time: what
// the parser could not read, plus structural checks (duplicate ids,
// entries without ids, ids whose prefix disagrees with their section,
// unknown sections, a topic index out of step with topics/), secrets, and
// instruction-like entries outside Pending confirmation. Of the files it
// has checked it keeps only what the checks across files need: each id
// and where it first was, the topic index, and the project scopes named.
type Linter struct {
	dir     string
	ps      []Problem
	first   map[string]idPlace // id → where it first appears
	files   []string           // the files checked, for idPlace
	indexed map[string]bool    // the paths MEMORY.md's topic index lists
	scopes  oldScopes
}

// idPlace is where an id first appears: files[file], line.
type idPlace struct{ file, line int32 }

// NewLinter returns a Linter of the memory in dir; Check its files in
// Walk's order (MEMORY.md first), then ask for the Problems.
func NewLinter(dir string) *Linter {
	return &Linter{dir: dir, first: map[string]idPlace{}, indexed: map[string]bool{}, scopes: oldScopes{paths: map[string]string{}}}
}

// Check lints one memory file. It keeps nothing that points into d.
func (l *Linter) Check(d *Doc) {
	add := func(file string, line int, format string, args ...any) {
		l.ps = append(l.ps, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	l.files = append(l.files, d.Path)
	l.ps = append(l.ps, d.Problems...)
	for _, e := range d.Entries {
		switch first, dup := l.first[e.ID]; {
		case e.ID == "":
			add(e.File, e.Line, "list item without an [id]: memctl keeps it but cannot manage it")
		case dup:
			add(e.File, e.Line, "duplicate id %s (first at %s:%d)", e.ID, l.files[first.file], first.line)
		default:
			l.first[strings.Clone(e.ID)] = idPlace{int32(len(l.files) - 1), int32(e.Line)}
		}
		if e.ID == "" {
			continue
		}
		if _, ok := CategoryOfID(e.ID); !ok {
			add(e.File, e.Line, "id %s has an unknown prefix", e.ID)
		}
		if e.Place == PlaceCore {
			if c, ok := CategoryOfID(e.ID); ok && c.Name != e.Category {
				add(e.File, e.Line, "id %s is a %s but sits under %q", e.ID, c.Name, e.Section)
			}
		}
		if e.Place == PlaceOther {
			add(e.File, e.Line, "entry %s is in section %q, which memctl does not know; it is kept but never injected", e.ID, e.Section)
		}
		if strings.TrimSpace(e.Content) == "" {
			add(e.File, e.Line, "entry %s has no content", e.ID)
		}
	}
	if d.Path == MainFile {
		l.ps = append(l.ps, lintHeadings(d)...)
		l.ps = append(l.ps, l.lintIndex(d)...)
	} else if !l.indexed[d.Path] {
		add(d.Path, 1, "topic file is not listed in the topic index of MEMORY.md")
	}
	l.ps = append(l.ps, lintGovernance(d)...)
	l.scopes.note(d.Entries)
}

// Problems returns the problems of the files checked, sorted by file
// (MEMORY.md first) and line.
func (l *Linter) Problems() []Problem {
	ps := append(l.ps, l.scopes.problems()...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File == MainFile || ps[j].File != MainFile && ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
	return ps
}

// lintGovernance reports what a person's edit may have brought in:
// secrets anywhere in a memory file (by kind and line, never quoted), and
// entries in the core profile or a topic that read like instructions to
// a model (entries a person confirmed aside).
func lintGovernance(d *Doc) []Problem {
	var ps []Problem
	src := string(d.Src)
	line, at := 1, 0
	report := func(off int, f redact.Finding, where string) {
		line += strings.Count(src[at:off+f.Start], "\n")
		at = off + f.Start
		ps = append(ps, Problem{File: d.Path, Line: line, Message: fmt.Sprintf(
			"secret (%s)%s: remove it from the file, and from git history if it was committed", f.Kind, where)})
	}
	// Scan entry by entry, and the text between entries, rather than
	// the whole file: each piece wakes only the detectors whose
	// keywords it holds.
	prev := 0
	for _, e := range d.Entries {
		if e.Start < prev {
			continue // nested in the previous entry's bytes
		}
		for _, f := range redact.Scan(src[prev:e.Start]) {
			report(prev, f, "")
		}
		where := ""
		if e.ID != "" {
			where = " in entry " + e.ID
		}
		for _, f := range redact.Scan(src[e.Start:e.End]) {
			report(e.Start, f, where)
		}
		prev = e.End
	}
	for _, f := range redact.Scan(src[prev:]) {
		report(prev, f, "")
	}
	for _, e := range d.Entries {
		if e.Place != PlaceCore && e.Place != PlaceTopic {
			continue
		}
		confirmed := false
		for _, n := range e.Notes {
			confirmed = confirmed || strings.EqualFold(n, ConfirmedNote)
		}
		if why := InstructionNote(e.Content); why != "" && !confirmed {
			ps = append(ps, Problem{File: e.File, Line: e.Line, Message: fmt.Sprintf(
				"entry %s %s; it is injected into every prompt: reword it, or move it to Pending confirmation", orID(e), why)})
		}
	}
	return ps
}

func orID(e *Entry) string {
	if e.ID != "" {
		return e.ID
	}
	return "without id"
}

// lintHeadings reports unknown top-level sections and a known section (or
// core subsection) that appears twice: memctl only ever writes to the first.
func lintHeadings(main *Doc) []Problem {
	var ps []Problem
	known := []string{TitleCore, TitleIndex, TitleArchive, TitlePending}
	first := map[string]int{}
	h1 := ""
	for _, h := range main.Headings {
		if h.Level > 2 {
			continue
		}
		if h.Level == 1 {
			h1 = strings.ToLower(h.Title)
		}
		key := h1
		if h.Level == 2 {
			if !strings.EqualFold(h1, TitleCore) || subsectionRank(h.Title) == subsectionRank("") && !strings.EqualFold(h.Title, TitlePending) {
				continue
			}
			key += "\x00" + strings.ToLower(h.Title)
		}
		if line, dup := first[key]; dup {
			ps = append(ps, Problem{File: MainFile, Line: h.Line, Message: fmt.Sprintf("heading %q appears again (first at line %d); memctl writes to the first only: merge the two sections", h.Title, line)})
			continue
		}
		first[key] = h.Line
		if h.Level == 2 {
			continue
		}
		ok := false
		for _, k := range known {
			ok = ok || strings.EqualFold(h.Title, k)
		}
		if !ok {
			ps = append(ps, Problem{File: MainFile, Line: h.Line, Message: fmt.Sprintf("unknown section %q (known: %s); kept verbatim", h.Title, strings.Join(known[:3], ", "))})
		}
	}
	if h := main.orphanCore(); h != nil {
		ps = append(ps, Problem{File: MainFile, Line: h.Line, Message: fmt.Sprintf("heading %q is not under \"# %s\", which is missing: memctl will not add a second core; name the section above it \"# %s\"", h.Title, TitleCore, TitleCore)})
	}
	return ps
}

// orphanCore returns the first core subsection heading ("## User
// preferences", "## Pending confirmation", …) of a MEMORY.md that has no
// "# Core profile": the person renamed or removed the core's heading.
// nil when the core heading is there or no such subsection is.
func (d *Doc) orphanCore() *Heading {
	if _, _, ok := d.sectionRange(TitleCore, ""); ok {
		return nil
	}
	for i, h := range d.Headings {
		if h.Level == 2 && (subsectionRank(h.Title) != subsectionRank("") || strings.EqualFold(h.Title, TitlePending)) {
			return &d.Headings[i]
		}
	}
	return nil
}

// lintIndex checks the topic index of MEMORY.md and notes the paths it
// lists, for the topic files checked after it.
func (l *Linter) lintIndex(main *Doc) []Problem {
	var ps []Problem
	for _, il := range main.Index {
		l.indexed[strings.Clone(il.Path)] = true
		slug := TopicSlug(il.Path)
		if !strings.HasPrefix(il.Path, TopicDir+"/") || ValidSlug(slug) != nil || TopicPath(slug) != il.Path {
			ps = append(ps, Problem{File: MainFile, Line: il.Line, Message: fmt.Sprintf("topic index points to %q, which is not a topics/<name>.md path", il.Path)})
			continue
		}
		if _, err := os.Lstat(filepath.Join(l.dir, filepath.FromSlash(il.Path))); err != nil {
			ps = append(ps, Problem{File: MainFile, Line: il.Line, Message: fmt.Sprintf("topic index points to %s, which does not exist", il.Path)})
		}
	}
	return ps
}
