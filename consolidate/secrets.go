package consolidate

import (
	"github.com/memctl/memctl/mdmem/redact"
)

// SecretDetector finds secrets in text memctl is about to write.
type SecretDetector interface {
	// Find returns a short description of each secret found (never the
	// secret itself), or nil.
	Find(text string) []string
}

// Secrets is the SecretDetector of package redact: keys and tokens of
// cloud and SaaS providers, private keys, JWTs, credentials in URLs and
// connection strings, passwords, Basic/Bearer headers, payment cards,
// IBANs and national ids, in normalised text.
type Secrets struct{}

// Find implements SecretDetector: the kinds found, each once.
func (Secrets) Find(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range redact.Scan(text) {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, f.Kind)
		}
	}
	return out
}
