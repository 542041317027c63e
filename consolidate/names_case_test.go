package consolidate

import (
	"strings"
	"testing"
	"time"
)

// TestVersionInANameIsNotSupersededByRule: a number that is the version
// in a product's name says what the statement is about ("the Node 18
// image"), so a new number there is not taken for a new value by rule:
// the Node 18 image's entry stays live beside the Node 20 image's, and
// "Python 3.12 is the default" waits for a person rather than archive
// "Python 3.11 is the default". A version that is the value ("example
// code uses Python 3.12") still supersedes.
func TestVersionInANameIsNotSupersededByRule(t *testing.T) {
	for _, tt := range []struct {
		old, newer string
		superseded bool
	}{
		{"The Node 18 image has 2 GB of memory", "The Node 20 image has 2 GB of memory", false},
		{"Python 3.11 is the default interpreter on CI", "Python 3.12 is the default interpreter on CI", false},
		{"Our Windows 10 laptops need the VPN client", "Our Windows 11 laptops need the VPN client", false},
		{"Example code uses Python 3.11", "Example code uses Python 3.12", true},
		{"The build uses 4 workers", "The build uses 8 workers", true},
		{"Uses 4 workers for the build", "Uses 8 workers for the build", true},
	} {
		t.Run(tt.newer, func(t *testing.T) {
			m := loadMem(t, map[string]string{"MEMORY.md": memoryWithDecisions("- [dec-001] " + tt.old + " (user · 2026-01-01)")})
			p := compute(t, m, cand(tt.newer, "decision", testNow.Add(-time.Hour)))
			main := string(p.Files["MEMORY.md"])
			archived := strings.Contains(main[strings.Index(main, "# Archive"):], "[dec-001]")
			if archived != tt.superseded || p.Count(OpSupersede) != map[bool]int{true: 1}[tt.superseded] {
				t.Errorf("dec-001 archived = %v, want %v; ops %+v\n%s", archived, tt.superseded, p.Ops, main)
			}
			if !strings.Contains(main, tt.newer) {
				t.Errorf("the new text is gone:\n%s", main)
			}
		})
	}
}

// TestCaseChangeIsNotADuplicate: "100 MB" and "100 Mb" compared equal
// (tokens are lower-cased), so the newer text merged into the older one
// and was gone. A change of case past a word's first letter is not a
// duplicate: the newer text waits for a person as a possible update. A
// capital at the start of a sentence is still a duplicate.
func TestCaseChangeIsNotADuplicate(t *testing.T) {
	for _, tt := range []struct {
		old, newer string
		merged     bool
	}{
		{"The upload limit is 100 MB", "The upload limit is 100 Mb", false},
		{"The cache holds 512 kB", "The cache holds 512 KB", false},
		{"retry limit must be >= 3", "retry LIMIT must be >= 3", true}, // emphasis
		{"prefers dark mode in the editor", "Prefers dark mode in the editor", true},
		{"The upload limit is 100 MB", "the upload limit is 100 MB.", true},
	} {
		t.Run(tt.newer, func(t *testing.T) {
			m := loadMem(t, map[string]string{"MEMORY.md": memoryWithDecisions("- [dec-001] " + tt.old + " (user · 2026-01-01)")})
			p := compute(t, m, cand(tt.newer, "decision", testNow.Add(-time.Hour)))
			main := string(p.Files["MEMORY.md"])
			if got := p.Count(OpMerge) == 1; got != tt.merged {
				t.Fatalf("merged = %v, want %v; ops %+v\n%s", got, tt.merged, p.Ops, main)
			}
			if !tt.merged {
				for _, want := range []string{"[dec-001] " + tt.old + " (", tt.newer + " ("} {
					if !strings.Contains(main, want) {
						t.Errorf("MEMORY.md lacks %q:\n%s", want, main)
					}
				}
			}
		})
	}
}

// TestModelMergeOfACaseChangeIsRefused: the model's merge of "100 Mb"
// into "100 MB", with or without text, would keep one unit and lose the
// other without an archive record.
func TestModelMergeOfACaseChangeIsRefused(t *testing.T) {
	const entry, candidate = "The upload limit is 100 MB", "The upload limit is 100 Mb"
	for _, text := range []string{"", entry, candidate} {
		dir := newRepo(t, memoryWithDecisions("- [dec-001] "+entry+" (user · 2026-01-01)"), "")
		enqueue(t, dir, cand(candidate, "decision", testNow))
		rep := run(t, dir, Options{Completer: oneOpCompleter("merge", text, false)})
		if rep.Plan.Count(OpMerge) != 0 {
			t.Errorf("text %q: the merge was applied: %+v", text, rep.Plan.Ops)
		}
		all := everywhere(t, dir)
		for _, want := range []string{entry, candidate} {
			if !strings.Contains(all, want) {
				t.Errorf("text %q: %q is gone:\n%s", text, want, all)
			}
		}
	}
}

func TestCaseChange(t *testing.T) {
	for _, tt := range []struct {
		a, b, was, now string
	}{
		{"The limit is 100 MB", "The limit is 100 Mb", "MB", "Mb"},
		{"The cache holds 512 kB", "the cache holds 512 KB", "kB", "KB"},
		{"Built for 5G", "built for 5g", "G", "g"},
		{"The limit is 100 mb", "The limit is 100 MB", "mb", "MB"},
		{"Written in US format", "written in us format", "", ""}, // not a unit
		{"NO Python 2 syntax", "no Python 2 syntax", "", ""},
		{"prefers dark mode", "Prefers Dark Mode", "", ""},
		{"Prefers C++", "prefers c++", "", ""},
		{"Totally different", "Another TEXT", "", ""},
	} {
		was, now, ok := caseChange(tt.a, tt.b)
		if was != tt.was || now != tt.now || ok != (tt.was != "") {
			t.Errorf("caseChange(%q, %q) = %q, %q, %v; want %q, %q", tt.a, tt.b, was, now, ok, tt.was, tt.now)
		}
	}
}

func TestVersionOfName(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool // for the text's first number
	}{
		{"The Node 18 image has 2 GB", true},
		{"Python 3.11 is the default", true},
		{"Our Windows 11 laptops", true},
		{"Example code uses Python 3.11", false},
		{"Uses 4 workers", false},
		{"Needs 2 approvals", false},
		{"The build uses 4 workers", false},
		{"Python 3.11", false},
	} {
		toks := casedTokens(tt.text)
		i := 0
		for i < len(toks) && !hasDigit(toks[i]) {
			i++
		}
		if got := versionOfName(toks, i); got != tt.want {
			t.Errorf("versionOfName(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
