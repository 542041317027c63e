package mdmem

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var inputNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestDatesInRange: dates beyond now + 1 day and before 1970 are
// refused with the field named; dates within range and absent ones pass.
func TestDatesInRange(t *testing.T) {
	for _, tc := range []struct {
		name             string
		created, updated string
		want             string // error substring; "" = accepted
	}{
		{"absent", "", "", ""},
		{"today", "2026-03-01T11:00:00Z", "", ""},
		{"within a day", "2026-03-02T11:00:00Z", "", ""},
		{"1970", "1970-01-01T00:00:00Z", "", ""},
		{"year 9999", "9999-01-01T00:00:00Z", "", "created_at 9999-01-01T00:00:00Z is in the future"},
		{"two days ahead", "2026-03-03T12:00:01Z", "", "created_at"},
		{"year 0000", "0000-01-01T00:00:00Z", "", "created_at 0000-01-01T00:00:00Z is before 1970-01-01"},
		{"1969", "1969-12-31T23:59:59Z", "", "before 1970"},
		{"updated in the future", "", "9999-01-01T00:00:00Z", "updated_at 9999"},
		{"updated before 1970", "2026-01-01T00:00:00Z", "0001-01-01T00:00:01Z", "updated_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := `{"content":"x","category":"fact"`
			if tc.created != "" {
				line += `,"created_at":"` + tc.created + `"`
			}
			if tc.updated != "" {
				line += `,"updated_at":"` + tc.updated + `"`
			}
			line += "}\n"
			var err error
			if derr := DecodeJSONLines(strings.NewReader(line), 1<<20, func(_ int, c *Candidate, e error) error {
				if err = e; err == nil {
					err = c.Normalize(inputNow, 4096, nil)
				}
				return nil
			}); derr != nil {
				t.Fatal(derr)
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTrustedDate: a future date counts as no date when recency
// is compared; other dates are unchanged.
func TestTrustedDate(t *testing.T) {
	for _, tc := range []struct{ in, want time.Time }{
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
		{inputNow.Add(time.Second), time.Time{}},
		{inputNow, inputNow},
		{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Time{}, time.Time{}},
	} {
		if got := TrustedDate(tc.in, inputNow); !got.Equal(tc.want) {
			t.Errorf("TrustedDate(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestJSONLines: one object per line and nothing after it, strict
// UTF-8, a leading BOM ignored, unknown fields and memctl's own fields
// refused; each error names its line.
func TestJSONLines(t *testing.T) {
	ok := `{"content":"a","category":"fact"}`
	for _, tc := range []struct {
		name, input string
		want        []string // per non-blank line: "" = candidate, else error substring
	}{
		{"plain", ok + "\n" + ok, []string{"", ""}},
		{"blank lines and CRLF", "\n" + ok + "\r\n\r\n" + ok + "\n", []string{"", ""}},
		{"BOM", "\xef\xbb\xbf" + ok + "\n", []string{""}},
		{"BOM only at the start", ok + "\n\xef\xbb\xbf" + ok + "\n", []string{"", "invalid"}},
		{"two objects on a line", ok + ok + "\n" + ok, []string{"more than one JSON object", ""}},
		{"trailing junk", ok + " junk\n", []string{"text after the JSON object"}},
		{"trailing array", ok + "[1]\n", []string{"text after the JSON object"}},
		{"trailing white space", ok + " \t\n", []string{""}},
		{"invalid UTF-8", `{"content":"caf` + "\xe9" + `","category":"fact"}`, []string{"invalid UTF-8 at byte 16"}},
		{"invalid UTF-8 in a key", `{"content":"a","category":"fact","t` + "\xff" + `":1}`, []string{"invalid UTF-8"}},
		{"lone surrogate", `{"content":"a\udc00","category":"fact"}`, []string{"surrogate"}},
		{"high surrogate alone", `{"content":"a\ud83d x","category":"fact"}`, []string{"surrogate"}},
		{"surrogate pair", `{"content":"a\ud83d\ude00","category":"fact"}`, []string{""}},
		{"escaped backslash before u", `{"content":"a\\udc00","category":"fact"}`, []string{""}},
		{"unknown field", `{"content":"a","category":"fact","colour":"red"}`, []string{`unknown field "colour"`}},
		{"id", `{"id":"c20260101T000000.000000-00000000","content":"a","category":"fact"}`, []string{`field "id" is memctl's own`}},
		{"queued_at", `{"content":"a","category":"fact","queued_at":"2026-01-01T00:00:00Z"}`, []string{`field "queued_at" is memctl's own`}},
		{"id null", `{"content":"a","category":"fact","id":null}`, []string{`field "id"`}},
		{"not an object", `["a"]`, []string{"invalid"}},
		{"truncated", `{"content":"a"`, []string{"invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := DecodeJSONLines(strings.NewReader(tc.input), 1<<20, func(_ int, c *Candidate, e error) error {
				switch {
				case e != nil:
					got = append(got, e.Error())
				case c == nil:
					got = append(got, "nil candidate")
				default:
					got = append(got, "")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if tc.want[i] == "" && got[i] != "" || tc.want[i] != "" && !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("line %d: got %q, want %q", i+1, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestQueueFiles: queue files carry memctl's own fields; they are
// decoded as strictly as input otherwise; entries that are not regular
// files (a symbolic link, a directory) are reported, never read or skipped.
func TestQueueFiles(t *testing.T) {
	dir := t.TempDir()
	qd := filepath.Join(dir, filepath.FromSlash(QueueDir))
	must(t, os.MkdirAll(qd, 0o755))
	good := "c20260101T000000.000001-00000001"
	write := func(name, text string) {
		must(t, os.WriteFile(filepath.Join(qd, name), []byte(text), 0o644))
	}
	write(good+".json", "\xef\xbb\xbf"+`{"id":"`+good+`","content":"a","category":"fact","queued_at":"2026-01-01T00:00:00Z"}`+"\n")
	write("c20260101T000000.000002-00000002.json", `{"id":"c20260101T000000.000002-00000002","content":"a","category":"fact"}{"id":"x"}`)
	write("c20260101T000000.000003-00000003.json", `{"id":"c20260101T000000.000003-00000003","content":"`+"\xff"+`","category":"fact"}`)
	write("c20260101T000000.000004-00000004.json", `{"id":"c20260101T000000.000004-00000004","content":"a","category":"fact","extra":1}`)
	outside := filepath.Join(t.TempDir(), "secret.json")
	must(t, os.WriteFile(outside, []byte(`{"id":"c20260101T000000.000005-00000005","content":"a","category":"fact"}`), 0o644))
	must(t, os.Symlink(outside, filepath.Join(qd, "c20260101T000000.000005-00000005.json")))
	must(t, os.Mkdir(filepath.Join(qd, "c20260101T000000.000006-00000006.json"), 0o755))
	cands, bad, err := ReadQueue(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].ID != good {
		t.Errorf("candidates %v, want only %s", cands, good)
	}
	want := map[string]string{
		"000002": "more than one JSON object",
		"000003": "invalid UTF-8",
		"000004": `unknown field "extra"`,
		"000005": "symbolic link",
		"000006": "not a regular file",
	}
	if len(bad) != len(want) {
		t.Fatalf("problems %v, want %d", bad, len(want))
	}
	for _, b := range bad {
		key := b.File[strings.Index(b.File, ".")+1 : strings.Index(b.File, "-")]
		if !strings.Contains(b.Err.Error(), want[key]) {
			t.Errorf("%s: %v, want %q", b.File, b.Err, want[key])
		}
	}
}

// TestSymlinkedQueueAndCache: memctl refuses to write through a
// queue or cache directory that is a link out of the memory directory.
func TestSymlinkedQueueAndCache(t *testing.T) {
	for _, rel := range []string{QueueDir, CacheDir, QueueDir + "/held", MarkerDir + "/queue"} {
		t.Run(rel, func(t *testing.T) {
			s := newStore(t)
			outside := t.TempDir()
			link := filepath.Join(s.Dir, filepath.FromSlash(rel))
			must(t, os.MkdirAll(filepath.Dir(link), 0o755))
			_ = os.RemoveAll(link)
			must(t, os.Symlink(outside, link))
			if _, err := SafeDir(s.Dir, rel); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("SafeDir: %v", err)
			}
			c := &Candidate{Content: "a", Category: "fact"}
			must(t, c.Normalize(inputNow, 4096, nil))
			_, qerr := Enqueue(context.Background(), s.Dir, []*Candidate{c}, inputNow)
			unlock, lerr := s.Lock(context.Background())
			if lerr == nil {
				must(t, unlock())
			}
			if strings.HasPrefix(rel, QueueDir) && rel != QueueDir+"/held" {
				if qerr == nil {
					t.Errorf("Enqueue wrote through the link")
				}
			} else if lerr == nil {
				t.Errorf("Lock accepted a linked %s", rel)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("wrote %d files outside the memory", len(ents))
			}
		})
	}
	// A file where a directory belongs is refused too.
	s := newStore(t)
	must(t, os.WriteFile(filepath.Join(s.Dir, filepath.FromSlash(QueueDir)), nil, 0o644))
	if _, err := SafeDir(s.Dir, QueueDir+"/held"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("SafeDir over a file: %v", err)
	}
}

// TestScopes: scopes are split on commas and trimmed; an empty
// one is refused, never read as "global".
func TestScopes(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // joined with |, or "error"
	}{
		{[]string{"project:a"}, "project:a"},
		{[]string{"project:a, project:b"}, "project:a|project:b"},
		{[]string{" project:a ", "project:b,project:c"}, "project:a|project:b|project:c"},
		{[]string{""}, "error"},
		{[]string{"  "}, "error"},
		{[]string{"project:a,"}, "error"},
		{[]string{"project:a", ""}, "error"},
		{nil, ""},
	} {
		got, err := SplitScopes(tc.in...)
		s := strings.Join(got, "|")
		if err != nil {
			s = "error"
			if !errors.Is(err, ErrEmptyScope) {
				t.Errorf("%q: %v", tc.in, err)
			}
		}
		if s != tc.want {
			t.Errorf("SplitScopes(%q) = %q, want %q", tc.in, s, tc.want)
		}
	}
	c := &Candidate{Content: "a", Category: "fact", Scope: Strings{""}}
	if err := c.Normalize(inputNow, 4096, nil); !errors.Is(err, ErrEmptyScope) {
		t.Errorf("Normalize with an empty scope: %v", err)
	}
}

// TestStateOutOfRange: a state.json number no id can have gives
// an error naming the file and the fix, not an internal error later.
func TestStateOutOfRange(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"last_id":{"fact":9223372036854775807}}`, "last_id.fact is 9223372036854775807"},
		{`{"last_id":{"fact":99999999999999999999}}`, "not an id number"},
		{`{"last_id":{"fact":-1}}`, "last_id.fact is -1"},
		{`{"last_id":{"fact":"7"}}`, "not an id number"},
		{`{"last_id":`, "not valid JSON"},
		{`{"last_id":{"fact":999999999}}`, ""},
	} {
		s := newStore(t)
		must(t, os.WriteFile(filepath.Join(s.Dir, filepath.FromSlash(StatePath)), []byte(tc.json), 0o644))
		st, err := s.ReadState()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.json, err)
				continue
			}
			a := NewIDAllocator(st, &Memory{Main: &Doc{}})
			if _, err := a.Next("fact"); err == nil || !strings.Contains(err.Error(), "no fact id left") {
				t.Errorf("Next at the last id: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), StatePath) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "set each number") {
			t.Errorf("%s: error %v, want %q", tc.json, err, tc.want)
		}
	}
}
