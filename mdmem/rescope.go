package mdmem

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// OldProjectScope is the scope memctl gave the project at root before
// scopes held the project's full path: "project:" and the slug of its
// base name ("project:app" for ~/work/app). Entries hooks, MCP or
// project:. stored then carry it; Rescope moves them to ProjectScopeOf.
// "" when the base name gives no slug.
func OldProjectScope(root string) string {
	if name := Slugify(filepath.Base(filepath.Clean(root))); name != "" {
		return "project:" + name
	}
	return ""
}

// oldProjectName returns the name of a scope of the old project form:
// "project:<name>" where the name is a path's base name (no "/", no
// "~"); "" for any other scope.
func oldProjectName(scope string) string {
	name, ok := strings.CutPrefix(scope, "project:")
	if !ok || name == "" || strings.ContainsAny(name, "/~\\") {
		return ""
	}
	return name
}

// oldScopes finds the entries whose scope is the old form of a project
// (OldProjectScope) that the memory also names by its full path: the
// hooks and MCP now inject that project's entries by the path, so these
// are not injected there any more. A project:<name> no path scope shares
// a base name with is a scope a person chose: not reported. It is fed one
// file at a time and keeps, of each entry, only an old-form scope and
// where it is.
type oldScopes struct {
	paths map[string]string // old form → a path scope of that base name
	found []oldScoped       // every entry's old-form scopes, in file order
}

type oldScoped struct {
	file, id, scope string
	line            int
}

// note records what entries tell: the path scopes, and the old-form ones.
func (o *oldScopes) note(entries []*Entry) {
	for _, e := range entries {
		for _, sc := range e.Scope {
			if name, ok := strings.CutPrefix(sc, "project:"); ok && strings.Contains(name, "/") {
				if old := OldProjectScope(name); old != "" {
					o.paths[strings.ToLower(old)] = strings.Clone(sc)
				}
			}
			if e.ID != "" && oldProjectName(sc) != "" {
				o.found = append(o.found, oldScoped{e.File, strings.Clone(e.ID), strings.Clone(sc), e.Line})
			}
		}
	}
}

// problems reports the old-form scopes the memory also names by path.
func (o *oldScopes) problems() []Problem {
	var ps []Problem
	for _, f := range o.found {
		if p, ok := o.paths[strings.ToLower(f.scope)]; ok {
			ps = append(ps, Problem{File: f.file, Line: f.line, Message: fmt.Sprintf(
				"entry %s has scope %s, a project's old scope (its directory's base name); the project is now %s, so hooks and MCP there no longer see it: memctl rescope %s %s", f.id, f.scope, p, f.scope, p)})
		}
	}
	return ps
}

// RescopeResult is what Rescope did: the entries moved from one scope to
// the other and the commit (none when no entry had the scope or on a dry
// run).
type RescopeResult struct {
	From     string    `json:"from"`
	To       string    `json:"to"`
	IDs      []string  `json:"entry_ids"`
	Commit   string    `json:"commit,omitempty"`
	HandEdit *HandEdit `json:"hand_edit,omitempty"`
}

// Rescope gives every entry (core, topics, Pending and archive) whose
// scopes hold from (case aside) the scope to instead, in one commit of
// the write transaction, after committing a person's uncommitted edits.
// An entry that already holds to keeps one copy. With dryRun it only
// lists the entries. Queued candidates are not rewritten: consolidated
// later, they keep the scope they were queued with.
func (s *Store) Rescope(ctx context.Context, from, to string, dryRun bool) (*RescopeResult, error) {
	for _, sc := range []string{from, to} {
		if err := ValidScope(sc); err != nil {
			return nil, err
		}
	}
	if strings.EqualFold(from, to) {
		return nil, fmt.Errorf("%w: %s is already the scope to move to", ErrBadScope, from)
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := &RescopeResult{From: from, To: to, IDs: []string{}}
	if !dryRun {
		he, err := s.CommitHandEdits(ctx)
		if err != nil {
			return nil, err
		}
		if !he.Empty() {
			r.HandEdit = he
		}
	}
	m, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.CheckUniqueIDs(); err != nil {
		return nil, err
	}
	ed := m.Edit()
	ed.SetMaxBytes(s.Config.Files.MaxBytes)
	for _, e := range m.Entries() {
		scopes, moved := rescoped(e.Scope, from, to)
		if !moved || e.ID == "" {
			continue
		}
		ne := *e
		ne.Scope = scopes
		ed.Replace(e, &ne)
		r.IDs = append(r.IDs, e.ID)
	}
	if dryRun || len(r.IDs) == 0 {
		return r, nil
	}
	files, err := ed.Changed()
	if err != nil {
		return nil, err
	}
	r.Commit, err = s.Write(ctx, files, CommitMessage{
		Subject: fmt.Sprintf("rescope %s → %s: %d %s", from, to, len(r.IDs), map[bool]string{true: "entry", false: "entries"}[len(r.IDs) == 1]),
		Op:      "rescope",
		Entries: r.IDs,
	})
	return r, err
}

// rescoped returns scopes with from (case aside) replaced by to, to kept
// once, and whether from was there.
func rescoped(scopes []string, from, to string) ([]string, bool) {
	var out []string
	moved, has := false, false
	for _, sc := range scopes {
		switch {
		case strings.EqualFold(sc, from):
			moved = true
			if !has {
				out, has = append(out, to), true
			}
		case strings.EqualFold(sc, to):
			if !has {
				out, has = append(out, sc), true
			}
		default:
			out = append(out, sc)
		}
	}
	return out, moved
}
