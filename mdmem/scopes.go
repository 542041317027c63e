package mdmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// ErrEmptyScope is returned for a scope that is empty or only white space:
// usually a wrapper's unset variable (--scope "$PROJECT"), which must not
// turn a project's entry into a global one.
var ErrEmptyScope = errors.New(`empty scope (an unset variable in --scope "$X"?): give a scope such as project:order-service, or leave the scope out for a global entry`)

// ErrBadScope is returned (wrapped) for a scope memctl cannot store or
// match reliably.
var ErrBadScope = errors.New("malformed scope")

// ScopeAll is the scope list value that makes every scope eligible in
// inject and search; no entry can carry it.
const ScopeAll = "all"

// ProjectHere is the scope "project:." that stands for the git project
// holding the current directory: project:<name of its top directory>.
const ProjectHere = "project:."

// maxScopeBytes caps one scope.
const maxScopeBytes = 128

// SplitScopes reads scopes as every command takes them (add, import,
// inject, search, list): each value may hold several comma-separated
// scopes, white space around each is dropped, an empty one is an error
// (ErrEmptyScope), and so is a malformed one (ErrBadScope, see
// ValidScope). ProjectHere is replaced by the current git project's scope.
func SplitScopes(vals ...string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				return nil, ErrEmptyScope
			}
			if s == ProjectHere {
				p, err := CurrentProjectScope()
				if err != nil {
					return nil, err
				}
				s = p
			}
			if err := ValidScope(s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// ValidScope checks one scope: "kind:name" (project:billing, user:ana) or
// a bare label (code-generation), at most 128 bytes, printable, without
// white space or the characters of the entry grammar (`,` `·` `(` `)` `[`
// `]`), and neither side of a colon empty.
func ValidScope(s string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadScope, s, why) }
	if len(s) > maxScopeBytes {
		return bad(fmt.Sprintf("longer than %d bytes", maxScopeBytes))
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune(",·()[]", r) {
			return bad(fmt.Sprintf("contains %q (scopes look like project:order-service)", r))
		}
	}
	if kind, name, ok := strings.Cut(s, ":"); ok && (kind == "" || name == "") {
		return bad("kind or name empty (scopes look like project:order-service)")
	}
	return nil
}

// CurrentProjectScope is ProjectScopeOf the git repository holding the
// current directory (an error outside one).
func CurrentProjectScope() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, ok := GitRoot(wd)
	if !ok {
		return "", fmt.Errorf("%w: %s stands for the git project of the current directory, and %s is not inside one", ErrBadScope, ProjectHere, wd)
	}
	home, _ := os.UserHomeDir()
	if sc := ProjectScopeOf(root, home); sc != "" {
		return sc, nil
	}
	return "", fmt.Errorf("%w: cannot derive a project scope from %s", ErrBadScope, root)
}

// GitRoot returns the nearest directory from dir up that holds .git.
func GitRoot(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// ProjectScopeOf is the scope of the project dir is in: "project:" and
// the full path of its git repository's top directory (else of dir
// itself), with the home directory written "~" ("project:~/work/app"), so
// that ~/work/app and ~/personal/app are two projects. Characters a scope
// cannot hold (white space, ",·()[]") become "-". "" for the root
// directory or an empty dir.
func ProjectScopeOf(dir, home string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	root := abs
	if r, ok := GitRoot(abs); ok {
		root = r
	}
	if filepath.Dir(root) == root {
		return ""
	}
	name := filepath.ToSlash(root)
	if home != "" {
		if rel, err := filepath.Rel(home, root); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			name = "~/" + filepath.ToSlash(rel)
		}
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune(",·()[]", r) {
			return '-'
		}
		return r
	}, name)
	return "project:" + name
}

// InScope is the isolation rule: an entry without scope (global) is in
// every scope; a scoped entry only when one of scopes names one of its
// scopes (case-insensitively), or scopes holds ScopeAll.
func InScope(entryScopes, scopes []string) bool {
	if len(entryScopes) == 0 {
		return true
	}
	for _, s := range scopes {
		if s == ScopeAll {
			return true
		}
		for _, e := range entryScopes {
			if strings.EqualFold(e, s) {
				return true
			}
		}
	}
	return false
}
