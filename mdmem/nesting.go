package mdmem

// maxNesting is the deepest block nesting (block quotes and list items on
// one line) memctl hands to goldmark, whose cost grows with the square of
// the depth. Real memory files nest a few levels.
const maxNesting = 32

// flattenDeepNesting returns body unchanged when no line opens more than
// maxNesting containers. Otherwise it returns a copy in which the marker
// that would open container maxNesting+1 is replaced by 'x', so the rest of
// the line parses as text, and the lines where it did so. Offsets are kept,
// so entries and edits still refer to the original bytes.
func flattenDeepNesting(body []byte) ([]byte, []int) {
	var out []byte
	var lines []int
	line := 0
	for off := 0; off < len(body); line++ {
		end := off
		for end < len(body) && body[end] != '\n' {
			end++
		}
		if at := deepMarker(body[off:end]); at >= 0 {
			if out == nil {
				out = append([]byte(nil), body...)
			}
			out[off+at] = 'x'
			lines = append(lines, line)
		}
		off = end + 1
	}
	if out == nil {
		return body, nil
	}
	return out, lines
}

// deepMarker returns the index of the container marker that exceeds
// maxNesting on this line, or -1.
func deepMarker(l []byte) int {
	depth := 0
	for i := 0; i < len(l); {
		switch c := l[i]; {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '>':
		case (c == '-' || c == '*' || c == '+') && i+1 < len(l) && (l[i+1] == ' ' || l[i+1] == '\t'):
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j < len(l) && (l[j] == '.' || l[j] == ')') && j+1 < len(l) && (l[j+1] == ' ' || l[j+1] == '\t') {
				depth++
				if depth > maxNesting {
					return i
				}
				i = j + 1
				continue
			}
			return -1
		default:
			return -1
		}
		depth++
		if depth > maxNesting {
			return i
		}
		i++
	}
	return -1
}
