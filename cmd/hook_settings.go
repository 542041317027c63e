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
// already; such a hook with other command words (another binary or memory
// directory) gets the new command. Every other member keeps its place and
// value. It returns the new bytes and the events added or updated.
func mergeHooks(settings []byte, hooks []hookSpec, marker func(event string) string) ([]byte, []string, error) {
	top, err := decodeSettings(settings)
	if err != nil {
		return nil, nil, err
	}
	hi := fieldIndex(top, "hooks")
	var events []jsonField
	if hi >= 0 {
		if events, err = decodeObject(top[hi].Value); err != nil {
			return nil, nil, fmt.Errorf(`"hooks" is not a JSON object: %w`, err)
		}
	}
	var changed []string
	for _, h := range hooks {
		ei := fieldIndex(events, h.Event)
		var groups []json.RawMessage
		if ei >= 0 {
			if err := json.Unmarshal(events[ei].Value, &groups); err != nil {
				return nil, nil, fmt.Errorf(`"hooks"."%s" is not a list: %w`, h.Event, err)
			}
		}
		found, updated, err := setCommand(groups, marker(h.Event), h.Command)
		if err != nil {
			return nil, nil, fmt.Errorf(`"hooks"."%s": %w`, h.Event, err)
		}
		if found && !updated {
			continue
		}
		if !found {
			group, _ := json.Marshal(map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": h.Command, "timeout": h.Timeout}}})
			groups = append(groups, group)
		}
		list, err := encodeList(groups)
		if err != nil {
			return nil, nil, err
		}
		if ei >= 0 {
			events[ei].Value = list
		} else {
			events = append(events, jsonField{h.Event, list})
		}
		changed = append(changed, h.Event)
	}
	if len(changed) == 0 {
		return settings, nil, nil
	}
	hooksObj, err := encodeObject(events, 1)
	if err != nil {
		return nil, nil, err
	}
	top = setField(top, "hooks", hooksObj)
	out, err := encodeObject(top, 0)
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), changed, nil
}

// mergeAllow adds each rule missing from permissions.allow of settings,
// keeping every other member in its place. It returns the new bytes and
// the rules added.
func mergeAllow(settings []byte, rules []string) ([]byte, []string, error) {
	top, err := decodeSettings(settings)
	if err != nil {
		return nil, nil, err
	}
	var perms []jsonField
	if pi := fieldIndex(top, "permissions"); pi >= 0 {
		if perms, err = decodeObject(top[pi].Value); err != nil {
			return nil, nil, fmt.Errorf(`"permissions" is not a JSON object: %w`, err)
		}
	}
	var allow []json.RawMessage
	if ai := fieldIndex(perms, "allow"); ai >= 0 {
		if err := json.Unmarshal(perms[ai].Value, &allow); err != nil {
			return nil, nil, fmt.Errorf(`"permissions"."allow" is not a list: %w`, err)
		}
	}
	have := map[string]bool{}
	for _, a := range allow {
		var r string
		if json.Unmarshal(a, &r) == nil {
			have[r] = true
		}
	}
	var added []string
	for _, r := range rules {
		if !have[r] {
			v, _ := json.Marshal(r)
			allow = append(allow, v)
			added = append(added, r)
		}
	}
	if len(added) == 0 {
		return settings, nil, nil
	}
	list, err := encodeList(allow)
	if err != nil {
		return nil, nil, err
	}
	perms = setField(perms, "allow", list)
	permsObj, err := encodeObject(perms, 1)
	if err != nil {
		return nil, nil, err
	}
	out, err := encodeObject(setField(top, "permissions", permsObj), 0)
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), added, nil
}

// decodeSettings reads a settings file's top-level object; empty bytes
// are an empty object.
func decodeSettings(settings []byte) ([]jsonField, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return nil, nil
	}
	top, err := decodeObject(settings)
	if err != nil {
		return nil, fmt.Errorf("settings are not a JSON object: %w", err)
	}
	return top, nil
}

// fieldIndex is the index of the member key, -1 when there is none.
func fieldIndex(fields []jsonField, key string) int {
	for i, f := range fields {
		if f.Key == key {
			return i
		}
	}
	return -1
}

// setField sets the member key to value, in its place or at the end.
func setField(fields []jsonField, key string, value json.RawMessage) []jsonField {
	if i := fieldIndex(fields, key); i >= 0 {
		fields[i].Value = value
		return fields
	}
	return append(fields, jsonField{key, value})
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

// setCommand looks for a hook in groups whose command contains marker:
// found says whether there is one; when its command is not command, it is
// replaced in place (updated).
func setCommand(groups []json.RawMessage, marker, command string) (found, updated bool, err error) {
	for gi, g := range groups {
		grp, err := decodeObject(g)
		if err != nil {
			continue
		}
		hi := fieldIndex(grp, "hooks")
		if hi < 0 {
			continue
		}
		var hooks []json.RawMessage
		if json.Unmarshal(grp[hi].Value, &hooks) != nil {
			continue
		}
		for i, h := range hooks {
			hk, err := decodeObject(h)
			if err != nil {
				continue
			}
			ci := fieldIndex(hk, "command")
			var cmd string
			if ci < 0 || json.Unmarshal(hk[ci].Value, &cmd) != nil || !strings.Contains(cmd, marker) {
				continue
			}
			if cmd == command {
				return true, false, nil
			}
			hk[ci].Value, _ = json.Marshal(command)
			if hooks[i], err = encodeObject(hk, 0); err != nil {
				return true, false, err
			}
			list, err := encodeList(hooks)
			if err != nil {
				return true, false, err
			}
			grp[hi].Value = list
			if groups[gi], err = encodeObject(grp, 0); err != nil {
				return true, false, err
			}
			return true, true, nil
		}
	}
	return false, false, nil
}
