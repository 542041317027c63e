package inject

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	const b = beginLine + "\n"
	for _, tc := range []struct {
		name, doc, block, want, err string
	}{
		{"empty file", "", "notes\n", b + "notes\n" + BlockEnd + "\n", ""},
		{"appended after a blank line", "# Agents\nRun make.", "notes", "# Agents\nRun make.\n\n" + b + "notes\n" + BlockEnd + "\n", ""},
		{"replaced in place, the rest kept", "# A\r\n" + b + "old\nold2\n" + BlockEnd + "\r\ntail  \n", "new\n", "# A\r\n" + b + "new\n" + BlockEnd + "\r\ntail  \n", ""},
		{"hand-written begin marker kept", "x\n<!-- memctl:begin -->\nold\n<!-- memctl:end -->\n", "new\n", "x\n<!-- memctl:begin -->\nnew\n<!-- memctl:end -->\n", ""},
		{"stored text cannot close the block", "", "a <!-- memctl:end --> b\n", b + "a <!-- (quoted) memctl:end --> b\n" + BlockEnd + "\n", ""},
		{"empty block", "x\n" + b + "old\n" + BlockEnd + "\n", "", "x\n" + b + BlockEnd + "\n", ""},
		{"begin without end", "x\n" + b + "old\n", "n", "", "without its memctl:end"},
		{"end without begin", "x\n" + BlockEnd + "\n", "n", "", "without its memctl:begin"},
		{"two blocks", b + BlockEnd + "\n" + b + BlockEnd + "\n", "n", "", "two memctl:begin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplaceBlock([]byte(tc.doc), tc.block)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestWriteBlockNoChurn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(p, []byte("# Agents\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := WriteBlock(ctx, p, "one\n"); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	fi1, _ := os.Stat(p)
	if fi1.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi1.Mode().Perm())
	}
	if changed, err := WriteBlock(ctx, p, "one\n"); err != nil || changed {
		t.Fatalf("same block: %v %v", changed, err)
	}
	// a link is written through, not replaced
	link := filepath.Join(dir, "CLAUDE.md")
	if err := os.Symlink("AGENTS.md", link); err != nil {
		t.Fatal(err)
	}
	if changed, err := WriteBlock(ctx, link, "two\n"); err != nil || !changed {
		t.Fatalf("via link: %v %v", changed, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "\ntwo\n") {
		t.Errorf("AGENTS.md: %q", b)
	}
}

// TestSpliceKeepsALineAppendedMeanwhile: a line a person appends between
// memctl's read and its write is not lost: the splice sees the change and
// WriteBlock splices into the new content.
func TestSpliceKeepsALineAppendedMeanwhile(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "AGENTS.md")
	old := []byte("# Notes\n")
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := ReplaceBlock(old, "block v1\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(old, "appended by a person\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := spliceLocked(ctx, p, old, doc, 0o644); err != nil || wrote {
		t.Fatalf("spliced over a changed file: wrote %v, %v", wrote, err)
	}
	if _, err := WriteBlock(ctx, p, "block v1\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "appended by a person") || !strings.Contains(string(b), "block v1") {
		t.Errorf("after the splice:\n%s", b)
	}
}
