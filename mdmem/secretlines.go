package mdmem

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// SecretLines scans the memory files (paths relative to dir, as a hand
// edit lists them) for secrets, one finding per line and kind. A file
// gone since is skipped.
func SecretLines(dir string, files []string) ([]SecretLine, error) {
	var out []SecretLine
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			seen := map[string]bool{}
			for _, f := range redact.Scan(line) {
				if !seen[f.Kind] {
					seen[f.Kind] = true
					out = append(out, SecretLine{File: rel, Line: i + 1, Kind: f.Kind})
				}
			}
		}
	}
	return out, nil
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
