package mdmem

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"
)

// SpoolWriter writes candidates to an import's spool in a binary form,
// cheaper to write and read than JSON; SpoolReader gives back what a
// JSON round trip of each candidate would (the same strings, lists,
// numbers and instants with their offsets).
type SpoolWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewSpoolWriter returns a SpoolWriter writing to w through a buffer:
// Flush it at the end.
func NewSpoolWriter(w io.Writer) *SpoolWriter {
	return &SpoolWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

// Write appends c to the spool.
func (s *SpoolWriter) Write(c *Candidate) error {
	b := s.buf[:0]
	str := func(v string) { b = binary.AppendUvarint(b, uint64(len(v))); b = append(b, v...) }
	list := func(v Strings) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		for _, x := range v {
			str(x)
		}
	}
	when := func(t time.Time) error {
		if t.IsZero() { // omitzero: JSON drops it
			b = append(b, 0)
			return nil
		}
		m, err := t.MarshalBinary()
		if err != nil {
			return err
		}
		b = append(b, byte(len(m)))
		b = append(b, m...)
		return nil
	}
	str(c.ID)
	str(c.Content)
	str(c.Category)
	str(c.Source)
	for _, t := range []time.Time{c.CreatedAt, c.UpdatedAt, c.QueuedAt, c.ExpiresAt} {
		if err := when(t); err != nil {
			return fmt.Errorf("import spool: %w", err)
		}
	}
	list(c.Scope)
	if c.Confidence == nil {
		b = append(b, 0)
	} else {
		if math.IsNaN(*c.Confidence) || math.IsInf(*c.Confidence, 0) {
			return errors.New("import spool: confidence is not a number")
		}
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*c.Confidence))
	}
	list(c.Refs)
	str(c.Topic)
	list(c.Tags)
	if c.AllowForgotten {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	str(c.Seen)
	s.buf = b
	var n [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))]); err != nil {
		return fmt.Errorf("import spool: %w", err)
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("import spool: %w", err)
	}
	return nil
}

// Flush writes what the buffer holds.
func (s *SpoolWriter) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("import spool: %w", err)
	}
	return nil
}

// SpoolReader reads back what a SpoolWriter wrote.
type SpoolReader struct {
	r   *bufio.Reader
	buf []byte
}

// NewSpoolReader returns a SpoolReader reading r through a buffer.
func NewSpoolReader(r io.Reader) *SpoolReader {
	return &SpoolReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// errSpool is a spool that does not read back.
var errSpool = errors.New("import spool: corrupt record")

// Read returns the next candidate; nil, nil at the end of the spool.
func (s *SpoolReader) Read() (*Candidate, error) {
	n, err := binary.ReadUvarint(s.r)
	if err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	if uint64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	bad := false
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			bad = true
			return 0
		}
		b = b[k:]
		return v
	}
	str := func() string {
		l := uv()
		if bad || l > uint64(len(b)) {
			bad = true
			return ""
		}
		v := jsonString(string(b[:l]))
		b = b[l:]
		return v
	}
	list := func() Strings {
		l := uv()
		if bad || l > uint64(len(b)) {
			bad = true
			return nil
		}
		if l == 0 { // omitempty: JSON drops it
			return nil
		}
		v := make(Strings, l)
		for i := range v {
			v[i] = str()
		}
		return v
	}
	byte1 := func() byte {
		if len(b) == 0 {
			bad = true
			return 0
		}
		v := b[0]
		b = b[1:]
		return v
	}
	when := func() time.Time {
		l := int(byte1())
		if l == 0 || bad {
			return time.Time{}
		}
		if l > len(b) {
			bad = true
			return time.Time{}
		}
		var t time.Time
		if err := t.UnmarshalBinary(b[:l]); err != nil {
			bad = true
		}
		if _, off := t.Zone(); off == 0 {
			t = t.UTC() // JSON writes offset 0 as "Z", which reads as UTC
		}
		b = b[l:]
		return t
	}
	c := &Candidate{}
	c.ID, c.Content, c.Category, c.Source = str(), str(), str(), str()
	c.CreatedAt, c.UpdatedAt, c.QueuedAt, c.ExpiresAt = when(), when(), when(), when()
	c.Scope = list()
	if byte1() == 1 {
		if len(b) < 8 {
			return nil, errSpool
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		c.Confidence = &f
		b = b[8:]
	}
	c.Refs = list()
	c.Topic = str()
	c.Tags = list()
	c.AllowForgotten = byte1() == 1
	c.Seen = str()
	if bad || len(b) != 0 {
		return nil, errSpool
	}
	return c, nil
}

// jsonString returns s as a JSON round trip gives it back: the same,
// unless it is not valid UTF-8 (each bad byte then reads as U+FFFD).
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	data, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(data, &out)
	return out
}
