package mdmem

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// mergeCase is one testdata/merge/*.txtar: base/, ours/ and theirs/ files,
// and either expected/ files with a report, or an error.
type mergeCase struct {
	arch                *txtar.Archive
	base, ours, theirs  map[string][]byte
	expected            map[string][]byte
	report, wantErr     string
	hasExpect, hasError bool
}

func readMergeCase(t *testing.T, path string) *mergeCase {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &mergeCase{arch: a, base: map[string][]byte{}, ours: map[string][]byte{}, theirs: map[string][]byte{}, expected: map[string][]byte{}}
	for _, f := range a.Files {
		dir, rel, _ := strings.Cut(f.Name, "/")
		switch dir {
		case "base":
			c.base[rel] = f.Data
		case "ours":
			c.ours[rel] = f.Data
		case "theirs":
			c.theirs[rel] = f.Data
		case "expected":
			c.expected[rel], c.hasExpect = f.Data, true
		case "report":
			c.report, c.hasExpect = string(f.Data), true
		case "error":
			c.wantErr, c.hasError = strings.TrimSpace(string(f.Data)), true
		}
	}
	return c
}

func mergeReport(r *MergeResult) string {
	r2 := *r
	r2.Files = nil
	b, _ := json.MarshalIndent(r2, "", "  ")
	return string(b) + "\n"
}

// TestMergeReplicasGolden runs every testdata/merge case both ways (ours
// and theirs swapped, and the machines with them): both must give the
// expected files byte for byte. -update rewrites the expectations.
func TestMergeReplicasGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/merge/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no merge cases")
	}
	for _, path := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			c := readMergeCase(t, path)
			ours, theirs := MergeSide{Files: c.ours, Machine: "laptop"}, MergeSide{Files: c.theirs, Machine: "workstation"}
			r1, err1 := MergeReplicas(MergeInput{Base: c.base, Sides: [2]MergeSide{ours, theirs}})
			r2, err2 := MergeReplicas(MergeInput{Base: c.base, Sides: [2]MergeSide{theirs, ours}})
			if c.hasError {
				for _, err := range []error{err1, err2} {
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("error = %v, want one holding %q", err, c.wantErr)
					}
				}
				return
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("merge: %v / %v", err1, err2)
			}
			if got1, got2 := filesText(r1.Files), filesText(r2.Files); got1 != got2 {
				t.Fatalf("the merge is not symmetric:\n--- ours, theirs\n%s\n--- theirs, ours\n%s", got1, got2)
			}
			if rep1, rep2 := mergeReport(r1), mergeReport(r2); rep1 != rep2 {
				t.Fatalf("the reports differ:\n%s\n%s", rep1, rep2)
			}
			for p, data := range r1.Files {
				if isMemoryFile(p) {
					if l, bad := conflictMarkerLine(data); bad {
						t.Fatalf("%s:%d holds a conflict marker", p, l)
					}
				}
			}
			if *update {
				var files []txtar.File
				for _, f := range c.arch.Files {
					if d, _, _ := strings.Cut(f.Name, "/"); d != "expected" && f.Name != "report" {
						files = append(files, f)
					}
				}
				for _, p := range sortedKeys(r1.Files) {
					files = append(files, txtar.File{Name: "expected/" + p, Data: r1.Files[p]})
				}
				files = append(files, txtar.File{Name: "report", Data: []byte(mergeReport(r1))})
				c.arch.Files = files
				if err := os.WriteFile(path, txtar.Format(c.arch), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !c.hasExpect {
				t.Fatal("no expected/ files: run go test -run TestMergeReplicasGolden -update and read the result")
			}
			if got, want := filesText(r1.Files), filesText(c.expected); got != want {
				t.Fatalf("merged files:\n%s\nwant:\n%s", got, want)
			}
			if got := mergeReport(r1); got != c.report {
				t.Fatalf("report:\n%s\nwant:\n%s", got, c.report)
			}
		})
	}
}

func filesText(m map[string][]byte) string {
	var b bytes.Buffer
	for _, p := range sortedKeys(m) {
		b.WriteString("-- " + p + " --\n")
		b.Write(m[p])
	}
	return b.String()
}

// TestMergeFileMergesOneFileOrSaysItCannot pins the merge driver's
// function: a memory file merges on its own; a conflicting edit in a
// topic file (its Pending variant belongs in MEMORY.md) and a non-memory
// file both sides changed cannot.
func TestMergeFileMergesOneFileOrSaysItCannot(t *testing.T) {
	topic := func(lines ...string) []byte { return []byte("# Notes\n\n" + strings.Join(lines, "")) }
	tests := []struct {
		name                string
		path                string
		base, ours, theirs  []byte
		wantOK              bool
		wantHas, wantHasnot string
	}{
		{"both add to a topic", "topics/notes.md",
			topic("- [fact-001] A (agent · 2026-11-01)\n"),
			topic("- [fact-001] A (agent · 2026-11-01)\n", "- [fact-bcdfgh] B (agent · 2026-11-02)\n"),
			topic("- [fact-001] A (agent · 2026-11-01)\n", "- [fact-cdfghj] C (agent · 2026-11-03)\n"),
			true, "fact-cdfghj", "<<<<<<<"},
		{"conflicting edit in a topic", "topics/notes.md",
			topic("- [fact-001] A (agent · 2026-11-01)\n"),
			topic("- [fact-001] A one (agent · 2026-11-01 · updated 2026-11-02)\n"),
			topic("- [fact-001] A two (agent · 2026-11-01 · updated 2026-11-03)\n"),
			false, "", ""},
		{"config changed on the same line", ".memctl/config.toml",
			[]byte("[inject]\nbudget = 1\n"), []byte("[inject]\nbudget = 2\n"), []byte("[inject]\nbudget = 3\n"),
			false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MergeFile(tt.path, tt.base, tt.ours, tt.theirs)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v\n%s", ok, tt.wantOK, got)
			}
			if tt.wantHas != "" && !strings.Contains(string(got), tt.wantHas) || tt.wantHasnot != "" && strings.Contains(string(got), tt.wantHasnot) {
				t.Fatalf("merged:\n%s", got)
			}
			back, ok2 := MergeFile(tt.path, tt.base, tt.theirs, tt.ours)
			if ok2 != ok || string(back) != string(got) {
				t.Fatalf("not symmetric:\n%s\n---\n%s", got, back)
			}
		})
	}
}

// TestMergeKeepsNoForgottenTextAgainstADeletion pins what the replica
// simulation found (seed 457): an entry repeating a forgotten text, dropped
// by an earlier merge, must not come back because the other side touched
// it since (a duplicate merged into it changed its metadata).
func TestMergeKeepsNoForgottenTextAgainstADeletion(t *testing.T) {
	doc := func(lines ...string) []byte {
		return []byte("# Core profile\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n" + strings.Join(lines, ""))
	}
	const gone = "- [fact-dfghhq] My passport is X123 (agent · 2026-11-01)\n"
	base := map[string][]byte{MainFile: doc(gone)}
	dropped := map[string][]byte{MainFile: doc(), TombstonesPath: []byte(`{"id":"fact-ggjcsw","date":"2026-11-02","hash":"h","key":"k"}` + "\n")}
	touched := map[string][]byte{MainFile: doc("- [fact-dfghhq] My passport is X123 (agent · 2026-11-01 · refs c1, c2)\n")}
	forgotten := func(tombs []byte, text string) bool {
		return strings.Contains(string(tombs), "fact-ggjcsw") && text == "My passport is X123"
	}
	for _, sides := range [][2]map[string][]byte{{dropped, touched}, {touched, dropped}} {
		res, err := MergeReplicas(MergeInput{Base: base, Forgotten: forgotten,
			Sides: [2]MergeSide{{Files: sides[0], Machine: "a"}, {Files: sides[1], Machine: "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Files[MainFile]), "X123") {
			t.Fatalf("the forgotten text came back:\n%s", res.Files[MainFile])
		}
		if len(res.Dropped) != 1 || len(res.Kept) != 0 {
			t.Fatalf("dropped %v, kept %v", res.Dropped, res.Kept)
		}
	}
}

// TestMergePutsNoForgottenTextInPending: both machines edited fact-001
// differently, and the losing edit's text was forgotten already (an
// earlier copy of this conflict, forgotten under its own id): the edit
// does not wait in Pending again, whichever side merges.
func TestMergePutsNoForgottenTextInPending(t *testing.T) {
	doc := func(lines ...string) []byte {
		return []byte("# Core profile\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n" + strings.Join(lines, ""))
	}
	tombs := []byte(`{"id":"fact-ppqrst","date":"2026-11-03","hash":"h","key":"k"}` + "\n")
	base := map[string][]byte{MainFile: doc("- [fact-001] The VPN gateway is vpn1 (agent · 2026-11-01)\n"), TombstonesPath: tombs}
	a := map[string][]byte{MainFile: doc("- [fact-001] The VPN gateway is vpn2 (agent · 2026-11-01 · updated 2026-11-04)\n"), TombstonesPath: tombs}
	b := map[string][]byte{MainFile: doc("- [fact-001] The VPN gateway is vpn3 (agent · 2026-11-01 · updated 2026-11-05)\n"), TombstonesPath: tombs}
	forgotten := func(tombs []byte, text string) bool {
		return strings.Contains(string(tombs), "fact-ppqrst") && text == "The VPN gateway is vpn2"
	}
	for _, sides := range [][2]map[string][]byte{{a, b}, {b, a}} {
		res, err := MergeReplicas(MergeInput{Base: base, Forgotten: forgotten,
			Sides: [2]MergeSide{{Files: sides[0], Machine: "a"}, {Files: sides[1], Machine: "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		main := string(res.Files[MainFile])
		if strings.Contains(main, "vpn2") {
			t.Fatalf("the forgotten text waits in Pending again:\n%s", main)
		}
		if !strings.Contains(main, "[fact-001] The VPN gateway is vpn3") || len(res.Conflicts) != 0 {
			t.Fatalf("want the newer edit kept and no conflict reported; conflicts %v:\n%s", res.Conflicts, main)
		}
	}
}

// TestMergeDropsATextTheOtherSideForgotUnderAnIDBothForgot: both
// machines forgot fact-001, each in its own version of the text; one then
// added the other's version again (its own tombstone names only its
// version). The merge drops it: the other side's tombstone line is new to
// it, though its id is not (replica soak, seed 2032).
func TestMergeDropsATextTheOtherSideForgotUnderAnIDBothForgot(t *testing.T) {
	doc := func(lines ...string) []byte {
		return []byte("# Core profile\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n" + strings.Join(lines, ""))
	}
	base := map[string][]byte{MainFile: doc("- [fact-001] The VPN gateway is vpn1 (agent · 2026-11-01)\n")}
	lineA := `{"id":"fact-001","date":"2026-11-02","hash":"ha","key":"ka"}` + "\n"
	lineB := `{"id":"fact-001","date":"2026-11-03","hash":"hb","key":"kb"}` + "\n"
	readded := map[string][]byte{MainFile: doc("- [fact-002] The VPN gateway is vpn1 e7 (agent · 2026-11-04)\n"), TombstonesPath: []byte(lineA)}
	other := map[string][]byte{MainFile: doc(), TombstonesPath: []byte(lineB)}
	forgotten := func(tombs []byte, text string) bool {
		return strings.Contains(string(tombs), `"hb"`) && text == "The VPN gateway is vpn1 e7"
	}
	for _, sides := range [][2]map[string][]byte{{readded, other}, {other, readded}} {
		res, err := MergeReplicas(MergeInput{Base: base, Forgotten: forgotten,
			Sides: [2]MergeSide{{Files: sides[0], Machine: "a"}, {Files: sides[1], Machine: "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Files[MainFile]), "vpn1 e7") {
			t.Fatalf("the text the other side forgot came back:\n%s", res.Files[MainFile])
		}
		if len(res.Dropped) != 1 || res.Dropped[0] != "fact-002" {
			t.Fatalf("dropped %v, want [fact-002]", res.Dropped)
		}
	}
}
