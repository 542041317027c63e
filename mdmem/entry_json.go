package mdmem

import (
	"bytes"
	"encoding/json"
	"time"
)

// EntryJSON is the JSON view of an entry: the seed's schema plus where the
// entry lives.
type EntryJSON struct {
	ID           string    `json:"id"`
	Category     string    `json:"category"`
	Content      string    `json:"content"`
	Source       string    `json:"source,omitempty"`
	CreatedAt    time.Time `json:"created_at,omitzero"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	Scope        []string  `json:"scope"`
	Confidence   *float64  `json:"confidence,omitempty"`
	Refs         []string  `json:"refs"`
	Tags         []string  `json:"tags"`
	Topic        string    `json:"topic,omitempty"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	SupersededOn time.Time `json:"superseded_on,omitzero"`
	See          []string  `json:"see"`
	Notes        []string  `json:"notes"`
	Place        Place     `json:"place"`
	Section      string    `json:"section,omitempty"`
	File         string    `json:"file"`
	Line         int       `json:"line"`
}

// JSON returns the entry's JSON view.
func (e *Entry) JSON() EntryJSON {
	j := EntryJSON{ID: e.ID, Category: e.Category, Content: e.Content, Source: e.Source,
		CreatedAt: e.Created, UpdatedAt: e.Updated, ExpiresAt: e.Expires, Scope: list(e.Scope), Refs: list(e.Refs),
		Tags: list(e.Tags), Topic: e.Topic, SupersededBy: e.SupersededBy, SupersededOn: e.SupersededOn,
		See: list(e.See), Notes: list(e.Notes), Place: e.Place, Section: e.Section, File: e.File, Line: e.Line}
	if e.HasConf {
		c := e.Confidence
		j.Confidence = &c
	}
	return j
}

// list returns l, or an empty list for nil: JSON lists are always present.
func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// MarshalJSON encodes the entry as its JSON view.
func (e *Entry) MarshalJSON() ([]byte, error) { return MarshalNoEscape(e.JSON()) }

// MarshalNoEscape is json.Marshal without HTML escaping: a MarshalJSON
// method's output is printed as it is, so one that escaped & and < would
// show \u0026 in output that an encoder told not to escape.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// CandidateJSON is the JSON view of a queued candidate in commands' output
// (the queue file's own format is Candidate): its id is candidate_id
// (entries have id), times are UTC, lists are always present.
type CandidateJSON struct {
	CandidateID string    `json:"candidate_id"`
	Content     string    `json:"content"`
	Category    string    `json:"category"`
	Source      string    `json:"source"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
	ExpiresAt   time.Time `json:"expires_at,omitzero"`
	QueuedAt    time.Time `json:"queued_at,omitzero"`
	Scope       []string  `json:"scope"`
	Confidence  *float64  `json:"confidence,omitempty"`
	Refs        []string  `json:"refs"`
	Tags        []string  `json:"tags"`
	Topic       string    `json:"topic,omitempty"`
	// Seen is "typed" when memctl saw the person type the words
	// (Candidate.Seen); absent otherwise.
	Seen string `json:"seen,omitempty"`
}

// JSON returns the candidate's JSON view.
func (c *Candidate) JSON() CandidateJSON {
	return CandidateJSON{CandidateID: c.ID, Content: c.Content, Category: c.Category, Source: c.Source,
		CreatedAt: utc(c.CreatedAt), UpdatedAt: utc(c.UpdatedAt), ExpiresAt: utc(c.ExpiresAt), QueuedAt: utc(c.QueuedAt),
		Scope: list(c.Scope), Confidence: c.Confidence, Refs: list(c.Refs), Tags: list(c.Tags), Topic: c.Topic, Seen: c.Seen}
}

// utc returns t in UTC (the zero time stays zero).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
