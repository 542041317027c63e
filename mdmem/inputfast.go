package mdmem

import "unicode/utf8"

// decodeInput decodes one line of JSON input into c (fresh) as
// decodeStrict does with an inputCandidate. The commonest line, an
// object of plain strings for content, category, source and topic (no
// escapes, each field once), is read by decodePlain, which gives the same
// candidate without encoding/json; any other line goes to decodeStrict.
func decodeInput(line []byte, c *Candidate) error {
	if decodePlain(line, c) {
		return nil
	}
	return decodeStrict(line, &inputCandidate{Candidate: c})
}

// decodePlain fills c from line and reports true when line is valid
// UTF-8 holding one JSON object, with JSON white space only around its
// tokens, whose values are all strings without escapes or control
// characters and whose keys are "content", "category", "source" or
// "topic", each at most once; for such a line encoding/json sets exactly
// these fields to exactly these bytes. It leaves c alone and reports false
// for any other line.
func decodePlain(line []byte, c *Candidate) bool {
	if !utf8.Valid(line) {
		return false
	}
	i := 0
	ws := func() {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r') {
			i++
		}
	}
	str := func() (string, bool) {
		if i >= len(line) || line[i] != '"' {
			return "", false
		}
		start := i + 1
		for j := start; j < len(line); j++ {
			switch b := line[j]; {
			case b == '"':
				i = j + 1
				return string(line[start:j]), true
			case b == '\\' || b < 0x20:
				return "", false
			}
		}
		return "", false
	}
	ws()
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	var v [4]string
	var set [4]bool
	for n := 0; ; n++ {
		ws()
		if n > 0 {
			if i < len(line) && line[i] == '}' {
				break
			}
			if i >= len(line) || line[i] != ',' {
				return false
			}
			i++
			ws()
		}
		key, ok := str()
		if !ok {
			return false
		}
		f := -1
		switch key {
		case "content":
			f = 0
		case "category":
			f = 1
		case "source":
			f = 2
		case "topic":
			f = 3
		}
		if f < 0 || set[f] {
			return false
		}
		ws()
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i++
		ws()
		if v[f], ok = str(); !ok {
			return false
		}
		set[f] = true
	}
	i++ // the '}'
	ws()
	if i != len(line) {
		return false
	}
	c.Content, c.Category, c.Source, c.Topic = v[0], v[1], v[2], v[3]
	return true
}
