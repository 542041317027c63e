package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"
)

// attrState is the resolved state of one attribute.
type attrState struct {
	set, unset bool
	value      string // for "attr=value"
}

func (a attrState) specified() bool { return a.set || a.unset || a.value != "" }

// attrResolver evaluates .gitattributes the way git does for the few
// attributes that change what gets stored: text, eol, crlf, filter, ident,
// working-tree-encoding. Patterns come from core.attributesFile, the
// .gitattributes files along the path (read from the worktree) and
// $GIT_DIR/info/attributes, in increasing priority.
type attrResolver struct {
	r      *Repo
	files  map[string][]gitattributes.MatchAttribute // dir -> patterns of its .gitattributes
	macros map[string][]gitattributes.Attribute      // [attr] macros of the files read
}

func newAttrResolver(r *Repo) *attrResolver {
	return &attrResolver{r: r, files: map[string][]gitattributes.MatchAttribute{}, macros: map[string][]gitattributes.Attribute{}}
}

func (a *attrResolver) load(key, path string, domain []string, macros bool) []gitattributes.MatchAttribute {
	if m, ok := a.files[key]; ok {
		return m
	}
	var out []gitattributes.MatchAttribute
	if b, err := os.ReadFile(path); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			m, err := gitattributes.ParseAttributesLine(sc.Text(), domain, macros)
			if err == nil && m.Name != "" && m.Pattern == nil && macros {
				// "[attr]name ...": set where name is set (a filter
				// behind a macro is still a filter).
				a.macros[m.Name] = m.Attributes
				continue
			}
			if err != nil || m.Name == "" || m.Pattern == nil {
				continue // git warns and ignores bad lines
			}
			out = append(out, m)
		}
	}
	a.files[key] = out
	return out
}

func (a *attrResolver) stack(treePath string) []gitattributes.MatchAttribute {
	var st []gitattributes.MatchAttribute
	gf := a.r.cfg.get("core", "", "attributesfile")
	if gf == "" {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			gf = filepath.Join(x, "git", "attributes")
		} else if h, err := os.UserHomeDir(); err == nil {
			gf = filepath.Join(h, ".config", "git", "attributes")
		}
	} else if strings.HasPrefix(gf, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			gf = filepath.Join(h, gf[2:])
		}
	}
	if gf != "" {
		st = append(st, a.load("global:"+gf, gf, nil, true)...)
	}
	parts := strings.Split(treePath, "/")
	for i := 0; i < len(parts); i++ {
		dom := parts[:i]
		dir := filepath.Join(append([]string{a.r.root}, dom...)...)
		st = append(st, a.load("dir:"+strings.Join(dom, "/"), filepath.Join(dir, ".gitattributes"), append([]string(nil), dom...), i == 0)...)
	}
	info := filepath.Join(a.r.gitDir, "info", "attributes")
	st = append(st, a.load("info", info, nil, true)...)
	return st
}

// attrs resolves the named attributes for a tree path.
func (a *attrResolver) attrs(treePath string, names ...string) map[string]attrState {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	res := map[string]attrState{}
	assigned := map[string]bool{}
	parts := strings.Split(treePath, "/")
	st := a.stack(treePath)
	for i := len(st) - 1; i >= 0; i-- {
		m := st[i]
		if !m.Pattern.Match(parts) {
			continue
		}
		a.assign(m.Attributes, want, assigned, res, 0)
	}
	return res
}

// assign resolves one line's attributes, the last first (later ones win),
// into res: each wanted name not assigned yet, macros expanded where set.
func (a *attrResolver) assign(ats []gitattributes.Attribute, want, assigned map[string]bool, res map[string]attrState, depth int) {
	for k := len(ats) - 1; k >= 0; k-- {
		at := ats[k]
		name := at.Name()
		if name == "binary" && at.IsSet() {
			// built-in macro: binary = -diff -merge -text
			if want["text"] && !assigned["text"] {
				assigned["text"] = true
				res["text"] = attrState{unset: true}
			}
			continue
		}
		if def, ok := a.macros[name]; ok && at.IsSet() && depth < 8 {
			a.assign(def, want, assigned, res, depth+1)
		}
		if !want[name] || assigned[name] {
			continue
		}
		assigned[name] = true
		switch {
		case at.IsValueSet():
			res[name] = attrState{value: at.Value()}
		case at.IsSet():
			res[name] = attrState{set: true}
		case at.IsUnset():
			res[name] = attrState{unset: true}
		default: // "!attr": explicitly unspecified
			res[name] = attrState{}
		}
	}
}

// eolMode is how content is normalised on the way into the repository.
type eolMode int

const (
	eolNone eolMode = iota // store as is
	eolText                // always CRLF -> LF
	eolAuto                // CRLF -> LF if the content looks like text and HEAD had no CRLF
)

// conversion decides the checkin conversion for a tree path, and refuses
// attributes that would make our blob differ from what git stores.
func (a *attrResolver) conversion(treePath string) (eolMode, error) {
	at := a.attrs(treePath, "text", "eol", "crlf", "filter", "ident", "working-tree-encoding")
	if f := at["filter"]; f.value != "" || f.set {
		return 0, fmt.Errorf("git: %s has a filter attribute (filter=%s, e.g. Git LFS) in .gitattributes; memctl cannot apply clean filters: %w",
			treePath, f.value, ErrUnsupported)
	}
	if at["ident"].set {
		return 0, fmt.Errorf("git: %s has the ident attribute in .gitattributes: %w", treePath, ErrUnsupported)
	}
	if w := at["working-tree-encoding"]; w.value != "" {
		return 0, fmt.Errorf("git: %s has working-tree-encoding=%s in .gitattributes: %w", treePath, w.value, ErrUnsupported)
	}
	text := at["text"]
	if !text.specified() {
		// legacy crlf attribute
		switch c := at["crlf"]; {
		case c.set:
			text = attrState{set: true}
		case c.unset:
			text = attrState{unset: true}
		case c.value == "input":
			text = attrState{set: true}
		}
	}
	switch {
	case text.unset:
		return eolNone, nil
	case text.value == "auto":
		return eolAuto, nil
	case text.set:
		return eolText, nil
	case text.value != "":
		return eolText, nil // unknown values behave like "text"
	}
	if e := at["eol"]; e.value == "lf" || e.value == "crlf" {
		return eolText, nil
	}
	switch a.r.cfg.autoCRLF() {
	case "true", "input":
		return eolAuto, nil
	}
	return eolNone, nil
}

// isBinaryForGit mirrors convert.c's convert_is_binary on gathered stats.
func isBinaryForGit(b []byte) bool {
	var printable, nonprintable, lonecr int
	n := len(b)
	if n > 0 && b[n-1] == 0x1a { // trailing ^Z is ignored
		n--
	}
	for i := 0; i < n; i++ {
		c := b[i]
		switch {
		case c == '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				continue
			}
			lonecr++
		case c == '\n':
		case c == 127:
			nonprintable++
		case c < 32:
			switch c {
			case '\b', '\t', 033, 014:
				printable++
			case 0:
				return true
			default:
				nonprintable++
			}
		default:
			printable++
		}
	}
	return lonecr > 0 || (printable>>7) < nonprintable
}

// normalize applies the checkin conversion. headCRLF reports whether the
// currently committed version contains CRLF (git then leaves auto files
// alone to avoid whole-file churn).
func normalize(mode eolMode, data []byte, headCRLF func() bool) []byte {
	if mode == eolNone || !bytes.Contains(data, []byte("\r\n")) {
		return data
	}
	if mode == eolAuto && (isBinaryForGit(data) || headCRLF()) {
		return data
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}
