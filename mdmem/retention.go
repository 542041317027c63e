package mdmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Retention: an entry past its `expires` date is no longer injected, and
// consolidation moves it to the archive ("expired <date>"); an archived
// entry whose archive date (superseded on, rejected, expired) is older
// than consolidate.archive_days is deleted with forget semantics (one
// commit without the content, a tombstone). Entries archived without a
// date are kept: memctl never guesses when they were archived.

// ExpiringSoon is one entry that retention will act on.
type ExpiringSoon struct {
	ID     string    `json:"entry_id"`
	Place  string    `json:"place"`
	Action string    `json:"action"` // "archive" (expires) or "delete" (archive retention)
	When   time.Time `json:"due_at"`
}

// ArchivedOn returns the day an archived entry was archived: its
// "superseded … on" date, or the date of a "rejected"/"expired" note.
func ArchivedOn(e *Entry) (time.Time, bool) {
	if !e.SupersededOn.IsZero() {
		return e.SupersededOn, true
	}
	for _, n := range e.Notes {
		for _, p := range []string{"rejected ", "expired "} {
			if rest, ok := strings.CutPrefix(n, p); ok {
				d, _, _ := strings.Cut(rest, ":")
				if t, ok := ParseTime(strings.TrimSpace(d)); ok {
					return t, true
				}
			}
		}
	}
	return time.Time{}, false
}

// RetentionDue lists what retention does now or within the next `within`:
// live entries whose expires date falls before now+within (archived), and
// archived entries whose archive date plus archiveDays falls before
// now+within (deleted; none when archiveDays is 0). Sorted by date, then id.
func RetentionDue(m *Memory, now time.Time, within time.Duration, archiveDays int) []ExpiringSoon {
	return sortDue(appendDue(nil, m.Entries(), now.Add(within), archiveDays))
}

// RetentionScan is RetentionDue one file at a time, for a reader that
// walks the memory (Walk): Add each file, then ask what is Due.
type RetentionScan struct {
	limit       time.Time
	archiveDays int
	due         []ExpiringSoon
}

// NewRetentionScan starts a RetentionDue(…, now, within, archiveDays).
func NewRetentionScan(now time.Time, within time.Duration, archiveDays int) *RetentionScan {
	return &RetentionScan{limit: now.Add(within), archiveDays: archiveDays}
}

// Add looks at the entries of one file.
func (r *RetentionScan) Add(d *Doc) { r.due = appendDue(r.due, d.Entries, r.limit, r.archiveDays) }

// Due returns what retention acts on in the files added, as RetentionDue.
func (r *RetentionScan) Due() []ExpiringSoon { return sortDue(r.due) }

// appendDue appends to out what retention does to entries by limit. The
// ids are copied: out outlives the file the entries were parsed from.
func appendDue(out []ExpiringSoon, entries []*Entry, limit time.Time, archiveDays int) []ExpiringSoon {
	for _, e := range entries {
		if e.ID == "" {
			continue
		}
		switch e.Place {
		case PlaceCore, PlaceTopic, PlacePending:
			if !e.Expires.IsZero() && !e.Expires.After(limit) {
				out = append(out, ExpiringSoon{strings.Clone(e.ID), string(e.Place), "archive", e.Expires})
			}
		case PlaceArchive:
			if archiveDays <= 0 {
				continue
			}
			if on, ok := ArchivedOn(e); ok {
				if when := on.AddDate(0, 0, archiveDays); !when.After(limit) {
					out = append(out, ExpiringSoon{strings.Clone(e.ID), string(e.Place), "delete", when})
				}
			}
		}
	}
	return out
}

// sortDue sorts what retention does by date, then id.
func sortDue(out []ExpiringSoon) []ExpiringSoon {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].When.Equal(out[j].When) {
			return out[i].When.Before(out[j].When)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// RetentionResult is what ApplyRetention did.
type RetentionResult struct {
	Archived []string      `json:"archived_ids"` // expired entries moved to the archive
	Deleted  []string      `json:"deleted_ids"`  // archived entries past retention, forgotten
	Commits  []string      `json:"commits"`
	Forget   *ForgetResult `json:"-"`
	// HandEdit is what committing the person's uncommitted edits first did.
	HandEdit *HandEdit `json:"hand_edit,omitempty"`
}

// retentionCheckedPath holds the commit and day retention last found
// nothing due on (ApplyRetention).
const retentionCheckedPath = CacheDir + "/retention-checked"

// retentionStamp is "<HEAD> <day> <archive_days>" when the memory files
// hold HEAD's content (no uncommitted edit), "" otherwise.
func (s *Store) retentionStamp(ctx context.Context, now time.Time) string {
	head, err := s.Repo.HeadHash(ctx)
	if err != nil || head == "" {
		return ""
	}
	paths, _, err := s.handEditPaths(ctx)
	if err != nil {
		return ""
	}
	if changed, err := s.Repo.Changed(ctx, paths, nil); err != nil || len(changed) > 0 {
		return ""
	}
	return s.retentionMark(head, now)
}

// retentionMark is the content of retentionCheckedPath for a commit, as of
// now: "<commit> <day> <archive_days>".
func (s *Store) retentionMark(commit string, now time.Time) string {
	return fmt.Sprintf("%s %s %d", commit, now.UTC().Format("2006-01-02"), s.Config.Consolidate.ArchiveDays)
}

// ApplyRetention archives the expired live entries (one commit, "expire")
// and forgets the archived entries past consolidate.archive_days (one
// commit, "retention", with tombstones), as of now. It takes the lock
// (the caller must not hold it); with nothing due it writes nothing.
func ApplyRetention(ctx context.Context, s *Store, now time.Time) (*RetentionResult, error) {
	res := &RetentionResult{}
	// What is due is a function of the files and the day: the same commit,
	// no uncommitted edit and the same day as the last check that found
	// nothing due means nothing is due (decided by hash, without reading
	// the memory).
	stamp := s.retentionStamp(ctx, now)
	marker := s.abs(retentionCheckedPath)
	if b, err := os.ReadFile(marker); err == nil && stamp != "" && strings.TrimSpace(string(b)) == stamp {
		return res, nil
	}
	m, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if len(RetentionDue(m, now, 0, s.Config.Consolidate.ArchiveDays)) == 0 {
		if stamp != "" && EnsureDir(s.Dir, CacheDir) == nil {
			_ = WriteFileAtomic(ctx, marker, []byte(stamp+"\n"), PrivateFileMode) // a cache: best effort
		}
		return res, nil // the usual case: no lock, no commit
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	he, err := s.CommitHandEdits(ctx)
	if err != nil {
		_ = unlock()
		return nil, err
	}
	if !he.Empty() {
		res.HandEdit = he
	}
	m, err = s.Load(ctx)
	if err != nil {
		_ = unlock()
		return nil, err
	}
	day := now.UTC().Truncate(24 * time.Hour)
	ed := m.Edit()
	ed.SetMaxBytes(s.Config.Files.MaxBytes)
	for _, due := range RetentionDue(m, now, 0, 0) {
		e := m.Find(due.ID)
		if e == nil || due.Action != "archive" {
			continue
		}
		ne := *e
		ne.Notes = append(append([]string(nil), e.Notes...), "expired "+day.Format("2006-01-02"))
		if err := ed.Move(e, &ne, Target{Place: PlaceArchive}); err != nil {
			_ = unlock()
			return nil, err
		}
		res.Archived = append(res.Archived, e.ID)
	}
	if len(res.Archived) > 0 {
		files, err := ed.Changed()
		if err == nil {
			var h string
			h, err = s.Write(ctx, files, CommitMessage{Subject: "expire: archive " + strings.Join(res.Archived, ", "), Op: "expire", Entries: res.Archived})
			if h != "" {
				res.Commits = append(res.Commits, h)
			}
		}
		if err != nil {
			_ = unlock()
			return nil, err
		}
		if m, err = s.Load(ctx); err != nil {
			_ = unlock()
			return nil, err
		}
	}
	var del []string
	for _, due := range RetentionDue(m, now, 0, s.Config.Consolidate.ArchiveDays) {
		if due.Action == "delete" {
			del = append(del, due.ID)
		}
	}
	if err := unlock(); err != nil {
		return nil, err
	}
	if len(del) == 0 {
		return res, nil
	}
	fr, err := Forget(ctx, s, del, "archived longer than consolidate.archive_days", ForgetOptions{Now: now, Op: "retention"})
	if err != nil {
		return res, err
	}
	res.Deleted, res.Forget = fr.IDs, fr
	if fr.Commit != "" {
		res.Commits = append(res.Commits, fr.Commit)
	}
	return res, nil
}

// ParseExpires reads an expiry: a date or time as in entries (2026-06-30,
// RFC 3339), or a span from now: a number and d (days), w (weeks) or h
// (hours), e.g. 90d.
func ParseExpires(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, ok := ParseTime(s); ok {
		return t, nil
	}
	if len(s) >= 2 {
		n, err := strconv.Atoi(s[:len(s)-1])
		if err == nil && n > 0 && n <= 100*366 {
			switch s[len(s)-1] {
			case 'd':
				return now.UTC().AddDate(0, 0, n).Truncate(24 * time.Hour), nil
			case 'w':
				return now.UTC().AddDate(0, 0, 7*n).Truncate(24 * time.Hour), nil
			case 'h':
				return now.UTC().Add(time.Duration(n) * time.Hour).Truncate(time.Second), nil
			}
		}
	}
	return time.Time{}, errors.New("want a date (2026-06-30) or a span from now (90d, 12w, 36h)")
}
