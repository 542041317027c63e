package mdmem

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark/text"
)

func addSeeds(f *testing.F) {
	for _, name := range []string{"design.md", "odd.md", "crlf.md"} {
		b, err := os.ReadFile("testdata/golden/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\ndescription: x\n---\n- [fact-001] a (b · 2026-01-01)\n"))
	f.Add([]byte("- [pref-001] (((( · ))))\n  - nested\n> quote\n"))
	f.Add([]byte("# Core profile\n## User preferences\n- [pref-001]\n-\n- [x]\n"))
}

// FuzzParseDoc: the parser never panics, and what it reports is consistent
// with the bytes: ranges in order and in bounds, Raw equal to the range.
func FuzzParseDoc(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, path := range []string{MainFile, "topics/t.md"} {
			d := ParseDoc(path, src)
			prev := 0
			for _, e := range d.Entries {
				if e.Start < prev || e.End < e.Start || e.End > len(src) || e.HeadEnd < e.Start || e.HeadEnd > e.End {
					t.Fatalf("%s: entry %q range %d..%d (head %d) after %d, len %d", path, e.ID, e.Start, e.End, e.HeadEnd, prev, len(src))
				}
				if string(src[e.Start:e.End]) != e.Raw {
					t.Fatalf("Raw differs from the bytes")
				}
				prev = e.End
			}
		}
	})
}

// FuzzEdit: on any input, an edit either succeeds, and the result holds
// the edited and inserted entries with every other entry byte-identical, or
// it fails with an error. It never panics and never loses an entry.
func FuzzEdit(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if !utf8.Valid(src) {
			return
		}
		m := &Memory{Main: ParseDoc(MainFile, src), Topics: map[string]*Doc{}}
		m.reindex()
		ed := m.Edit()
		var target *Entry
		for _, e := range m.Main.Entries {
			if e.ID != "" && m.Find(e.ID) == e {
				target = e
				break
			}
		}
		if target != nil {
			c := *target
			c.Content = "fuzz edited"
			ed.Replace(target, &c)
		}
		if err := ed.Insert(&Entry{ID: "dec-99999", Category: "decision", Content: "fuzz inserted"}, Target{Place: PlaceCore}); err != nil {
			t.Fatal(err)
		}
		out, err := ed.Changed()
		if err != nil {
			return // refused, nothing written: acceptable
		}
		got := ParseDoc(MainFile, out[MainFile])
		found := 0
		for _, e := range got.Entries {
			if e.ID == "dec-99999" {
				found++
			}
		}
		if found != 1 {
			t.Fatalf("inserted entry found %d times in\n%q", found, out[MainFile])
		}
		if target != nil && !bytes.HasPrefix(out[MainFile], src[:target.Start]) && !bytes.Contains(out[MainFile], []byte("fuzz edited")) {
			t.Fatalf("bytes before the edited entry changed")
		}
	})
}

// TestParsePathological feeds inputs that make naive Markdown parsers
// quadratic or deep; they must complete (the test timeout is the bound).
func TestParsePathological(t *testing.T) {
	inputs := map[string]string{
		"nested quotes":   strings.Repeat(">", 100000) + " x\n",
		"nested lists":    strings.Repeat("- ", 20000) + "x\n",
		"brackets":        "- [pref-001] " + strings.Repeat("[", 100000) + "\n",
		"parens":          "- [pref-001] x " + strings.Repeat("(", 50000) + strings.Repeat(")", 50000) + "\n",
		"10 MB line":      "- [pref-001] " + strings.Repeat("a", 10<<20) + " (u · 2026-01-01)\n",
		"many items":      strings.Repeat("- [fact-1] x (u · 2026-01-01)\n", 100000),
		"many separators": "- [pref-001] x (" + strings.Repeat(" · ", 100000) + ")\n",
	}
	for name, in := range inputs {
		d := ParseDoc("topics/t.md", []byte(in))
		if name == "10 MB line" && (len(d.Entries) != 1 || d.Entries[0].Source != "u") {
			t.Errorf("%s: entries %d", name, len(d.Entries))
		}
		if (name == "nested quotes" || name == "nested lists") && (len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Message, "nested deeper than 32")) {
			t.Errorf("%s: problems %v", name, d.Problems)
		}
	}
}

// memoryText builds a MEMORY.md of core entries and topic files, for
// benchmarks.
func memoryText(core, topic int) (string, string) {
	var m strings.Builder
	m.WriteString("# Core profile\n## Key decisions\n")
	for i := 0; i < core; i++ {
		fmt.Fprintf(&m, "- [dec-%03d] Decision number %d about the order service cache and its Redis layer (session summary · 2026-01-08 · conf 0.8 · refs session:%d)\n", i+1, i, i)
	}
	m.WriteString("\n# Topic index\n- Facts → topics/facts.md\n\n# Archive\n")
	var t strings.Builder
	t.WriteString("---\ndescription: facts\n---\n# Facts\n\n")
	for i := 0; i < topic; i++ {
		fmt.Fprintf(&t, "- [fact-%d] Fact %d: the report API p99 latency was %d ms after change %d (tool · 2026-01-%02d · refs D%d:%d)\n", i+1, i, i%900, i, i%28+1, i%30, i%50)
	}
	return m.String(), t.String()
}

// BenchmarkParse parses a MEMORY.md of 200 entries plus a topic file of
// 10,000 entries; ns/entry is reported.
func BenchmarkParse(b *testing.B) {
	main, topic := memoryText(200, 10000)
	mb, tb := []byte(main), []byte(topic)
	b.SetBytes(int64(len(mb) + len(tb)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ParseDoc(MainFile, mb)
		ParseDoc("topics/facts.md", tb)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10200, "ns/entry")
}

// BenchmarkParseGoldmarkOnly is the baseline for BenchmarkParse: goldmark's
// block parse alone of the same files, building no entries.
func BenchmarkParseGoldmarkOnly(b *testing.B) {
	main, topic := memoryText(200, 10000)
	mb, tb := []byte(main), []byte(topic)
	b.SetBytes(int64(len(mb) + len(tb)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mdParser.Parse(text.NewReader(mb))
		mdParser.Parse(text.NewReader(tb))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10200, "ns/entry")
}

// FuzzFastPath: whenever the line-scan fast path accepts a body, its result
// is exactly what the goldmark walk gives.
func FuzzFastPath(f *testing.F) {
	addSeeds(f)
	main, topic := memoryText(5, 5)
	f.Add([]byte(main))
	f.Add([]byte(topic))
	f.Add([]byte("# A\n- [pref-1] x\n\n- [pref-2] y\n* [pref-3] z\n## B\n+ [dec-1] w (u · 2026-01-01)\n\n\n# Topic index\n- T → topics/t.md\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, path := range []string{MainFile, "topics/t.md"} {
			fast := &Doc{Path: path, Src: src, str: string(src)}
			if path != MainFile {
				fast.Topic = TopicSlug(path)
			}
			fast.indexLines()
			if !fast.parseSimple(src, 0) {
				continue
			}
			slow := &Doc{Path: path, Src: src, str: string(src), Topic: fast.Topic}
			slow.indexLines()
			slow.walk(mdParser.Parse(text.NewReader(src)), src, 0)
			if !reflect.DeepEqual(fast.Headings, slow.Headings) || !reflect.DeepEqual(fast.Index, slow.Index) || !reflect.DeepEqual(fast.Problems, slow.Problems) {
				t.Fatalf("fast path differs on %q:\nfast %+v %+v\nslow %+v %+v", src, fast.Headings, fast.Index, slow.Headings, slow.Index)
			}
			if len(fast.Entries) != len(slow.Entries) {
				t.Fatalf("fast path found %d entries, goldmark %d, in %q", len(fast.Entries), len(slow.Entries), src)
			}
			for i := range fast.Entries {
				if !reflect.DeepEqual(*fast.Entries[i], *slow.Entries[i]) {
					t.Fatalf("entry %d differs in %q:\nfast %+v\nslow %+v", i, src, *fast.Entries[i], *slow.Entries[i])
				}
			}
		}
	})
}
