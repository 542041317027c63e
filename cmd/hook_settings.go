package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// jsonField is one member of a JSON object, its value kept as raw bytes.
type jsonField struct {
	Key   string
	Value json.RawMessage
}

// decodeObject reads a JSON object keeping its members in order.
func decodeObject(data []byte) ([]jsonField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []jsonField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, jsonField{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the JSON object")
	}
	return out, nil
}

// encodeObject writes members in order, indented by two spaces at the
// given depth, the layout Claude Code writes: untouched members come out
// byte-identical when the file had that layout.
func encodeObject(fields []jsonField, depth int) ([]byte, error) {
	if len(fields) == 0 {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	pad := strings.Repeat("  ", depth)
	b.WriteString("{\n")
	for i, f := range fields {
		k, _ := json.Marshal(f.Key)
		b.WriteString(pad + "  ")
		b.Write(k)
		b.WriteString(": ")
		if err := json.Indent(&b, f.Value, pad+"  ", "  "); err != nil {
			return nil, err
		}
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(pad + "}")
	return b.Bytes(), nil
}

// hookSpec is one hook memctl installs.
type hookSpec struct {
	Event   string // Claude Code's event name
	Command string
	Timeout int // seconds
}

// mergeHooks adds each hook to settings (a Claude Code settings.json, or
// empty for none) unless a hook running the same memctl command is there
// already. Every other member keeps its place and value. It returns the
// new bytes and the events added.
func mergeHooks(settings []byte, hooks []hookSpec, marker func(event string) string) ([]byte, []string, error) {
	var top []jsonField
	if len(bytes.TrimSpace(settings)) > 0 {
		var err error
		if top, err = decodeObject(settings); err != nil {
			return nil, nil, fmt.Errorf("settings are not a JSON object: %w", err)
		}
	}
	hi := -1
	for i, f := range top {
		if f.Key == "hooks" {
			hi = i
		}
	}
	var events []jsonField
	if hi >= 0 {
		var err error
		if events, err = decodeObject(top[hi].Value); err != nil {
			return nil, nil, fmt.Errorf(`"hooks" is not a JSON object: %w`, err)
		}
	}
	var added []string
	for _, h := range hooks {
		ei := -1
		for i, e := range events {
			if e.Key == h.Event {
				ei = i
			}
		}
		var groups []json.RawMessage
		if ei >= 0 {
			if err := json.Unmarshal(events[ei].Value, &groups); err != nil {
				return nil, nil, fmt.Errorf(`"hooks"."%s" is not a list: %w`, h.Event, err)
			}
		}
		if hasCommand(groups, marker(h.Event)) {
			continue
		}
		group, _ := json.Marshal(map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": h.Command, "timeout": h.Timeout}}})
		groups = append(groups, group)
		list, err := encodeList(groups)
		if err != nil {
			return nil, nil, err
		}
		if ei >= 0 {
			events[ei].Value = list
		} else {
			events = append(events, jsonField{h.Event, list})
		}
		added = append(added, h.Event)
	}
	if len(added) == 0 {
		return settings, nil, nil
	}
	hooksObj, err := encodeObject(events, 1)
	if err != nil {
		return nil, nil, err
	}
	if hi >= 0 {
		top[hi].Value = hooksObj
	} else {
		top = append(top, jsonField{"hooks", hooksObj})
	}
	out, err := encodeObject(top, 0)
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), added, nil
}

// encodeList joins raw values into a JSON array.
func encodeList(items []json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := json.Compact(&b, it); err != nil {
			return nil, err
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// hasCommand reports whether a hook group runs a command containing marker.
func hasCommand(groups []json.RawMessage, marker string) bool {
	for _, g := range groups {
		var grp struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(g, &grp) != nil {
			continue
		}
		for _, h := range grp.Hooks {
			if strings.Contains(h.Command, marker) {
				return true
			}
		}
	}
	return false
}
