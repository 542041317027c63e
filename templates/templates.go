// Package templates holds memctl's embedded templates: the MEMORY.md and
// config.toml written by init, commit messages and LLM prompts. A memory
// directory may override any of them with a file of the same name in
// .memctl/templates/.
package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed *.md *.toml *.tmpl
var files embed.FS

// OverrideDir is the memory-relative directory of template overrides.
const OverrideDir = ".memctl/templates"

// Embedded returns the embedded template name; it panics on an unknown name
// (a programming error, caught by tests).
func Embedded(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("templates: no embedded template %q", name))
	}
	return string(b)
}

// Load returns the override in memDir/.memctl/templates/name if there is
// one, else the embedded template.
func Load(memDir, name string) (string, error) {
	if memDir != "" {
		p := filepath.Join(memDir, filepath.FromSlash(OverrideDir), name)
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			return string(b), err
		case err == nil:
			return "", fmt.Errorf("template override %s is not a regular file", p)
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
	}
	b, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("no template %q", name)
	}
	return string(b), nil
}
