package mdmem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxForgetReasonBytes caps the reason of a forget: it goes into the commit
// message.
const MaxForgetReasonBytes = 1000

// ErrNoEntry is returned (wrapped) by Forget for an id no memory file holds.
var ErrNoEntry = errors.New("no such entry")

// ForgetOptions tunes Forget.
type ForgetOptions struct {
	// Now dates the tombstones (default: the store's clock).
	Now time.Time
	// Op is the Memctl-Op trailer (default "forget"; retention passes
	// "expire").
	Op string
	// Purge also rewrites git history so no commit holds the texts (see
	// PurgeHistory), under the same lock, right after the forget.
	Purge bool
}

// ForgetResult is what Forget did.
type ForgetResult struct {
	IDs []string `json:"entry_ids"`
	// SameText are the ids forgotten because they hold the same text as
	// an id given (they are in IDs too).
	SameText []string `json:"same_text_ids"`
	Files    []string `json:"files"`         // memory files changed (committed)
	Queue    []string `json:"candidate_ids"` // queued candidates removed (queue and held)
	Caches   []string `json:"caches"`        // derived cache files removed or rewritten
	Traces   []string `json:"traces"`        // kept transcripts where the text was replaced by [forgotten]
	Commit   string   `json:"commit,omitempty"`
	// HandEdit is what committing the person's uncommitted edits first did.
	HandEdit *HandEdit `json:"hand_edit,omitempty"`
	// Purge is what the history purge did (ForgetOptions.Purge).
	Purge *PurgeResult `json:"purge,omitempty"`
	// Contents are the forgotten texts, for --purge-history; never
	// printed, never serialised.
	Contents []string `json:"-"`
}

// Forget deletes entries for good: from MEMORY.md (core, pending,
// archive) and topic files, in one commit whose message names the ids and
// the reason but never the content; it writes a tombstone per entry (see
// TombstonesPath) so add, import and consolidation do not bring the text
// back, keeps the ids from being reused, and then removes the queued
// candidates holding the text, the ids from the inject log and the
// derived caches holding the text. Other entries with the same
// (normalised) text are forgotten with them. Every other byte of the
// memory stays as it was. An unknown id is an error wrapping ErrNoEntry and nothing is
// written. It takes the lock (the caller must not hold it).
func Forget(ctx context.Context, s *Store, ids []string, reason string, opts ForgetOptions) (*ForgetResult, error) {
	if err := checkForgetArgs(ids, reason); err != nil {
		return nil, err
	}
	if opts.Now.IsZero() {
		opts.Now = s.now()
	}
	if opts.Op == "" {
		opts.Op = "forget"
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &ForgetResult{}
	he, err := s.CommitHandEdits(ctx)
	if err != nil {
		return nil, err
	}
	if !he.Empty() {
		res.HandEdit = he
	}
	m, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	gone, err := forgotten(m, ids, res)
	if err != nil {
		return nil, err
	}
	if err := checkForgetReason(reason, gone); err != nil {
		return nil, err
	}
	ts, err := s.LoadTombstones()
	if err != nil {
		return nil, err
	}
	if err := s.ensureKey(ctx, ts); err != nil {
		return nil, err
	}
	files, err := s.forgetFiles(m, ts, gone, res, opts.Now)
	if err != nil {
		return nil, err
	}
	subject := opts.Op + " " + strings.Join(res.IDs, ", ")
	if err := s.commitForget(ctx, files, res, subject, reason, opts); err != nil {
		return nil, err
	}
	if c := s.cleaned; c != nil {
		res.Queue, res.Traces, res.Caches = c.Queue, c.Traces, c.Caches
	}
	if !opts.Purge || res.Commit == "" {
		return res, nil
	}
	s.failpoint(FailForgetPurge)
	if res.Purge, err = s.purgeLocked(ctx, res.IDs, res.Contents); err != nil {
		return res, &PurgeError{IDs: res.IDs, Commit: res.Commit, Err: err}
	}
	return res, nil
}

// PurgeError is a forget that took effect whose history purge failed; the
// purge stays owed (the next commands say so) until
// `memctl forget <ids> --purge-history` succeeds.
type PurgeError struct {
	IDs    []string
	Commit string
	Err    error
}

func (e *PurgeError) Error() string {
	return fmt.Sprintf("forgot %s (commit %.12s), but purging history failed: %v", strings.Join(e.IDs, ", "), e.Commit, e.Err)
}

// Unwrap returns the purge's error.
func (e *PurgeError) Unwrap() error { return e.Err }

// forgetOwed is the cleanup a forget owes once its commit landed (in its
// journal record): the ids and the texts to remove from the queue, the
// kept transcripts and the caches.
type forgetOwed struct {
	IDs      []string `json:"ids"`
	Contents []string `json:"contents"`
}

// forgetCleanup is what cleanAfterForget removed.
type forgetCleanup struct {
	Queue, Traces, Caches []string
}

// checkForgetArgs checks the ids and the reason of a forget.
func checkForgetArgs(ids []string, reason string) error {
	if len(ids) == 0 {
		return errors.New("forget: no entry id given")
	}
	for _, id := range ids {
		if !IsValidID(id) {
			return fmt.Errorf("invalid entry id %q (want e.g. dec-014)", id)
		}
	}
	if err := ValidText("reason", reason, MaxForgetReasonBytes); err != nil {
		return fmt.Errorf("%w; give a short reason, one line", err)
	}
	return nil
}

// forgotten returns every entry to forget: those of the ids (all their
// copies) and the other entries holding the same text, which is the same
// memory: it goes too, or the forgotten text would stay live under
// another id. It records their ids in res.
func forgotten(m *Memory, ids []string, res *ForgetResult) ([]*Entry, error) {
	var gone []*Entry
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		all := m.FindAll(id)
		if len(all) == 0 {
			return nil, fmt.Errorf("%w: %s (nothing was forgotten; `memctl list` shows the ids, `memctl search TEXT` finds one)", ErrNoEntry, id)
		}
		gone = append(gone, all...)
		res.IDs = append(res.IDs, id)
	}
	// Until nothing more joins: another entry holding a gone entry's text
	// is the same memory, and an entry a gone one superseded holds an
	// earlier wording of it (the same personal data, often); both go too,
	// or a forgotten text would stay live under another id. They are in
	// res.IDs; the command lists them.
	texts := map[string]bool{}
	for from := 0; from < len(gone); {
		for _, e := range gone[from:] {
			if nc := NormalizeForget(e.Content); nc != "" {
				texts[nc] = true
			}
		}
		from = len(gone)
		for _, e := range m.Entries() {
			if e.ID == "" || seen[e.ID] {
				continue
			}
			sameText := texts[NormalizeForget(e.Content)]
			if !sameText && (e.SupersededBy == "" || !seen[e.SupersededBy]) {
				continue
			}
			seen[e.ID] = true
			gone = append(gone, m.FindAll(e.ID)...)
			res.IDs = append(res.IDs, e.ID)
			if sameText {
				res.SameText = append(res.SameText, e.ID)
			}
		}
	}
	return gone, nil
}

// checkForgetReason refuses a reason that repeats a forgotten text: the
// reason goes into the commit message.
func checkForgetReason(reason string, gone []*Entry) error {
	nr := NormalizeForget(reason)
	if nr == "" {
		return nil
	}
	for _, e := range gone {
		if nc := NormalizeForget(e.Content); nc != "" && strings.Contains(nr, nc) {
			return fmt.Errorf("the reason repeats the text of %s, and the reason goes into the commit message; give a reason without the content (nothing was forgotten)", e.ID)
		}
	}
	return nil
}

// forgetFiles returns the new content of every file a forget changes: the
// memory files without the entries, the tombstones dated now, and the
// state when the forgotten ids raise its high-water marks (ids are never
// reused). It records the forgotten texts in res.
func (s *Store) forgetFiles(m *Memory, ts *Tombstones, gone []*Entry, res *ForgetResult, now time.Time) (map[string][]byte, error) {
	ed := m.Edit()
	ed.SetMaxBytes(s.Config.Files.MaxBytes)
	for _, e := range gone {
		ed.Remove(e)
		res.Contents = append(res.Contents, e.Content)
	}
	files, err := ed.Changed()
	if err != nil {
		return nil, err
	}
	tsBase, err := readFileIfExists(s.abs(TombstonesPath))
	if err != nil {
		return nil, err
	}
	files[TombstonesPath] = ts.add(tsBase, gone, now.UTC().Format("2006-01-02"))
	st, err := s.ReadState()
	if err != nil {
		return nil, err
	}
	bumped := false
	for _, id := range res.IDs {
		if p, n, ok := splitID(id); ok && n > st.LastID[p] {
			st.LastID[p], bumped = n, true
		}
	}
	if bumped {
		data, _ := json.MarshalIndent(st, "", "  ")
		files[StatePath] = append(data, '\n')
	}
	return files, nil
}

// commitForget writes the files and commits them in one transaction,
// with a message naming the ids and the reason, never the content; the
// cleanup outside git (and the purge, when asked) is in its journal.
func (s *Store) commitForget(ctx context.Context, files map[string][]byte, res *ForgetResult, subject, reason string, opts ForgetOptions) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Abort()
	for _, p := range sortedKeys(files) {
		if err := tx.PutOnDisk(ctx, p, files[p]); err != nil {
			return err
		}
		if p != TombstonesPath && p != StatePath {
			res.Files = append(res.Files, p)
		}
	}
	tx.forget = &forgetOwed{IDs: res.IDs, Contents: res.Contents}
	tx.purge = opts.Purge
	body := ""
	if r := OneLine(reason); r != "" {
		body = "Reason: " + r
	}
	res.Commit, err = tx.Commit(ctx, CommitMessage{Subject: subject, Body: body, Op: opts.Op, Entries: res.IDs})
	return err
}

// cleanAfterForget removes the forgotten texts from the working data
// outside git, after the commit (the journal holds it until done).
func (s *Store) cleanAfterForget(ctx context.Context, owed *forgetOwed) (*forgetCleanup, error) {
	ts, err := s.LoadTombstones()
	if err != nil {
		return nil, err
	}
	c := &forgetCleanup{}
	if c.Queue, err = s.dropQueued(ctx, ts, owed.Contents); err != nil {
		return nil, fmt.Errorf("cleaning the queue failed: %w", err)
	}
	if c.Traces, err = s.scrubTraces(ctx, owed.Contents); err != nil {
		return nil, fmt.Errorf("cleaning the kept transcripts failed: %w", err)
	}
	if c.Caches, err = s.scrubCaches(ctx, owed.IDs, owed.Contents); err != nil {
		return nil, fmt.Errorf("cleaning the caches failed: %w", err)
	}
	return c, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// holdsText reports whether text repeats one of the forgotten contents:
// the same tombstone hash (unless allowForgotten: a candidate re-added on
// purpose after an earlier forget), or a normalised form holding one of
// them as whole words ("uses go" is not in "uses google").
func holdsText(ts *Tombstones, text string, contents []string, allowForgotten bool) bool {
	n := NormalizeForget(text)
	for _, c := range contents {
		if nc := NormalizeForget(c); nc != "" && indexWords(n, nc) >= 0 {
			return true
		}
	}
	if allowForgotten {
		return false
	}
	_, ok := ts.Match(text)
	return ok
}

// indexWords returns the index of the first occurrence of sub in s that
// starts and ends at word boundaries (no letter or digit right before or
// after it), or -1.
func indexWords(s, sub string) int {
	for off := 0; off+len(sub) <= len(s); {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(sub):])
		if (i == 0 || !isWordChar(before)) && (i+len(sub) == len(s) || !isWordChar(after)) {
			return i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		off = i + size
	}
	return -1
}

func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// replaceWords replaces every occurrence of old in b that starts and ends
// at word boundaries with new.
func replaceWords(b []byte, old, new string) []byte {
	s := string(b)
	var out strings.Builder
	for {
		i := indexWords(s, old)
		if i < 0 {
			break
		}
		out.WriteString(s[:i])
		out.WriteString(new)
		s = s[i+len(old):]
	}
	if out.Len() == 0 {
		return b
	}
	out.WriteString(s)
	return []byte(out.String())
}

// dropQueued removes queue files (queued and held) whose candidate holds a
// forgotten text. A file that cannot be decoded is searched as bytes.
func (s *Store) dropQueued(ctx context.Context, ts *Tombstones, contents []string) ([]string, error) {
	var removed []string
	for _, rel := range []string{QueueDir, HeldQueueDir} {
		d := s.abs(rel)
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		changed := false
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			if !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(d, e.Name())
			data, err := os.ReadFile(p)
			if err != nil {
				return removed, err
			}
			text, allow := string(data), false
			if c, err := DecodeQueueFile(data); err == nil {
				text, allow = c.Content, c.AllowForgotten
			}
			if !holdsText(ts, text, contents, allow) {
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return removed, err
			}
			removed = append(removed, rel+"/"+e.Name())
			changed = true
		}
		if changed {
			if err := SyncDir(d); err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

// forgottenMark replaces a forgotten text inside a kept transcript.
const forgottenMark = "[forgotten]"

// scrubTraces replaces every occurrence of a forgotten text in the kept
// transcripts with forgottenMark (an atomic rewrite per file). Only the
// exact text, as whole words, is found: a transcript that said the same
// in other words keeps its words (docs/FORMAT.md, "Forget").
func (s *Store) scrubTraces(ctx context.Context, contents []string) ([]string, error) {
	d := s.abs(TraceDir)
	ents, err := os.ReadDir(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == ".gitignore" {
			continue
		}
		p := filepath.Join(d, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return done, err
		}
		out := data
		for _, c := range contents {
			if c == "" {
				continue
			}
			// Transcripts are JSON Lines: the text may be there escaped
			// ("\"", "\\", "\u00e9") as well as as written.
			for _, form := range jsonForms(c) {
				out = replaceWords(out, form, forgottenMark)
			}
		}
		if bytes.Equal(out, data) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return done, err
		}
		if err := WriteFileAtomic(ctx, p, out, fi.Mode().Perm()); err != nil {
			return done, err
		}
		done = append(done, TraceDir+"/"+e.Name())
	}
	return done, nil
}

// jsonForms returns text as written and as JSON encoders write it inside
// a string: Go's (HTML-safe escapes), one that escapes nothing it need not,
// and one that escapes every non-ASCII rune as \uXXXX.
func jsonForms(text string) []string {
	forms := []string{text}
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(text) == nil {
			add(strings.TrimSuffix(strings.TrimSpace(b.String()), `"`)[1:])
		}
	}
	var ascii strings.Builder
	for _, r := range forms[len(forms)-1] {
		switch {
		case r < 0x80:
			ascii.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&ascii, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&ascii, "\\u%04x", r)
		}
	}
	add(ascii.String())
	return forms
}

// scrubCaches drops the forgotten ids from the inject log and removes
// every other cache file (derived, rebuilt on demand) whose bytes hold a
// forgotten text or id, and with a segment of the index cache its
// manifest. Transaction files and locks are left alone: the transaction
// that just committed has removed its own.
func (s *Store) scrubCaches(ctx context.Context, ids, contents []string) ([]string, error) {
	done, err := s.scrubSegments(ids, contents)
	if err != nil {
		return done, err
	}
	d := s.abs(CacheDir)
	ents, err := os.ReadDir(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasSuffix(name, ".lock") || CacheDir+"/"+name == IDMarksPath {
			continue
		}
		p := filepath.Join(d, name)
		data, err := os.ReadFile(p)
		if err != nil {
			return done, err
		}
		if CacheDir+"/"+name == EmbeddingsCachePath {
			// Keyed by an unkeyed hash of each text, with its vector: both
			// say what was forgotten. Rebuilt by the next consolidate.
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return done, err
			}
			done = append(done, CacheDir+"/"+name)
			continue
		}
		if strings.HasPrefix(name, "inject.log") {
			if out, changed := dropLogIDs(data, drop); changed {
				if err := WriteFileAtomic(ctx, p, out, ModeOf(p)); err != nil {
					return done, err
				}
				done = append(done, CacheDir+"/"+name)
			}
			continue
		}
		for _, c := range append(append([]string(nil), contents...), ids...) {
			if c != "" && bytes.Contains(data, []byte(c)) {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return done, err
				}
				done = append(done, CacheDir+"/"+name)
				break
			}
		}
	}
	return done, nil
}

// scrubSegments removes the index cache's segment files that hold a
// forgotten text or id, and then its manifest (IndexCachePath), which
// names them; it reports the manifest (segment names are random).
func (s *Store) scrubSegments(ids, contents []string) ([]string, error) {
	ents, err := os.ReadDir(s.abs(IndexSegmentsDir))
	if err != nil {
		return nil, nil // none (or unreadable: derived data, rebuilt on demand)
	}
	removed := false
	for _, e := range ents {
		p := filepath.Join(s.abs(IndexSegmentsDir), e.Name())
		data, err := os.ReadFile(p)
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		for _, c := range append(append([]string(nil), contents...), ids...) {
			if c != "" && bytes.Contains(data, []byte(c)) {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
				removed = true
				break
			}
		}
	}
	if !removed {
		return nil, nil
	}
	if err := os.Remove(s.abs(IndexCachePath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return []string{IndexCachePath}, nil
}

// dropLogIDs removes ids from the "ids" lists of inject log lines (JSON
// objects); other lines are kept as they are.
func dropLogIDs(data []byte, drop map[string]bool) ([]byte, bool) {
	var out bytes.Buffer
	changed := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var rec map[string]json.RawMessage
		var idl []string
		if json.Unmarshal(line, &rec) == nil && rec["ids"] != nil && json.Unmarshal(rec["ids"], &idl) == nil {
			kept := idl[:0:0]
			for _, id := range idl {
				if !drop[id] {
					kept = append(kept, id)
				}
			}
			if len(kept) != len(idl) {
				rec["ids"], _ = json.Marshal(kept)
				line, _ = json.Marshal(rec)
				changed = true
			}
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes(), changed
}

// MatchEntries returns the entries whose content holds pattern as whole
// words (compared after NormalizeForget: case, width, punctuation and
// look-alike letters do not matter; "go" is not in "uses google"), in
// file order.
func MatchEntries(m *Memory, pattern string) []*Entry {
	p := NormalizeForget(pattern)
	if p == "" {
		return nil
	}
	var out []*Entry
	for _, e := range m.Entries() {
		if e.ID != "" && indexWords(NormalizeForget(e.Content), p) >= 0 {
			out = append(out, e)
		}
	}
	return out
}
