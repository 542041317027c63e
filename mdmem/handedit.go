package mdmem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// Trailers of a person's hand-edit commit that ask memctl for a follow-up
// commit (see CommitHandEdits). They are read back from HEAD, so a run
// killed between the two commits is finished by the next one.
const (
	// TrailerRestore names an id deleted by hand and the file it was
	// deleted from: "pref-002 from MEMORY.md".
	TrailerRestore = "Memctl-Restore"
	// TrailerDuplicate names an id that the memory files hold twice.
	TrailerDuplicate = "Memctl-Duplicate"
)

// Commit operations (Memctl-Op) of hand edits.
const (
	OpHandEdit    = "hand-edit"     // the person's own edits, authored by them
	OpHandEditFix = "hand-edit-fix" // memctl's restore and renumber after one
)

// HandEdit is what CommitHandEdits did: the person's commit, the stray
// files it left alone, the ids the person deleted and what memctl did
// about deletions and duplicate ids. Notes renders it for stderr.
type HandEdit struct {
	Commit      string     `json:"commit,omitempty"`       // the person's commit
	Files       []string   `json:"files"`                  // memory files it holds
	Ignored     []string   `json:"ignored"`                // files in topics/ that are not memory files, left uncommitted
	Deleted     []string   `json:"deleted_ids"`            // managed ids the person deleted
	KeptDeleted bool       `json:"kept_deleted,omitempty"` // deletions allowed (--allow-delete, git.allow_hand_delete)
	Restored    []string   `json:"restored_ids"`           // ids memctl put back into the archive
	Renumbered  []Renumber `json:"renumbered"`             // duplicate ids memctl renumbered
	// Reforgotten are forgotten ids an edit brought back (a person's
	// revert, an old file kept by recover --keep-edits): memctl removes
	// them again, since a forgotten id is never live.
	Reforgotten []string `json:"reforgotten_ids,omitempty"`
	FixCommit   string   `json:"fix_commit,omitempty"` // memctl's commit of the restores, renumbers and removals
}

// Renumber is the later occurrence of a duplicated id given a fresh id.
type Renumber struct {
	From       string `json:"from"`
	To         string `json:"to"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Occurrence int    `json:"occurrence"` // 2 for the second entry with the id
}

// String describes the renumbering for the commit body and stderr.
func (r Renumber) String() string {
	return fmt.Sprintf("renumbered %s (%s occurrence in %s) to %s", r.From, ordinal(r.Occurrence), r.File, r.To)
}

func ordinal(n int) string {
	if words := []string{"first", "second", "third", "fourth", "fifth"}; n >= 1 && n <= len(words) {
		return words[n-1]
	}
	return fmt.Sprintf("%dth", n)
}

// Empty reports whether nothing happened and nothing needs saying.
func (h *HandEdit) Empty() bool {
	return h == nil || h.Commit == "" && h.FixCommit == "" && len(h.Ignored) == 0
}

// Notes returns what the user should be told, one line each (no prefix).
func (h *HandEdit) Notes() []string {
	if h == nil {
		return nil
	}
	var out []string
	if len(h.Ignored) > 0 {
		out = append(out, fmt.Sprintf("ignored %s: not memory files (topics/<name>.md), left uncommitted; move them out of %s/ or delete them",
			strings.Join(h.Ignored, ", "), TopicDir))
	}
	if h.KeptDeleted {
		out = append(out, fmt.Sprintf("hand edit deleted %s: kept deleted (allowed by --allow-delete or git.allow_hand_delete); commit %.12s^ still has them",
			strings.Join(h.Deleted, ", "), h.Commit))
	}
	if len(h.Restored) > 0 {
		out = append(out, fmt.Sprintf("hand edit deleted %s: restored into the archive of %s as \"removed by hand\" (commit %.12s); pass --allow-delete or set git.allow_hand_delete = true to keep such deletions",
			strings.Join(h.Restored, ", "), MainFile, h.FixCommit))
	}
	for _, r := range h.Renumbered {
		out = append(out, fmt.Sprintf("duplicate id: %s:%d: %s (commit %.12s)", r.File, r.Line, r, h.FixCommit))
	}
	if len(h.Reforgotten) > 0 {
		out = append(out, fmt.Sprintf("an edit brought back %s, which were forgotten: removed again (commit %.12s); memctl forget's tombstones never expire",
			strings.Join(h.Reforgotten, ", "), h.FixCommit))
	}
	return out
}

// CommitHandEdits records uncommitted changes a person made to memory files
// as their own commit, authored by the person when git knows them. The
// caller holds the lock.
//
// Only memory files are committed: MEMORY.md, the config and the regular
// files topics/<slug>.md. Anything else in topics/ (editor swap and backup
// files, notes, subdirectories, symlinks) is left uncommitted and listed in
// Ignored. The commit's Memctl-Entry trailers name the ids changed in the
// committed files.
//
// The person's commit holds exactly what they wrote. If it deleted
// managed ids (ids in no memory file any more), and git.allow_hand_delete
// is off, memctl then restores those entries into the archive, noted
// "removed by hand on <date>", in a commit of its own; if it left an id on
// two entries, that commit gives the later one (file order: MEMORY.md, then
// topics by name) a fresh id. It returns what it did; nothing to do gives
// an empty HandEdit.
func (s *Store) CommitHandEdits(ctx context.Context) (*HandEdit, error) {
	rep := &HandEdit{}
	paths, ignored, err := s.handEditPaths(ctx)
	if err != nil {
		return nil, err
	}
	rep.Ignored = ignored
	changed, err := s.Repo.Changed(ctx, paths, nil)
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		if err := s.commitPersonEdits(ctx, changed, rep); err != nil {
			return nil, err
		}
	}
	if err := s.finishHandEdit(ctx, rep); err != nil {
		return nil, fmt.Errorf("restore or renumber after a hand edit: %w (the next memctl write retries)", err)
	}
	return rep, nil
}

// isTopicFileName reports whether name (in topics/) is a memory file name:
// <slug>.md with a valid slug, so not hidden.
func isTopicFileName(name string) bool {
	slug, ok := strings.CutSuffix(name, ".md")
	return ok && ValidSlug(slug) == nil
}

// handEditPaths returns the paths a hand edit may commit (MEMORY.md, the
// config, the regular topic files on disk and the topic files HEAD has that
// are gone from disk) and the files in topics/ it must not commit that are
// new or changed (or not regular files).
func (s *Store) handEditPaths(ctx context.Context) (paths, ignored []string, err error) {
	paths = []string{MainFile, ConfigPath}
	onDisk := map[string]bool{}
	td := filepath.Join(s.Dir, TopicDir)
	fi, err := os.Lstat(td)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, err
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s is not a directory (a symlink or file there is refused: memctl only reads inside the memory directory)", td)
	default:
		ents, err := os.ReadDir(td)
		if err != nil {
			return nil, nil, err
		}
		var strayFiles []string
		for _, de := range ents {
			rel := TopicDir + "/" + de.Name()
			onDisk[rel] = true
			switch {
			case de.Type().IsRegular() && isTopicFileName(de.Name()):
				paths = append(paths, rel)
			case de.Type().IsRegular() && gitPathOK(de.Name()):
				strayFiles = append(strayFiles, rel)
			case de.IsDir():
				ignored = append(ignored, rel+"/")
			default:
				ignored = append(ignored, rel)
			}
		}
		if len(strayFiles) > 0 {
			// Report only the stray files git does not have as they are.
			ch, err := s.Repo.Changed(ctx, strayFiles, nil)
			if err != nil {
				return nil, nil, err
			}
			ignored = append(ignored, ch...)
		}
	}
	head, err := s.Repo.HeadFiles(ctx, TopicDir)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range head {
		if !onDisk[p] && isTopicFileName(path.Base(p)) {
			paths = append(paths, p) // deleted by hand
		}
	}
	sort.Strings(ignored)
	return paths, ignored, nil
}

// firstByID records the first entry of each id of d not yet in m.
func firstByID(m map[string]*Entry, d *Doc) {
	for _, e := range d.Entries {
		if _, ok := m[e.ID]; !ok && e.ID != "" {
			m[e.ID] = e
		}
	}
}

// describeEntryChanges says, for a hand edit's commit body, which of ids
// were added, changed, moved, archived, re-dated or removed, e.g.
// "Entries: changed pref-001; moved todo-002 (MEMORY.md → topics/ops.md)."
func describeEntryChanges(ids []string, before, after map[string]*Entry) string {
	byChange := map[string][]string{}
	for _, id := range uniqueSorted(ids) {
		old, now := before[id], after[id]
		c := entryChange(old, now)
		if c == "" {
			continue
		}
		item := id
		if (c == ChangeMoved || c == ChangeArchived) && old.File != now.File {
			item += " (" + old.File + " → " + now.File + ")"
		}
		byChange[c] = append(byChange[c], item)
	}
	var parts []string
	for _, c := range []string{ChangeAdded, ChangeChanged, ChangeMoved, ChangeArchived, ChangeMeta, ChangeRemoved} {
		label := c
		if c == ChangeMeta {
			label = "changed the metadata of"
		}
		if len(byChange[c]) > 0 {
			parts = append(parts, label+" "+strings.Join(byChange[c], ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Entries: " + strings.Join(parts, "; ") + "."
}

// gitPathOK reports whether git could record a file of this name (the
// others are ignored without asking git).
func gitPathOK(name string) bool {
	return !strings.ContainsAny(name, "\\\n\r\x00") && !strings.EqualFold(name, ".git")
}

// commitPersonEdits commits the changed memory files as the person and
// fills rep. Its message asks for the follow-up (TrailerRestore,
// TrailerDuplicate) that finishHandEdit makes.
func (s *Store) commitPersonEdits(ctx context.Context, changed []string, rep *HandEdit) error {
	if err := s.refuseNewSecrets(ctx, changed); err != nil {
		return err
	}
	var ids []string
	removedFrom := map[string]string{} // id → file it was deleted from
	added := false
	before, after := map[string]*Entry{}, map[string]*Entry{} // first entry of each id, for the body
	for _, p := range changed {
		if p != MainFile && !strings.HasPrefix(p, TopicDir+"/") {
			continue
		}
		old, _, err := s.Repo.ReadHead(ctx, p)
		if err != nil {
			return err
		}
		cur, err := ReadMemoryFile(s.Dir, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		a, b := ParseDoc(p, old), ParseDoc(p, cur)
		ids = append(ids, diffIDs(a, b)...)
		firstByID(before, a)
		firstByID(after, b)
		count := map[string]int{}
		for _, e := range a.Entries {
			count[e.ID]++
		}
		for _, e := range b.Entries {
			if count[e.ID]--; count[e.ID] < 0 && e.ID != "" {
				added = true // a new id here, or a second copy of one
			}
		}
		for _, e := range a.Entries {
			if e.ID != "" && count[e.ID] > 0 {
				if _, seen := removedFrom[e.ID]; !seen {
					removedFrom[e.ID] = p
				}
			}
		}
	}
	var dups []string
	if len(removedFrom) > 0 || added {
		// Entries moved between files are not deleted; ids new here may
		// duplicate ids elsewhere.
		mem, err := s.Load(ctx)
		if err != nil {
			return err
		}
		for id := range removedFrom {
			if mem.Find(id) != nil {
				delete(removedFrom, id)
			}
		}
		dups = duplicateIDs(mem)
	}
	for id := range removedFrom {
		rep.Deleted = append(rep.Deleted, id)
	}
	sort.Strings(rep.Deleted)
	rep.KeptDeleted = len(rep.Deleted) > 0 && s.Config.Git.AllowHandDelete

	msg := CommitMessage{
		Subject: "hand edit: " + strings.Join(changed, ", "),
		Body:    "Uncommitted edits of memory files, recorded by memctl before it writes.",
		Op:      OpHandEdit,
		Entries: ids,
	}
	var body []string
	if what := describeEntryChanges(ids, before, after); what != "" {
		body = append(body, what)
	}
	switch {
	case rep.KeptDeleted:
		body = append(body, fmt.Sprintf("Deleted by hand: %s. Kept deleted (git.allow_hand_delete or --allow-delete).", strings.Join(rep.Deleted, ", ")))
	case len(rep.Deleted) > 0:
		body = append(body, fmt.Sprintf("Deleted by hand: %s. memctl restores them into the archive in the next commit.", strings.Join(rep.Deleted, ", ")))
		for _, id := range rep.Deleted {
			msg.Extra = append(msg.Extra, [2]string{TrailerRestore, id + " from " + removedFrom[id]})
		}
	}
	if len(dups) > 0 {
		body = append(body, fmt.Sprintf("Ids on more than one entry: %s. memctl renumbers the later entries in the next commit.", strings.Join(dups, ", ")))
		for _, id := range dups {
			msg.Extra = append(msg.Extra, [2]string{TrailerDuplicate, id})
		}
	}
	if len(rep.Ignored) > 0 {
		body = append(body, "Not committed (not memory files): "+strings.Join(rep.Ignored, ", ")+".")
	}
	if len(body) > 0 {
		msg.Body += "\n\n" + strings.Join(body, "\n\n")
	}
	author, ok := s.Repo.PersonSignature()
	if !ok {
		author = gitstore.Signature{Name: "memctl (hand edit)", Email: s.Config.Git.AuthorEmail}
	}
	text, err := s.message(msg)
	if err != nil {
		return err
	}
	rep.Files = changed
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Abort()
	tx.author = author
	for _, p := range changed {
		cur, err := ReadMemoryFile(s.Dir, p)
		if errors.Is(err, fs.ErrNotExist) {
			cur, err = nil, nil
		}
		if err != nil {
			return err
		}
		if err := tx.Put(ctx, p, cur, cur); err != nil {
			return err
		}
	}
	rep.Commit, err = tx.commitText(ctx, text)
	return err
}

// refuseNewSecrets returns a HandEditSecretError when a changed file
// holds a secret its committed version does not: before anything is
// committed, so the secret never enters git history.
func (s *Store) refuseNewSecrets(ctx context.Context, changed []string) error {
	var found []SecretLine
	for _, p := range changed {
		old, _, err := s.Repo.ReadHead(ctx, p)
		if err != nil {
			return err
		}
		cur, err := ReadMemoryFile(s.Dir, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		found = append(found, NewSecretLines(p, old, cur)...)
	}
	if len(found) > 0 {
		return &HandEditSecretError{Lines: found}
	}
	return nil
}

// duplicateIDs returns the ids that more than one entry of m has, sorted.
func duplicateIDs(m *Memory) []string {
	n := map[string]int{}
	var out []string
	for _, e := range m.Entries() {
		if e.ID == "" {
			continue
		}
		if n[e.ID]++; n[e.ID] == 2 {
			out = append(out, e.ID)
		}
	}
	sort.Strings(out)
	return out
}

// FindAll returns every entry with the given id, in file order. More than
// one is a duplicate id written by hand, which the next memctl write
// renumbers.
func (m *Memory) FindAll(id string) []*Entry {
	var out []*Entry
	for _, e := range m.Entries() {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// textsForgottenSince returns the live entries with an id that memctl's
// commit base did not hold (hand edits since brought them in) and whose
// text a tombstone names: what forget, or a sync merge honouring another
// machine's forget, removed and an edit put back under its own id. Only
// the files whose blob differs from base are read. Entries without an id
// (a person's own lines) are left alone.
func (s *Store) textsForgottenSince(ctx context.Context, base string, mem *Memory, tombData []byte, gone map[string]bool) ([]*Entry, error) {
	if base == "" || len(tombData) == 0 {
		return nil, nil
	}
	head, err := s.Repo.HeadHash(ctx)
	if err != nil || head == "" || head == base {
		return nil, err
	}
	then, err := s.Repo.TreeHashes(ctx, base)
	if err != nil {
		return nil, err
	}
	now, err := s.Repo.TreeHashes(ctx, head)
	if err != nil {
		return nil, err
	}
	var tombs *Tombstones
	var out []*Entry
	for _, d := range mem.Docs() {
		if then[d.Path] == now[d.Path] {
			continue
		}
		held := map[string]bool{}
		if h := then[d.Path]; h != "" {
			data, err := s.Repo.ReadBlob(ctx, h)
			if err != nil {
				return nil, err
			}
			for _, e := range ParseDoc(d.Path, data).Entries {
				held[e.ID] = true
			}
		}
		for _, e := range d.Entries {
			if e.ID == "" || held[e.ID] || gone[e.ID] {
				continue
			}
			if tombs == nil {
				if tombs, err = s.tombstonesFrom(tombData); err != nil {
					return nil, err
				}
			}
			if tombs.Check(e.Content) != nil {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// handEditSearch bounds how many commits back finishHandEdit looks for
// hand-edit commits that ask for a follow-up.
const handEditSearch = 200

// finishHandEdit makes memctl's follow-up to hand-edit commits whose
// trailers ask for one: entries deleted by hand go back into the archive,
// and the later entries of a duplicated id get fresh ids. It looks at
// every commit since memctl's own last one (hand-edit commits and a
// person's plain commits), so a follow-up that failed or was killed is
// made by the next run even when further commits came first. It is
// idempotent: an entry back already is left alone.
func (s *Store) finishHandEdit(ctx context.Context, rep *HandEdit) error {
	// Decided by hash: when HEAD is the commit the last complete check
	// ran on, nothing was committed since (no hand edit, no person's
	// commit or pull), and the check, which reads the whole memory, has
	// nothing to find.
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return err
	}
	checked := s.abs(handEditCheckedPath)
	if b, err := os.ReadFile(checked); err == nil && head != "" && strings.TrimSpace(string(b)) == head {
		return nil
	}
	if err := s.finishHandEditCheck(ctx, rep); err != nil {
		return err
	}
	if head, err = s.Repo.HeadHash(ctx); err == nil && head != "" && EnsureDir(s.Dir, CacheDir) == nil {
		_ = WriteFileAtomic(ctx, checked, []byte(head+"\n"), PrivateFileMode) // a cache: best effort
	}
	return nil
}

// handEditCheckedPath holds the commit the hand-edit follow-up last
// checked completely (finishHandEdit).
const handEditCheckedPath = CacheDir + "/handedit-checked"

// finishHandEditCheck is finishHandEdit's check: restores owed by recent
// hand-edit commits, repeated ids renumbered, id marks raised.
func (s *Store) finishHandEditCheck(ctx context.Context, rep *HandEdit) error {
	cs, err := s.Repo.Log(ctx, nil, handEditSearch)
	if err != nil || len(cs) == 0 {
		return err
	}
	type restoreReq struct{ id, from, commit string }
	var restore []restoreReq
	var base string // memctl's own commit the edits since are checked against
	for _, c := range cs {
		ops := c.Trailers[TrailerOp]
		if len(ops) > 0 && ops[0] != OpHandEdit {
			base = c.Hash
			break // memctl's own commit: it made any follow-up owed before it
		}
		for _, v := range c.Trailers[TrailerRestore] {
			if id, from, ok := strings.Cut(v, " from "); ok {
				restore = append(restore, restoreReq{id, from, c.Hash})
			}
		}
	}
	mem, err := s.Load(ctx)
	if err != nil && len(restore) == 0 {
		return nil // nothing asked for; the caller's own read reports it
	}
	if err != nil {
		return err
	}
	// Ids a person wrote by hand are never handed out again, even once
	// deleted (--allow-delete) or reverted.
	marks, random := idMarks(mem)
	_ = s.raiseLocalMarks(ctx, marks, random...) // a cache: best effort
	// A forgotten id is never live, whatever brought it back: a person's
	// revert, a file from before a merge kept by recover --keep-edits.
	tombData, err := readFileIfExists(s.abs(TombstonesPath))
	if err != nil {
		return err
	}
	gone := tombstoneIDs(tombData)
	var back []*Entry
	for _, e := range mem.Entries() {
		if e.ID != "" && gone[e.ID] {
			back = append(back, e)
		}
	}
	// So is a forgotten text under another id that the edits brought in
	// (a file from before a sync merge that dropped it, kept by recover
	// --keep-edits): the merge's forget-wins drop stands.
	brought, err := s.textsForgottenSince(ctx, base, mem, tombData, gone)
	if err != nil {
		return err
	}
	back = append(back, brought...)
	// Duplicated ids are renumbered whatever brought them in: a hand edit
	// memctl committed, or a person's own git commit or pull.
	if len(restore) == 0 && len(back) == 0 && mem.CheckUniqueIDs() == nil {
		return nil
	}
	if err := mem.CheckEditable(); err != nil {
		return err
	}
	st, err := s.ReadState()
	if err != nil {
		return err
	}
	alloc := NewIDAllocator(st, mem)
	ed := mem.Edit()
	var body, entries []string
	day := s.Now().UTC().Format("2006-01-02")
	for _, e := range back {
		ed.Remove(e)
		rep.Reforgotten = append(rep.Reforgotten, e.ID)
		entries = append(entries, e.ID)
		body = append(body, fmt.Sprintf("removed %s again from %s: it was forgotten, and an edit brought it back", e.ID, e.File))
	}
	for _, r := range restore {
		id, from := r.id, r.from
		if gone[id] || mem.Find(id) != nil || slices.Contains(rep.Restored, id) || (from != MainFile && !(path.Dir(from) == TopicDir && isTopicFileName(path.Base(from)))) {
			continue // back already, or not a trailer memctl wrote
		}
		src, ok, err := s.Repo.ReadParent(ctx, r.commit, from)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		doc := ParseDoc(from, src)
		var old *Entry
		for _, e := range doc.Entries {
			if e.ID == id {
				old = e
				break
			}
		}
		if old == nil {
			continue
		}
		ne := *old
		ne.Notes = append(append([]string(nil), old.Notes...), "removed by hand on "+day)
		if _, err := ed.insert(&ne, Target{Place: PlaceArchive}, nestedOf(doc, old)); err != nil {
			return err
		}
		rep.Restored = append(rep.Restored, id)
		entries = append(entries, id)
		if p, n, ok := splitID(id); ok && n > alloc.state.LastID[p] {
			alloc.state.LastID[p] = n // never handed out to a duplicate below
			alloc.dirty = true
		}
		body = append(body, fmt.Sprintf("restored %s (deleted by hand from %s in %.12s) into the archive", id, from, r.commit))
	}
	seen := map[string]int{}
	for _, e := range mem.Entries() {
		if e.ID == "" || gone[e.ID] {
			continue
		}
		if seen[e.ID]++; seen[e.ID] == 1 {
			continue
		}
		prefix, _, ok := splitID(e.ID)
		if !ok {
			continue
		}
		to, err := alloc.next(prefix, prefix)
		if err != nil {
			return err
		}
		r := Renumber{From: e.ID, To: to, File: e.File, Line: e.Line, Occurrence: seen[e.ID]}
		if err := ed.renumber(e, r.To); err != nil {
			return err
		}
		rep.Renumbered = append(rep.Renumbered, r)
		entries = append(entries, r.From, r.To)
		body = append(body, r.String())
	}
	if len(body) == 0 {
		return nil
	}
	files, err := ed.Changed()
	if err != nil {
		return err
	}
	if data, ok := alloc.StateFile(); ok {
		files[StatePath] = data
	}
	var what []string
	if n := len(rep.Restored); n > 0 {
		what = append(what, fmt.Sprintf("restore %d %s deleted by hand", n, plural(n, "entry", "entries")))
	}
	if n := len(rep.Renumbered); n > 0 {
		what = append(what, fmt.Sprintf("renumber %d duplicate %s", n, plural(n, "id", "ids")))
	}
	if n := len(rep.Reforgotten); n > 0 {
		what = append(what, fmt.Sprintf("remove %d forgotten %s brought back", n, plural(n, "entry", "entries")))
	}
	rep.FixCommit, err = s.Write(ctx, files, CommitMessage{
		Subject: "hand edit: " + strings.Join(what, ", "),
		Body:    strings.Join(body, "\n"),
		Op:      OpHandEditFix,
		Entries: entries,
	})
	return err
}

// renumber gives entry e the id id in place: only the "[old]" of its
// first line changes.
func (ed *Editor) renumber(e *Entry, id string) error {
	doc := ed.m.Doc(e.File)
	if doc == nil {
		return fmt.Errorf("renumber %s: unknown file %s", e.ID, e.File)
	}
	i := strings.Index(string(doc.Src[e.Start:e.HeadEnd]), "["+e.ID+"]")
	if i < 0 {
		return fmt.Errorf("renumber %s: no [%s] at %s:%d", e.ID, e.ID, e.File, e.Line)
	}
	at := e.Start + i + 1
	ed.removed[e] = true
	ed.inserted = append(ed.inserted, id)
	ed.add(e.File, at, at+len(e.ID), id)
	return nil
}

// diffIDs returns ids added, removed or changed between two versions.
func diffIDs(a, b *Doc) []string {
	before := map[string]string{}
	for _, e := range a.Entries {
		before[e.ID] = e.Raw
	}
	var ids []string
	for _, e := range b.Entries {
		if raw, ok := before[e.ID]; !ok || raw != e.Raw {
			ids = append(ids, e.ID)
		}
		delete(before, e.ID)
	}
	for id := range before {
		ids = append(ids, id)
	}
	return uniqueSorted(ids)
}
