package mdmem

import (
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
	Scope        []string  `json:"scope,omitempty"`
	Confidence   *float64  `json:"confidence,omitempty"`
	Refs         []string  `json:"refs,omitempty"`
	Tags         []string  `json:"tags,omitempty"`
	Topic        string    `json:"topic,omitempty"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	SupersededOn time.Time `json:"superseded_on,omitzero"`
	See          []string  `json:"see,omitempty"`
	Notes        []string  `json:"notes,omitempty"`
	Place        Place     `json:"place"`
	Section      string    `json:"section,omitempty"`
	File         string    `json:"file"`
	Line         int       `json:"line"`
}

// JSON returns the entry's JSON view.
func (e *Entry) JSON() EntryJSON {
	j := EntryJSON{ID: e.ID, Category: e.Category, Content: e.Content, Source: e.Source,
		CreatedAt: e.Created, UpdatedAt: e.Updated, ExpiresAt: e.Expires, Scope: e.Scope, Refs: e.Refs,
		Tags: e.Tags, Topic: e.Topic, SupersededBy: e.SupersededBy, SupersededOn: e.SupersededOn,
		See: e.See, Notes: e.Notes, Place: e.Place, Section: e.Section, File: e.File, Line: e.Line}
	if e.HasConf {
		c := e.Confidence
		j.Confidence = &c
	}
	return j
}

// MarshalJSON encodes the entry as its JSON view.
func (e *Entry) MarshalJSON() ([]byte, error) { return json.Marshal(e.JSON()) }
