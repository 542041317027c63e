package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem/redact"
)

// redactValue replaces what the secret detectors find in every string of
// a decoded JSON value (keys included), in place; it returns the value and
// whether anything was replaced.
func redactValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		out, found := redact.Redact(x)
		return out, len(found) > 0
	case []any:
		changed := false
		for i := range x {
			var c bool
			x[i], c = redactValue(x[i])
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, val := range x {
			nk, found := redact.Redact(k)
			if len(found) > 0 {
				delete(x, k)
				changed = true
			}
			var c bool
			x[nk], c = redactValue(val)
			changed = changed || c
		}
		return x, changed
	}
	return v, false
}

// RedactLine is one line of a transcript with its secrets redacted: a
// JSON line decoded, every string redacted as the text it stands for (a
// secret inside escaped quotes is found), and encoded again when one was
// (else returned as it was); other lines as text.
func RedactLine(line []byte) []byte {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			red, changed := redactValue(v)
			if !changed {
				return line // byte for byte, as the agent wrote it
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(red) == nil {
				return bytes.TrimRight(b.Bytes(), "\n")
			}
		}
	}
	out, _ := redact.Redact(string(line))
	return []byte(out)
}

// copyRedacted copies r to w line by line, each through RedactLine.
func copyRedacted(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := readRecord(br)
		if len(line) > 0 {
			nl := bytes.HasSuffix(line, []byte("\n"))
			out := RedactLine(bytes.TrimRight(line, "\r\n"))
			if nl {
				out = append(out, '\n')
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// FlatJSON is the text a JSON document holds, for reading: every string
// unescaped, each value on a line after its key ("command: mysql -p…");
// ok is false when s is not JSON.
func FlatJSON(s string) (string, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return "", false
	}
	var b strings.Builder
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // the same input, the same prompt
			for _, k := range keys {
				walk(k, x[k])
			}
		case []any:
			for _, val := range x {
				walk(key, val)
			}
		default:
			if key != "" {
				b.WriteString(key + ": ")
			}
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(jsonScalar(x), "\n", " ")))
			b.WriteString("\n")
		}
	}
	walk("", v)
	return strings.TrimSpace(b.String()), true
}

func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return "null"
}
