package mdmem

import (
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem/redact"
)

// SecretLine is a line of a memory file that holds what the secret
// detectors find: where, and the kind, never the secret.
type SecretLine struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Kind string `json:"kind"`
}

// NewSecretLines returns the lines of cur (the file rel as a person left
// it) that hold what the secret detectors find and that old (the file as
// committed) does not hold as they are: one finding per line and kind.
// A secret committed before, and a line only moved, are not new.
func NewSecretLines(rel string, old, cur []byte) []SecretLine {
	had := map[string]bool{}
	for _, line := range strings.Split(string(old), "\n") {
		had[line] = true
	}
	var out []SecretLine
	for i, line := range strings.Split(string(cur), "\n") {
		if had[line] {
			continue
		}
		for _, kind := range SecretKinds(line) {
			out = append(out, SecretLine{File: rel, Line: i + 1, Kind: kind})
		}
	}
	return out
}

// HandEditSecretError refuses to commit a hand edit that writes a secret
// into the memory files: git history would keep it. Nothing is committed,
// the edits stay in the files, uncommitted, for the person to fix.
type HandEditSecretError struct {
	Lines []SecretLine // where, and the kind; never the secret
}

// Error names every line and kind.
func (e *HandEditSecretError) Error() string {
	var at []string
	for _, l := range e.Lines {
		at = append(at, fmt.Sprintf("%s:%d (%s)", l.File, l.Line, l.Kind))
	}
	return fmt.Sprintf("your uncommitted edit of the memory files holds a secret at %s; memctl committed none of your edits and wrote nothing (git history would keep the secret)",
		strings.Join(at, ", "))
}

// Hint says how to go on.
func (e *HandEditSecretError) Hint() string {
	kind, file := "<kind>", "<file>"
	if len(e.Lines) > 0 {
		kind, file = e.Lines[0].Kind, e.Lines[0].File
	}
	return fmt.Sprintf("edit the secret out of that line (or write [REDACTED:%s] in its place) and run the command again; if it is not a secret, commit the file yourself first (git commit %s)", kind, file)
}

// SecretKinds names the kinds of secret the detectors find in s, each
// once, in order; nil when there are none.
func SecretKinds(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range redact.Scan(s) {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, f.Kind)
		}
	}
	return out
}

// RedactText is s with every secret the detectors find replaced by
// [REDACTED:<kind>], for a message that repeats what a person typed.
func RedactText(s string) string {
	out, _ := redact.Redact(s)
	return out
}
