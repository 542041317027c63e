package consolidate

import (
	"regexp"
)

// SecretDetector finds secrets in text memctl is about to write. The
// governance work plugs in full detectors; SimpleSecrets catches the obvious
// ones.
type SecretDetector interface {
	// Find returns a short description of each secret found (never the
	// secret itself), or nil.
	Find(text string) []string
}

// SimpleSecrets detects API-key-like tokens and PEM private keys.
type SimpleSecrets struct{}

var secretPatterns = []struct {
	what string
	re   *regexp.Regexp
}{
	{"OpenAI-style API key (sk-…)", regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`)},
	{"AWS access key id (AKIA…)", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"GitHub token (ghp_…)", regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}`)},
	{"Slack token (xox…)", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"Google API key (AIza…)", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`)},
	{"PEM private key", regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
}

// Find implements SecretDetector.
func (SimpleSecrets) Find(text string) []string {
	var out []string
	for _, p := range secretPatterns {
		if p.re.MatchString(text) {
			out = append(out, p.what)
		}
	}
	return out
}
