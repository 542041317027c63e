package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
)

// The invariants of the simulation, checked after every step against HEAD
// (what is committed) and the model:
//
//	vanished         an id once committed stays committed (any section),
//	                 unless a person deleted it by hand
//	id-reuse         an id keeps its fact (subject word) unless a person
//	                 changed it; no id is committed twice (duplicate-id)
//	exactly-once     a candidate is consumed at most once: one ledger line,
//	                 one Memctl-Consumed trailer in all of history
//	candidate-lost   a queued candidate is consumed, still queued, or held
//	value-lost       a consumed candidate's text exists somewhere (live,
//	                 pending, archive), or the entry the ledger names holds
//	                 its subject and numbers
//	category-lost    a consumed candidate whose text is committed is
//	                 committed in the category it was given in (or a newer
//	                 value of its fact is, or a person rejected the text)
//	duplicated-text  a text is live at most as often as it was introduced
//	import-atomic    an import is all or nothing; one that exited 0 is all
//	invented         no invented fact (Zorblax) or leaked key is committed
//	state-regress    state.json's high-water marks never go down
//	fsck, head       git fsck --no-dangling is clean, HEAD resolves
//	history          HEAD only moves forward
//	lint             memctl lint exits 0 after a successful write
//	status           after a successful write, git status shows only the
//	                 person's stray files
//	person-commit    a commit authored by the person holds exactly bytes the
//	                 person saved, in files the person edited
//	stray-committed  no editor temp or stray file is ever committed
//	dequeue          after a successful consolidate no consumed candidate
//	                 is still queued
//	stale-lock       a write with no other writer running is never "locked";
//	                 a person's git meets no lock but a killed memctl's
//	no-panic         memctl never panics
//	add              add queues every valid candidate and prints its id
//	prose            a paragraph a person wrote under a heading, once
//	                 committed, stays, and never inside an entry
//	recovery-truth   what memctl says about a killed write is true: "was
//	                 interrupted before it took effect" only when its commit
//	                 was not on the branch, "finished" only when it is (and
//	                 a finished forget's ids are gone), "moved off" only
//	                 when HEAD does not hold it
//	settle           a refused recovery (a person's edit that does not
//	                 merge) is settled by memctl recover --discard-edits
//	forgotten-back   no committed entry repeats a forgotten text (a forget
//	                 killed at any failpoint counts once HEAD shows it)

// simGated lists checks that reproduce findings of issue 7 still being
// fixed: they are recorded in the step log but fail the run only when named
// in -sim.known (or -sim.known=all). Remove an entry once its fix is merged.
var simGated = map[string]string{}

// simSnap is what HEAD holds.
type simSnap struct {
	entries  []*mdmem.Entry
	byID     map[string][]*mdmem.Entry
	texts    map[string]bool     // norm(content) of every committed entry
	textCats map[string]bool     // norm(content) + "\x00" + category of every committed entry
	ledger   map[string][]string // candidate id → ledger lines' entry ids
	state    map[string]int
	tainted  bool              // a memory file holds an invented fact or the leaked key
	notes    map[string]string // a person's committed prose line → the entry holding it ("" if none)
}

// simBlob is what one committed file holds, parsed once per blob (the
// simulation reads HEAD after every step, and most files do not change).
type simBlob struct {
	entries []*mdmem.Entry
	ledger  [][2]string // candidate id, entry id
	state   map[string]int
	tainted bool
	notes   [][2]string // a person's prose line, the id of the entry holding it ("" if none)
}

// simFile is a committed file: its path and blob id.
type simFile struct{ path, sha string }

// gitBlobSHA is git's object id of a blob holding b.
func gitBlobSHA(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// noteWrite records the outcome of one memctl write of the current step.
func (s *sim) noteWrite(r simResult, consolidate bool) {
	switch r.code {
	case 0:
		s.stepOK = true
		if consolidate {
			s.stepConsolidated = true
		}
	case 3:
		s.violation("stale-lock", "%s with no other writer running", r)
	default:
		s.stepBad = true
	}
}

// concurrentWrites records the outcome of writers run at once: "locked" is
// then a fair answer.
func (s *sim) concurrentWrites(rs ...simResult) {
	for i, r := range rs {
		switch r.code {
		case 0:
			s.stepOK = true
			if i == 0 {
				s.stepConsolidated = true
			}
		case 3:
		default:
			s.stepBad = true
		}
	}
}

// snapshot reads the memory files, ledger and state of HEAD. Files are
// parsed once per blob: only blobs not seen before are read from git.
func (s *sim) snapshot() *simSnap {
	var files, missing []simFile
	for _, l := range strings.Split(strings.TrimSpace(s.git("ls-tree", "-r", "HEAD")), "\n") {
		meta, p, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		p = unquoteGit(p)
		if !(p == mdmem.MainFile || strings.HasPrefix(p, "topics/") || strings.HasPrefix(p, ".memctl/consumed/") || p == ".memctl/state.json") {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		// The key holds the path too: a blob parses differently as a
		// topic file, the ledger or the state.
		fl := simFile{p, f[2]}
		files = append(files, fl)
		if _, ok := s.blobs[p+"\x00"+fl.sha]; !ok {
			missing = append(missing, fl)
		}
	}
	if len(missing) > 0 {
		s.readBlobs(missing)
	}
	snap := &simSnap{byID: map[string][]*mdmem.Entry{}, texts: map[string]bool{}, textCats: map[string]bool{}, ledger: map[string][]string{}, state: map[string]int{}, notes: map[string]string{}}
	for _, f := range files {
		b := s.blobs[f.path+"\x00"+f.sha]
		for _, n := range b.notes {
			snap.notes[n[0]] = n[1]
		}
		if b.state != nil {
			snap.state = b.state
		}
		for _, l := range b.ledger {
			snap.ledger[l[0]] = append(snap.ledger[l[0]], l[1])
		}
		snap.tainted = snap.tainted || b.tainted
		for _, e := range b.entries {
			snap.entries = append(snap.entries, e)
			snap.byID[e.ID] = append(snap.byID[e.ID], e)
			snap.texts[norm(e.Content)] = true
			snap.textCats[norm(e.Content)+"\x00"+e.Category] = true
		}
	}
	return snap
}

// readBlobs parses the given committed files into s.blobs.
func (s *sim) readBlobs(files []simFile) {
	c := exec.Command("git", "-C", s.dir, "cat-file", "--batch")
	c.Env = s.env
	var in bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&in, "%s\n", f.sha)
	}
	c.Stdin = &in
	out, err := c.Output()
	if err != nil {
		s.t.Fatalf("git cat-file: %v", err)
	}
	rd := bufio.NewReader(bytes.NewReader(out))
	for _, f := range files {
		hdr, err := rd.ReadString('\n')
		if err != nil {
			s.t.Fatalf("git cat-file: %v", err)
		}
		fs := strings.Fields(hdr)
		if len(fs) != 3 {
			s.t.Fatalf("git cat-file %s: %q", f.path, hdr)
		}
		n, _ := strconv.Atoi(fs[2])
		b := make([]byte, n+1)
		if _, err := readFull(rd, b); err != nil {
			s.t.Fatalf("git cat-file: %v", err)
		}
		b = b[:n]
		blob := &simBlob{}
		switch {
		case f.path == ".memctl/state.json":
			var st struct {
				LastID map[string]int `json:"last_id"`
			}
			if err := json.Unmarshal(b, &st); err != nil {
				s.violation("state", "HEAD:.memctl/state.json: %v", err)
			}
			blob.state = st.LastID
			if blob.state == nil {
				blob.state = map[string]int{}
			}
		case strings.HasPrefix(f.path, ".memctl/consumed/"):
			for _, l := range strings.Split(string(b), "\n") {
				if fl := strings.Fields(l); len(fl) >= 3 {
					entry := ""
					if len(fl) >= 4 {
						entry = fl[3]
					}
					blob.ledger = append(blob.ledger, [2]string{fl[0], entry})
				}
			}
		case strings.HasSuffix(f.path, ".md"):
			blob.tainted = bytes.Contains(b, []byte("Zorblax")) || bytes.Contains(b, []byte(fakellm.FakeSecret))
			d := mdmem.ParseDoc(f.path, b)
			for _, e := range d.Entries {
				if e.ID != "" {
					blob.entries = append(blob.entries, e)
				}
			}
			// The person's prose: a line of its own, or folded into an
			// entry (a lazy continuation line).
			for off := 0; bytes.Contains(b[off:], []byte(simNotePrefix)); {
				i := off + bytes.Index(b[off:], []byte(simNotePrefix))
				end := i + bytes.IndexByte(b[i:], '\n')
				if end < i {
					end = len(b)
				}
				note := strings.TrimRight(string(b[i:end]), "\r")
				in := ""
				for _, e := range d.Entries {
					if e.Start <= i && i < e.End {
						in = e.ID
					}
				}
				blob.notes = append(blob.notes, [2]string{note, in})
				off = end
			}
		}
		s.blobs[f.path+"\x00"+f.sha] = blob
	}
}

func readFull(rd *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := rd.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// check verifies every invariant after a step; full adds the slow ones.
func (s *sim) check(full bool) {
	out, err := s.gitErr("rev-parse", "--verify", "HEAD")
	if err != nil {
		s.violation("head", "HEAD does not resolve: %s", out)
		return
	}
	head := strings.TrimSpace(out)
	rewritten := s.rewritten
	s.rewritten = false
	if head != s.head {
		if _, err := s.gitErr("merge-base", "--is-ancestor", s.head, head); err != nil {
			if !rewritten {
				s.violation("history", "HEAD %s does not descend from %s", head, s.head)
			}
		} else {
			s.checkCommits(s.head, head)
		}
		s.head = head
	}
	snap := s.snapshot()
	s.purgedThisStep = rewritten
	// While a killed write's journal waits for the next memctl writer, a
	// person's own commit may hold part of it (git commit -a takes
	// memctl's half-written files): what HEAD holds is checked once memctl
	// has finished or undone the write, at the next step without a journal.
	s.checkRecoveryTruth(snap)
	if !s.txnPending() {
		s.settleCrashedForget(snap)
		s.checkEntries(snap)
		s.checkQueue(snap)
		s.checkImports(snap)
		s.checkNotes(snap)
	}
	// While a killed write's journal waits, a person's `git commit -a` may
	// commit the files memctl had not updated yet (state.json among them);
	// the next writer commits memctl's change again on top of it.
	if !s.txnPending() {
		for p, n := range s.lastState {
			if snap.state[p] < n {
				s.violation("state-regress", "state.json last_id[%s] went from %d to %d", p, n, snap.state[p])
			}
		}
		s.lastState = snap.state
	}
	settled := s.stepOK && !s.stepBad
	if settled {
		st := s.git("status", "--porcelain", "--untracked-files=all")
		for _, l := range strings.Split(strings.TrimRight(st, "\n"), "\n") {
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "?? ") && s.strays[unquoteGit(l[3:])] {
				continue
			}
			s.violation("status", "after a successful write, git status shows %q\n%s", l, st)
		}
	}
	if settled {
		if r := s.memctl(nil, "lint"); r.code != 0 {
			s.violation("lint", "%s\n%s%s", r, r.stdout, r.stderr)
		}
	}
	if full {
		if out, err := s.gitErr("fsck", "--no-dangling", "--no-progress"); err != nil || strings.TrimSpace(out) != "" {
			s.violation("fsck", "git fsck: %v\n%s", err, out)
		}
	}
}

// checkNotes checks the person's prose (handNote): once committed, each
// paragraph stays, outside every entry.
func (s *sim) checkNotes(snap *simSnap) {
	for n, in := range snap.notes {
		if in != "" {
			s.violation("prose", "the person's paragraph %q is folded into entry %s (removing the entry would remove it)", n, in)
		}
		s.notesSeen[n] = true
	}
	for n := range s.notesSeen {
		if _, ok := snap.notes[n]; !ok {
			s.violation("prose", "the person's paragraph %q, committed before, is gone", n)
			delete(s.notesSeen, n)
		}
	}
}

// txnPending reports whether a killed write's journal is waiting in the
// memory (mdmem.TxnDir).
func (s *sim) txnPending() bool {
	_, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(mdmem.TxnDir), "journal.json"))
	return err == nil
}

// unquoteGit undoes git's C-style quoting of a path in porcelain output.
func unquoteGit(p string) string {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// checkCommits checks the commits from..to: who wrote what, consumed
// candidates, stray files.
func (s *sim) checkCommits(from, to string) {
	log := s.git("log", "--reverse", "--format=%H%x1f%ae%x1f%B%x1e", from+".."+to)
	for _, rec := range strings.Split(log, "\x1e") {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x1f", 3)
		if len(f) != 3 {
			continue
		}
		h, author, body := f[0], f[1], f[2]
		diff := s.git("diff-tree", "-r", "--root", "--no-commit-id", "--no-renames", h)
		type change struct{ blob, path string }
		var changes []change
		for _, l := range strings.Split(strings.TrimSpace(diff), "\n") {
			meta, path, ok := strings.Cut(l, "\t")
			if !ok {
				continue
			}
			mf := strings.Fields(meta)
			changes = append(changes, change{blob: mf[3], path: unquoteGit(path)})
		}
		stray := func(p string) bool {
			return s.strays[p] || strings.Contains(p, ".swp") || strings.HasSuffix(p, "~") ||
				strings.HasSuffix(p, "4913") || strings.Contains(p, "#") || strings.HasSuffix(p, ".env")
		}
		for _, c := range changes {
			if stray(c.path) {
				s.violation("stray-committed", "commit %.12s (%s) includes the stray file %s", h, author, c.path)
			}
		}
		if author == simPersonEmail && !s.personCommit[h] {
			for _, c := range changes {
				if stray(c.path) {
					continue // stray-committed
				}
				b, ok := s.personFiles[c.path]
				if !ok {
					s.violation("person-commit", "commit %.12s, authored by the person, changes %s, which the person did not edit\n%s",
						h, c.path, firstLines(body, 6))
					continue
				}
				if c.blob != gitBlobSHA(b) && !s.onlyPersonsChange(h, c.path) {
					s.violation("person-commit", "commit %.12s, authored by the person, commits %s with bytes the person never saved, changing more than the person did\n%s",
						h, c.path, firstLines(body, 6))
				}
			}
		}
		for _, l := range strings.Split(body, "\n") {
			if cid, ok := strings.CutPrefix(l, "Memctl-Consumed: "); ok {
				cid = strings.TrimSpace(cid)
				if prev, dup := s.consumedAt[cid]; dup {
					s.violation("exactly-once", "candidate %s consumed by commit %.12s and again by %.12s", cid, prev, h)
				}
				s.consumedAt[cid] = h
			}
		}
	}
}

// onlyPersonsChange reports whether commit h changes, in a memory file,
// only entries the person touched (added, changed, retyped or deleted by
// hand), and no line outside entries but the person's own prose
// (handNote). A hand-edit commit memctl makes
// after finishing a killed write whose change it merged into the
// person's edit (made on the old content) holds memctl's change, already
// committed in its parent, plus the person's: bytes the person never
// saved, but only their change.
func (s *sim) onlyPersonsChange(h, path string) bool {
	if !strings.HasSuffix(path, ".md") {
		return false
	}
	before, _ := s.gitErr("show", h+"^:"+path)
	after, err := s.gitErr("show", h+":"+path)
	if err != nil {
		return false
	}
	texts := func(src string) (map[string]string, map[string]bool) {
		d := mdmem.ParseDoc(path, []byte(src))
		m := map[string]string{}
		for _, e := range d.Entries {
			m[e.ID] = e.Raw
		}
		out := map[string]bool{}
		lines := strings.Split(src, "\n")
		for i, l := range lines {
			inEntry := false
			for _, e := range d.Entries {
				if e.Line <= i+1 && i+1 < e.Line+strings.Count(strings.TrimRight(e.Raw, "\n"), "\n")+1 {
					inEntry = true
					break
				}
			}
			// The person's own prose (handNote) is theirs to add.
			if !inEntry && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, simNotePrefix) {
				out[l] = true
			}
		}
		return m, out
	}
	b, bl := texts(before)
	a, al := texts(after)
	if len(bl) != len(al) {
		return false
	}
	for l := range bl {
		if !al[l] {
			return false
		}
	}
	for _, m := range []map[string]string{a, b} {
		for id := range m {
			if a[id] != b[id] && (id == "" || !s.handIDs[id]) {
				return false
			}
		}
	}
	return true
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// live says whether an entry is in force (not archived).
func live(e *mdmem.Entry) bool { return e.Place != mdmem.PlaceArchive }

func (s *sim) checkEntries(snap *simSnap) {
	if snap.tainted {
		s.violation("invented", "a fact the LLM invented, or the key it leaked, is committed")
	}
	for id, es := range snap.byID {
		if len(es) > 1 {
			var where []string
			for _, e := range es {
				where = append(where, fmt.Sprintf("%s:%d %q", e.File, e.Line, e.Content))
			}
			s.violation("duplicate-id", "%s is committed %d times: %s", id, len(es), strings.Join(where, "; "))
		}
		e := es[0]
		subj := subjectOf(e.Content)
		if old, ok := s.seenSubj[id]; ok && old != subj && !s.handIDs[id] {
			s.violation("id-reuse", "%s was %q, now %q (%s)", id, s.seenText[id], e.Content, e.Place)
		}
	}
	for id, text := range s.seenText {
		if _, ok := snap.byID[id]; !ok && !s.handDeleted[id] {
			s.violation("vanished", "%s %q is no longer committed anywhere (not live, not archived)", id, text)
		}
	}
	for id, es := range snap.byID {
		s.seenText[id] = es[0].Content
		s.seenSubj[id] = subjectOf(es[0].Content)
	}
	count := map[string]int{}
	for _, e := range snap.entries {
		if live(e) {
			count[norm(e.Content)]++
		}
		if t, ok := s.forgotten[norm(e.Content)]; ok {
			s.violation("forgotten-back", "%s %q repeats the forgotten text %q", e.ID, e.Content, t)
		}
	}
	for t, n := range count {
		if intro := s.intro[t]; n > max(intro, 1) {
			s.violation("duplicated-text", "%q is live %d times but was introduced %d times", t, n, intro)
		}
	}
}

// found says whether a text is committed anywhere or was removed by a
// person.
func found(snap *simSnap, text string) bool { return snap.texts[norm(text)] }

// foldedPayload reports a consumed candidate that reads like an
// instruction to the model and was folded, as a near repeat of an
// injection payload, into a Pending entry that names it in its refs (issue
// 8: near repeats fold into one Pending entry; its own wording is dropped
// on purpose). That entry may since have been confirmed, rejected into the
// archive, or forgotten.
func (s *sim) foldedPayload(snap *simSnap, cid, content string, ledger []string) bool {
	if mdmem.InstructionNote(content) == "" {
		return false
	}
	for _, id := range ledger {
		if s.handDeleted[id] {
			return true
		}
		for _, e := range snap.byID[id] {
			if slices.Contains(e.Refs, cid) {
				return true
			}
		}
	}
	return false
}

func (s *sim) checkQueue(snap *simSnap) {
	inDir := func(dir string) map[string]bool {
		m := map[string]bool{}
		ents, _ := os.ReadDir(filepath.Join(s.dir, ".memctl", "queue", dir))
		for _, e := range ents {
			if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
				m[id] = true
			}
		}
		return m
	}
	queue, held := inDir(""), inDir("held")
	for cid, lines := range snap.ledger {
		if len(lines) > 1 {
			s.violation("exactly-once", "candidate %s has %d ledger lines", cid, len(lines))
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range s.queued {
			if !yield(id) {
				return
			}
		}
	})
	for _, cid := range ids {
		c := s.queued[cid]
		lines, consumed := snap.ledger[cid]
		if consumed && queue[cid] && s.stepConsolidated {
			s.violation("dequeue", "candidate %s is consumed but still queued after a successful consolidate", cid)
		}
		if !consumed && !queue[cid] && !held[cid] {
			s.violation("candidate-lost", "candidate %s %q (step %d) is neither consumed, queued nor held", cid, c.content, c.step)
			continue
		}
		if !consumed || s.handRemoved[norm(c.content)] {
			continue
		}
		if found(snap, c.content) {
			// Its text is committed: in the category it was given in,
			// unless a newer value of its fact is, or a person rejected
			// the text (in any category: not re-added).
			if !snap.textCats[norm(c.content)+"\x00"+c.cat] && !s.newerFoundIn(snap, c.content, c.seq, c.cat) && !rejectedText(snap, c.content) {
				s.violation("category-lost", "candidate %s %q (step %d), given as %s, is consumed (ledger: %s) but its text is committed only in another category",
					cid, c.content, c.step, c.cat, lines[0])
			}
			continue
		}
		if s.newerFound(snap, c.content, c.seq) {
			continue
		}
		if s.foldedPayload(snap, cid, c.content, lines) {
			continue
		}
		s.violation("value-lost", "candidate %s %q (step %d) is consumed (ledger: %s) but neither its text nor a newer value of its fact is committed",
			cid, c.content, c.step, lines[0])
	}
}

// rejectedText reports whether a person rejected the text: memctl never
// re-adds it, in any category.
func rejectedText(snap *simSnap, text string) bool {
	for _, e := range snap.entries {
		if norm(e.Content) == norm(text) && slices.ContainsFunc(e.Notes, func(n string) bool { return strings.HasPrefix(strings.ToLower(n), "rejected") }) {
			return true
		}
	}
	return false
}

// newerFound says whether a text of the same fact introduced after seq is
// committed: then the value consumed at seq may have been replaced.
func (s *sim) newerFound(snap *simSnap, text string, seq int) bool {
	return s.newerFoundIn(snap, text, seq, "")
}

// newerFoundIn is newerFound in one category ("" for any).
func (s *sim) newerFoundIn(snap *simSnap, text string, seq int, cat string) bool {
	for _, v := range s.versions[factKey(text)] {
		if v.seq > seq && (cat == "" && found(snap, v.text) || cat != "" && snap.textCats[norm(v.text)+"\x00"+cat]) {
			return true
		}
	}
	return false
}

func (s *sim) checkImports(snap *simSnap) {
	for _, b := range s.imports {
		// Texts a person changed away or deleted, or introduced more than
		// once, count neither way.
		n := 0
		var missing []string
		for _, c := range b.contents {
			switch {
			case s.intro[norm(c)] > 1:
				// the same text came in by another step too (random
				// texts collide now and then): it proves nothing
			case found(snap, c):
				n++
			case !s.handRemoved[norm(c)]:
				missing = append(missing, c)
			}
		}
		switch {
		case b.ok && len(missing) > 0:
			s.violation("import-atomic", "the import of step %d exited 0 but %d of its %d entries are not committed, e.g. %q",
				b.step, len(missing), len(b.contents), missing[0])
		case n > 0 && len(missing) > 0:
			s.violation("import-atomic", "the import of step %d is half committed: %d of %d entries, e.g. missing %q",
				b.step, n, len(b.contents), missing[0])
		}
	}
}

// readJournal reads the journal a killed write left, or nil.
func (s *sim) readJournal() *simJournal {
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(mdmem.TxnDir), "journal.json"))
	if err != nil {
		return nil
	}
	var j simJournal
	if json.Unmarshal(b, &j) != nil || j.Commit == "" {
		s.violation("journal", "the journal is not readable: %q", b)
		return nil
	}
	return &j
}

// settleRefusal: when a writer refused to finish a killed write because a
// person's edit does not merge with it, the person settles it as the hint
// says, discarding their edit (saved by memctl).
func (s *sim) settleRefusal() string {
	refused := false
	s.outMu.Lock()
	for _, o := range s.stepOut {
		refused = refused || strings.Contains(o, "memctl recover --keep-edits")
	}
	s.outMu.Unlock()
	if !refused || s.settling {
		return ""
	}
	s.settling = true
	defer func() { s.settling = false }()
	r := s.memctl(nil, "recover", "--discard-edits")
	if r.code != 0 {
		s.violation("settle", "memctl recover --discard-edits after a refusal: %s\n%s", r, r.stderr)
		return r.String()
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		_, saved, ok := strings.Cut(l, "your edited version was saved as ")
		if !ok {
			continue
		}
		for _, name := range strings.Split(saved, ", ") {
			base := strings.TrimPrefix(strings.TrimSpace(name), mdmem.RescueDir+"/")
			if i := strings.LastIndexByte(base, '.'); i > 0 {
				base = base[:i]
			}
			delete(s.personFiles, strings.ReplaceAll(base, "__", "/"))
		}
	}
	s.stepBad = true
	return "person: " + r.String()
}

// checkRecoveryTruth checks what memctl said this step about the write a
// killed process left (s.journal) against git: "interrupted before it
// took effect" means its commit is not in HEAD's history; "finished" that
// it is (and a finished forget's ids are gone); "then a git command moved"
// that the reflog has it and HEAD does not.
func (s *sim) checkRecoveryTruth(snap *simSnap) {
	j := s.journal
	if j == nil {
		return
	}
	s.outMu.Lock()
	out := strings.Join(s.stepOut, "\n")
	s.outMu.Unlock()
	q := strconv.Quote(j.Op)
	inHistory := func() bool {
		_, err := s.gitErr("merge-base", "--is-ancestor", j.Commit, "HEAD")
		return err == nil
	}
	var ids []string
	if rest, ok := strings.CutPrefix(j.Op, "forget "); ok {
		ids = strings.Split(rest, ", ")
	}
	switch {
	case strings.Contains(out, q+" was interrupted before it took effect"):
		// Checked against HEAD before the step: run again in the same
		// second, the same write makes the very same commit object.
		if _, err := s.gitErr("merge-base", "--is-ancestor", j.Commit, s.preHead); err == nil {
			s.violation("recovery-truth", "memctl said %s did not take effect, but its commit %.12s is in HEAD's history", q, j.Commit)
		}
	case strings.Contains(out, "finished "+q):
		if !inHistory() && !s.purgedThisStep { // a purge in the same step rewrote the commit it named
			s.violation("recovery-truth", "memctl said it finished %s, but its commit %.12s is not in HEAD's history", q, j.Commit)
		}
		for _, id := range ids {
			if len(snap.byID[id]) > 0 {
				s.violation("recovery-truth", "memctl said it finished %s, but %s is still committed", q, id)
			}
			for _, e := range s.workEntries() {
				if e.ID == id {
					s.violation("recovery-truth", "memctl said it finished %s, but %s is still in %s", q, id, e.File)
				}
			}
		}
	case strings.Contains(out, q+" took effect (commit"):
		if inHistory() {
			s.violation("recovery-truth", "memctl said %s was moved off, but its commit %.12s is in HEAD's history", q, j.Commit)
		}
	}
}

// settleCrashedForget updates the model for the forgets that did not exit
// 0 (a later writer may have finished one before it was killed too), once
// no journal waits: HEAD says whether each took effect.
func (s *sim) settleCrashedForget(snap *simSnap) {
	crashed := s.crashed
	s.crashed = nil
	work := map[string]bool{}
	for _, e := range s.workEntries() {
		work[e.ID] = true
	}
	for _, c := range crashed {
		// Still committed, or still in a file (the hand-edit commit before
		// it crashed): not forgotten.
		if len(snap.byID[c.id]) == 0 && !work[c.id] {
			s.noteForgotten(c.id, c.entries)
		}
	}
}
