package consolidate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// PendingItem is an entry awaiting confirmation, with why.
type PendingItem struct {
	ID       string   `json:"id"`
	Category string   `json:"category"`
	Content  string   `json:"content"`
	Why      []string `json:"why"`
	See      []string `json:"see"`
	Source   string   `json:"source,omitempty"`
	Created  string   `json:"created_at,omitempty"`
	Line     int      `json:"line"`
	// Others are the entries it names (See), as they are now, so a person
	// can compare the two texts.
	Others []PendingOther `json:"others"`
}

// PendingOther is an entry a pending entry names: the one it may update,
// contradicts or restates.
type PendingOther struct {
	ID           string      `json:"id"`
	Content      string      `json:"content"`
	Date         string      `json:"created_at,omitempty"`
	Place        mdmem.Place `json:"place"`
	SupersededBy string      `json:"superseded_by,omitempty"`
}

// Pending lists the entries of "## Pending confirmation".
func Pending(m *mdmem.Memory) []PendingItem {
	var out []PendingItem
	for _, e := range m.Main.Entries {
		if e.Place != mdmem.PlacePending {
			continue
		}
		it := PendingItem{ID: e.ID, Category: e.Category, Content: e.Content, See: e.See, Source: e.Source, Line: e.Line}
		if !e.Created.IsZero() {
			it.Created = mdmem.FormatTime(e.Created)
		}
		for _, n := range e.Notes {
			if !strings.EqualFold(n, pendingNote) {
				it.Why = append(it.Why, n)
			}
		}
		if len(it.Why) == 0 {
			it.Why = []string{"pending user confirmation"}
		}
		for _, id := range e.See {
			if o := m.Find(id); o != nil && o != e {
				po := PendingOther{ID: o.ID, Content: o.Content, Place: o.Place, SupersededBy: o.SupersededBy}
				if d := o.Date(); !d.IsZero() {
					po.Date = mdmem.FormatTime(d)
				}
				it.Others = append(it.Others, po)
			}
		}
		out = append(out, it)
	}
	return out
}

const pendingNote = "pending user confirmation"

// MaxReasonBytes caps a reject reason: it is kept on the entry's line in
// the archive.
const MaxReasonBytes = 1000

// ErrNotPending is returned for an id that is not in Pending confirmation.
var ErrNotPending = errors.New("not in Pending confirmation")

// Resolution is what confirm or reject did.
type Resolution struct {
	ID       string   `json:"entry_id"`
	Action   string   `json:"action"` // "confirmed" or "rejected"
	Place    string   `json:"place"`  // where the entry went
	Archived []string `json:"archived_ids"`
	Commit   string   `json:"commit,omitempty"`
	// HandEdit is what committing the person's uncommitted edits first did.
	HandEdit *mdmem.HandEdit `json:"hand_edit,omitempty"`
}

func isConflictNote(n string) (string, bool) {
	l := strings.ToLower(n)
	rest, ok := strings.CutPrefix(l, "conflicts with ")
	if !ok {
		rest, ok = strings.CutPrefix(l, "may update ")
	}
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, ":")
	return strings.TrimSpace(id), true
}

func resolve(ctx context.Context, s *mdmem.Store, id string, fn func(m *mdmem.Memory, e *mdmem.Entry, ed *mdmem.Editor, r *Resolution) (string, error)) (*Resolution, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	he, err := s.CommitHandEdits(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.CheckUniqueIDs(); err != nil {
		return nil, err
	}
	e := m.Find(id)
	if e == nil {
		err := fmt.Errorf("no entry %s", id)
		if dym := mdmem.DidYouMean(m.SuggestIDs(id)); dym != "" {
			err = fmt.Errorf("no entry %s (%s)", id, dym)
		}
		return nil, err
	}
	if e.Place != mdmem.PlacePending {
		return nil, fmt.Errorf("%s is in %s: %w", id, e.Place, ErrNotPending)
	}
	r := &Resolution{ID: id}
	if !he.Empty() {
		r.HandEdit = he
	}
	ed := m.Edit()
	ed.SetMaxBytes(s.Config.Files.MaxBytes)
	subject, err := fn(m, e, ed, r)
	if err != nil {
		return nil, err
	}
	files, err := ed.Changed()
	if err != nil {
		return nil, err
	}
	entries := append([]string{id}, r.Archived...)
	r.Commit, err = s.Write(ctx, files, mdmem.CommitMessage{Subject: subject, Op: map[string]string{"confirmed": "confirm", "rejected": "reject"}[r.Action], Entries: entries})
	return r, err
}

func clearPending(e *mdmem.Entry) *mdmem.Entry {
	c := cloneEntry(e)
	c.Notes = nil
	for _, n := range e.Notes {
		l := strings.ToLower(n)
		if l == pendingNote || strings.HasPrefix(l, "conflicts with") || strings.HasPrefix(l, "may update") || strings.HasPrefix(l, "reads like") ||
			strings.HasPrefix(l, "restates archived") || strings.HasPrefix(l, "contains invisible") || strings.HasPrefix(l, "agent-sourced") || l == strings.ToLower(mdmem.UnseenPersonNote) ||
			strings.HasPrefix(l, strings.ToLower(noDecisionNote)) {
			continue
		}
		c.Notes = append(c.Notes, n)
	}
	return c
}

// Confirm keeps a pending entry as stated (or with text instead) and moves
// it to its section. Secrets in text are redacted, or the text refused,
// by the secrets policy (add.secrets). Entries it was in conflict with move to the archive,
// superseded by it, unless keepOther.
func Confirm(ctx context.Context, s *mdmem.Store, id, text string, keepOther bool, now time.Time) (*Resolution, error) {
	return resolve(ctx, s, id, func(m *mdmem.Memory, e *mdmem.Entry, ed *mdmem.Editor, r *Resolution) (string, error) {
		r.Action = "confirmed"
		ne := clearPending(e)
		if slices.Contains(e.Notes, mdmem.UnseenPersonNote) {
			ne.Source = "user_explicit" // the person vouches for the label now
		}
		if text != "" {
			if err := mdmem.ValidText("text", text, s.Config.Add.MaxContentBytes); err != nil {
				return "", err
			}
			red, err := s.Config.Add.Redactor().Redact("text", text)
			if err != nil {
				return "", err
			}
			ne.Content = mdmem.OneLine(red)
		}
		ne.Updated = now.UTC().Truncate(24 * time.Hour)
		ne.Notes = append(ne.Notes, mdmem.ConfirmedNote)
		t := mdmem.TargetFor(ne, "")
		r.Place = string(t.Place)
		if t.Place == mdmem.PlaceTopic {
			r.Place = mdmem.TopicPath(t.Topic)
		}
		if err := ed.Move(e, ne, t); err != nil {
			return "", err
		}
		if !keepOther {
			for _, n := range e.Notes {
				other, ok := isConflictNote(n)
				if !ok {
					continue
				}
				o := m.Find(other)
				if o == nil || o.Place == mdmem.PlaceArchive || o.Place == mdmem.PlaceOther || o == e {
					continue
				}
				oc := cloneEntry(o)
				oc.SupersededBy, oc.SupersededOn = e.ID, now.UTC().Truncate(24*time.Hour)
				if err := ed.Move(o, oc, mdmem.Target{Place: mdmem.PlaceArchive}); err != nil {
					return "", err
				}
				r.Archived = append(r.Archived, o.ID)
			}
		}
		subj := "confirm " + e.ID
		if len(r.Archived) > 0 {
			subj += " (supersedes " + strings.Join(r.Archived, ", ") + ")"
		}
		return subj, nil
	})
}

// Reject moves a pending entry to the archive with the reason (folded to
// one line; at most MaxReasonBytes).
func Reject(ctx context.Context, s *mdmem.Store, id, reason string, now time.Time) (*Resolution, error) {
	if err := mdmem.ValidText("reason", reason, MaxReasonBytes); err != nil {
		return nil, fmt.Errorf("%w; give a short reason, one line", err)
	}
	return resolve(ctx, s, id, func(m *mdmem.Memory, e *mdmem.Entry, ed *mdmem.Editor, r *Resolution) (string, error) {
		r.Action, r.Place = "rejected", string(mdmem.PlaceArchive)
		ne := clearPending(e)
		note := "rejected " + now.UTC().Format("2006-01-02")
		if reason = mdmem.OneLine(reason); reason != "" {
			note += ": " + reason
		}
		ne.Notes = append(ne.Notes, note)
		if err := ed.Move(e, ne, mdmem.Target{Place: mdmem.PlaceArchive}); err != nil {
			return "", err
		}
		return "reject " + e.ID, nil
	})
}
