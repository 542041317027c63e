package inject

import (
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/memctl/memctl/templates"
)

// HeaderTemplate is the template of the text before the fence; a memory
// overrides it in .memctl/templates/.
const HeaderTemplate = "inject-header.tmpl"

// LoadHeader renders the memory's header template for the block of day
// now: the header text (lines ending in "\n") and, when the template
// defines "rules", the heading under which core constraints get a
// section of their own ("" otherwise).
func LoadHeader(memDir string, now time.Time) (header, rules string, err error) {
	src, err := templates.Load(memDir, HeaderTemplate)
	if err != nil {
		return "", "", err
	}
	where := templates.OverrideDir + "/" + HeaderTemplate
	bad := func(e error) error {
		return fmt.Errorf("%s: %w (fix the override, or delete it to use the default)", where, e)
	}
	t, err := template.New(HeaderTemplate).Option("missingkey=error").Parse(src)
	if err != nil {
		return "", "", bad(err)
	}
	data := struct{ Today string }{}
	if !now.IsZero() {
		data.Today = now.UTC().Format("2006-01-02")
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", "", bad(err)
	}
	if header, err = headerLines(b.String()); err != nil {
		return "", "", bad(err)
	}
	if r := t.Lookup("rules"); r != nil {
		b.Reset()
		if err := r.Execute(&b, data); err != nil {
			return "", "", bad(err)
		}
		if rules, err = headerLines(b.String()); err != nil {
			return "", "", bad(fmt.Errorf("rules: %w", err))
		}
		if strings.Count(rules, "\n") != 1 || !strings.HasPrefix(rules, "#") {
			return "", "", bad(fmt.Errorf("rules must be one heading line (\"## Rules\"), got %q", strings.TrimSpace(rules)))
		}
	}
	return header, rules, nil
}

// headerLines checks rendered header text: at least one line, every line
// starting with a visible character (so the block's tokens add up line by
// line) and none opening a code fence; it ends with a newline.
func headerLines(s string) (string, error) {
	s = strings.TrimRight(s, " \t\r\n")
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("the header is empty")
	}
	for i, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || strings.TrimLeft(l, " \t") != l {
			return "", fmt.Errorf("line %d is empty or starts with white space; every line must start with a visible character", i+1)
		}
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			return "", fmt.Errorf("line %d starts a code fence", i+1)
		}
	}
	return strings.ReplaceAll(s, "\r", "") + "\n", nil
}
