package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMergeHooks(t *testing.T) {
	specs := []hookSpec{{Event: "SessionStart", Command: "memctl hook claude session-start", Timeout: 10}}
	marker := func(string) string { return "hook claude session-start" }
	for _, tc := range []struct {
		name, in, err string
		added         int
	}{
		{"no file", "", "", 1},
		{"empty object", "{}", "", 1},
		{"already there", `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"memctl hook claude session-start"}]}]}}`, "", 0},
		{"already there, another binary: updated", `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"/opt/bin/memctl --dir /m hook claude session-start"}]}]}}`, "", 1},
		{"not an object", `[1]`, "not a JSON object", 0},
		{"trailing text", `{} x`, "text after", 0},
		{"hooks not an object", `{"hooks":[]}`, `"hooks" is not a JSON object`, 0},
		{"event not a list", `{"hooks":{"SessionStart":{}}}`, `is not a list`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, added, err := mergeHooks([]byte(tc.in), specs, marker)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(added) != tc.added {
				t.Fatalf("added %v, %v", added, err)
			}
			if tc.added == 0 && string(out) != tc.in {
				t.Errorf("changed with nothing to add:\n%s", out)
			}
			if tc.added > 0 && strings.Count(string(out), "hook claude session-start") != 1 {
				t.Errorf("want exactly one memctl hook:\n%s", out)
			}
			if tc.added > 0 {
				again, more, err := mergeHooks(out, specs, marker)
				if err != nil || len(more) != 0 || string(again) != string(out) {
					t.Errorf("not idempotent: %v %v", more, err)
				}
			}
		})
	}
}

func TestMergeAllow(t *testing.T) {
	rules := []string{"mcp__memctl__memory_search", "mcp__memctl__memory_show"}
	for _, tc := range []struct {
		name, in, want, err string
		added               int
	}{
		{"no file", "", `{"permissions":{"allow":["mcp__memctl__memory_search","mcp__memctl__memory_show"]}}`, "", 2},
		{"other rules kept first", `{"model":"opus","permissions":{"deny":["Bash"],"allow":["Bash(go test:*)"]}}`,
			`{"model":"opus","permissions":{"deny":["Bash"],"allow":["Bash(go test:*)","mcp__memctl__memory_search","mcp__memctl__memory_show"]}}`, "", 2},
		{"one there", `{"permissions":{"allow":["mcp__memctl__memory_show"]}}`, `{"permissions":{"allow":["mcp__memctl__memory_show","mcp__memctl__memory_search"]}}`, "", 1},
		{"all there", `{"permissions":{"allow":["mcp__memctl__memory_show","mcp__memctl__memory_search"]}}`, `{"permissions":{"allow":["mcp__memctl__memory_show","mcp__memctl__memory_search"]}}`, "", 0},
		{"permissions not an object", `{"permissions":[]}`, "", `"permissions" is not a JSON object`, 0},
		{"allow not a list", `{"permissions":{"allow":"x"}}`, "", `"allow" is not a list`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, added, err := mergeAllow([]byte(tc.in), rules)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(added) != tc.added {
				t.Fatalf("added %v, %v", added, err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, out); err != nil {
				t.Fatal(err)
			}
			if compact.String() != tc.want {
				t.Errorf("got %s\nwant %s", compact.String(), tc.want)
			}
		})
	}
}

func TestWriteTargetFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"abs.json", real}, {"rel.json", "dotfiles/settings.json"}, {"chain.json", "rel.json"}, {"dangling.json", "dotfiles/new.json"}} {
		if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		"abs.json":      real,
		"rel.json":      real,
		"chain.json":    real,
		"dangling.json": filepath.Join(dir, "dotfiles", "new.json"),
		"plain.json":    filepath.Join(dir, "plain.json"),
	} {
		got, err := writeTarget(filepath.Join(dir, in))
		if err != nil || got != want {
			t.Errorf("writeTarget(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// TestProjectScopeIsTheProjectsPath: the scope of a working directory is
// its git repository's full path, the home directory as "~", so that
// ~/work/app and ~/personal/app are two projects.
func TestProjectScopeIsTheProjectsPath(t *testing.T) {
	home := t.TempDir()
	f, _, _ := testFactory(map[string]string{"HOME": home}, "")
	for _, p := range []string{filepath.Join(home, "work", "My App", "src", "deep"), filepath.Join(home, "personal", "My App"), filepath.Join(home, "plain_dir")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, repo := range []string{filepath.Join(home, "work", "My App"), filepath.Join(home, "personal", "My App")} {
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	for in, want := range map[string]string{
		filepath.Join(home, "work", "My App", "src", "deep"): "project:~/work/My-App",
		filepath.Join(home, "work", "My App"):                "project:~/work/My-App",
		filepath.Join(home, "personal", "My App"):            "project:~/personal/My-App",
		filepath.Join(home, "plain_dir"):                     "project:~/plain_dir",
		outside:                                              "project:" + filepath.ToSlash(outside),
		"":                                                   "",
		"/":                                                  "",
	} {
		if got := projectScope(f, in); got != want {
			t.Errorf("projectScope(%q) = %q, want %q", in, got, want)
		}
	}
}

// A hook on a memory that is not there: exit 0, nothing on stdout, fast.
func TestHookBrokenMemoryFast(t *testing.T) {
	home := t.TempDir()
	for _, sub := range []string{"session-start", "user-prompt-submit", "session-end", "pre-compact"} {
		f, out, errOut := testFactory(map[string]string{"MEMCTL_DIR": filepath.Join(home, "nowhere"), "HOME": home},
			`{"session_id":"s","transcript_path":"/nope.jsonl","cwd":"/tmp","prompt":"hi"}`)
		t0 := time.Now()
		code := Run(context.Background(), f, []string{"hook", "claude", sub})
		if d := time.Since(t0); code != 0 || out.Len() != 0 || d > time.Second {
			t.Errorf("%s: exit %d in %v, stdout %q, stderr %q", sub, code, d, out, errOut)
		}
		if !strings.Contains(errOut.String(), "logged to") {
			t.Errorf("%s: stderr %q", sub, errOut)
		}
	}
	b, err := os.ReadFile(filepath.Join(home, ".local", "state", "memctl", "hook.log"))
	if err != nil || strings.Count(string(b), " error: ") != 4 {
		t.Errorf("log: %q %v", b, err)
	}
}
