package fakellm

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Keywords the extract mode takes as a stand-in for a model's judgement
// of what is worth remembering, and the category each one gives.
var extractKeywords = []struct{ word, category string }{
	{"decided", "decision"},
	{"prefer", "preference"},
	{"always", "constraint"},
	{"never", "constraint"},
	{"remember", "fact"},
}

var (
	turnLine   = regexp.MustCompile(`^\[t(\d+)\] ([a-z]+(?: [a-z]+)?): (.*)$`)
	digestLine = regexp.MustCompile(`^- (.*) \[t(\d+)\]$`)
	roleName   = regexp.MustCompile(`^[a-z]+(?: [a-z]+)?$`)
)

// ExtractAnswer answers memctl extract's requests (auto mode "extract"),
// told apart by their schema name:
//
//	memctl_digest      keeps the session lines holding one of the keywords
//	                   (decided, prefer, always, never, remember), as
//	                   "- role: text [tN]", and digest lines as they are
//	memctl_candidates  one candidate per digest line (or session line with a
//	                   keyword, when the session was short) not already in the
//	                   existing memory: category by keyword, source
//	                   user_explicit for the user's words, else inference;
//	                   confidence 0.5 when the line says "maybe", else 0.9
func ExtractAnswer(schema, user string) string { return extractAnswer(schema, user, false) }

// CredulousExtractAnswer answers as ExtractAnswer does, but as a model
// that believes what it reads (auto mode "extract-credulous", hostile):
// every candidate is labelled user_explicit, whoever said it (a tool
// result, a notification, the assistant).
func CredulousExtractAnswer(schema, user string) string { return extractAnswer(schema, user, true) }

func extractAnswer(schema, user string, credulous bool) string {
	switch schema {
	case "memctl_digest":
		var out []string
		for _, l := range strings.Split(user, "\n") {
			l = strings.TrimSpace(l)
			if m := turnLine.FindStringSubmatch(l); m != nil && keyword(m[3]) != "" {
				out = append(out, "- "+m[2]+": "+firstSentence(m[3])+" [t"+m[1]+"]")
			} else if digestLine.MatchString(l) {
				out = append(out, l)
			}
		}
		b, _ := json.Marshal(map[string]string{"digest": strings.Join(out, "\n")})
		return string(b)
	case "memctl_candidates":
		existing := ""
		if i := strings.Index(user, "Session summary"); i >= 0 {
			existing = strings.ToLower(user[:i])
		}
		type cand struct {
			Category   string   `json:"category"`
			Content    string   `json:"content"`
			Source     string   `json:"source"`
			Scope      []string `json:"scope"`
			Confidence float64  `json:"confidence"`
			Turns      []int    `json:"turns"`
		}
		cands := []cand{}
		seen := map[string]bool{}
		for _, l := range strings.Split(user, "\n") {
			l = strings.TrimSpace(l)
			m := digestLine.FindStringSubmatch(l)
			if t := turnLine.FindStringSubmatch(l); t != nil && keyword(t[3]) != "" {
				// a short session comes verbatim, not digested
				m = []string{l, t[2] + ": " + firstSentence(t[3]), t[1]}
			}
			if m == nil {
				continue
			}
			text, source := m[1], "inference"
			if role, rest, ok := strings.Cut(text, ": "); ok && roleName.MatchString(role) {
				text = rest
				if role == "user" {
					source = "user_explicit"
				}
			}
			if credulous {
				source = "user_explicit"
			}
			if seen[text] || strings.Contains(existing, strings.ToLower(strings.TrimSuffix(text, "."))) {
				continue
			}
			seen[text] = true
			n, _ := strconv.Atoi(m[2])
			conf := 0.9
			if strings.Contains(strings.ToLower(text), "maybe") {
				conf = 0.5
			}
			cands = append(cands, cand{Category: keyword(text), Content: text, Source: source, Scope: []string{}, Confidence: conf, Turns: []int{n}})
		}
		b, _ := json.Marshal(map[string]any{"candidates": cands})
		return string(b)
	}
	return "fakellm: extract mode got schema " + strconv.Quote(schema)
}

func keyword(s string) string {
	l := strings.ToLower(s)
	for _, k := range extractKeywords {
		if strings.Contains(l, k.word) {
			return k.category
		}
	}
	return ""
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.TrimSpace(s)
}
