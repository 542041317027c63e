package redact

import (
	"regexp"
	"strings"
	"sync"
)

// rule is one detector: a regular expression run only when the text
// holds one of its keywords (or enough digits), and a check of each match
// that keeps look-alikes out.
type rule struct {
	kind     string
	keywords []string // lower case; nil: run on texts with a long enough run of digits
	// minDigits is the number of digits a rule without keywords needs in
	// one group run: digits separated by at most one space, '-' or line
	// break (see digitRun).
	minDigits int
	pattern   string
	group     int  // the submatch that is the secret; 0 for the whole match
	join      bool // also run over the text with wrapped lines joined
	pii       bool // email or phone: only when the PII policy asks
	// minRun and minHex are the shape every match needs: a run of at
	// least minRun token bytes (letters, digits, "_-+/=."), of at least
	// minHex hex digits. A text without one is not searched (inject
	// scans every entry it renders: most hold neither).
	minRun, minHex int
	// hint, when set, is a cheap test the text (s, and lower, its
	// lower-case copy) must pass before the expression runs.
	hint func(s, lower string) bool
	// ok vets a match: m holds the submatches, lower the lower-cased
	// text, at the match's [start, end) in it.
	ok func(m []string, lower string, start, end int) bool

	once sync.Once
	re   *regexp.Regexp
}

func (r *rule) regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.pattern) })
	return r.re
}

// near reports whether one of words occurs in lower within window bytes
// before start or after end.
func near(lower string, start, end, window int, words ...string) bool {
	a, b := max(0, start-window), min(len(lower), end+window)
	ctx := lower[a:start] + " " + lower[end:b]
	for _, w := range words {
		if strings.Contains(ctx, w) {
			return true
		}
	}
	return false
}

// hasAt: credentials in a URL stand before an "@".
func hasAt(s, _ string) bool { return strings.IndexByte(s, '@') >= 0 }

// dashP: a password on a MySQL command line follows "-p".
func dashP(s, _ string) bool { return strings.Contains(s, "-p") }

// assigned returns a hint that passes a text where one of words (lower
// case) is followed, after the rest of its identifier and an optional
// quote and spaces, by ":" or "=": where an assignment's expression can
// match ("auth_token: …", "api_key=…", "password:").
func assigned(words ...string) func(s, lower string) bool {
	return func(_, lower string) bool {
		for _, w := range words {
			for i := strings.Index(lower, w); i >= 0; {
				j := i + len(w)
				for j < len(lower) && (lower[j] >= 'a' && lower[j] <= 'z' || lower[j] >= '0' && lower[j] <= '9' || lower[j] == '_' || lower[j] == '-') {
					j++
				}
				if j < len(lower) && (lower[j] == '"' || lower[j] == '\'') {
					j++
				}
				for j < len(lower) && (lower[j] == ' ' || lower[j] == '\t' || lower[j] == '\n' || lower[j] == '\r') {
					j++
				}
				if j < len(lower) && (lower[j] == ':' || lower[j] == '=') {
					return true
				}
				k := strings.Index(lower[i+1:], w)
				if k < 0 {
					break
				}
				i += 1 + k
			}
		}
		return false
	}
}

// tok builds a rule for a provider token with a fixed prefix: the match
// must look generated (entropy, more than one character class).
func tok(kind, pattern string, minEntropy float64, keywords ...string) *rule {
	return &rule{kind: kind, keywords: keywords, pattern: pattern, group: 1, join: true, minRun: 16,
		ok: func(m []string, _ string, _, _ int) bool { return machineSecret(m[1], 16, minEntropy) }}
}

// b and e bracket a token: start of text or a byte that cannot be part of
// one, and the same after.
const (
	b = `(?:^|[^A-Za-z0-9_\-])`
	e = `(?:[^A-Za-z0-9_\-]|$)`
)

var cardContext = []string{"card", "visa", "mastercard", "amex", "credit", "debit", "cc ", "cc:", "cc#", "payment", "pan ", "pan:", "cvv", "cvc", "expir", "exp "}

var rules = []*rule{
	{kind: "private-key", keywords: []string{"private key"},
		pattern: `-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)`},
	{kind: "private-key", keywords: []string{"putty-user-key-file"}, pattern: `PuTTY-User-Key-File-\d+:(?s:.*?)(?:Private-MAC: *[0-9a-fA-F]+|\z)`},
	{kind: "private-key", keywords: []string{"age-secret-key-1"}, pattern: `AGE-SECRET-KEY-1[0-9A-Z]{58}`, join: true},
	{kind: "aws-access-key", keywords: []string{"akia", "asia", "abia", "acca", "a3t"}, join: true,
		pattern: b + `((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})` + e, group: 1,
		ok: func(m []string, lower string, s, en int) bool {
			k := m[1]
			if placeholder(k) {
				return false
			}
			_, _, d := classes(k[4:])
			return d || entropy(k) >= 3.3 && near(lower, s, en, 60, "aws", "amazon", "access key", "access_key", "key id", "key_id", "iam", "credential")
		}},
	{kind: "aws-secret-key", keywords: []string{"aws", "secret_access", "secret access", "secretaccess"}, join: true,
		pattern: `(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, group: 1,
		ok: func(m []string, lower string, s, en int) bool {
			return mixed(m[1]) && entropy(m[1]) >= 4 && !placeholder(m[1]) && near(lower, s, en, 80, "aws", "secret")
		}},
	tok("gcp-api-key", b+`(AIza[0-9A-Za-z_\-]{35})`+e, 3.5, "aiza"),
	{kind: "gcp-service-account-key", keywords: []string{"private_key_id"}, pattern: `private_key_id"?\s*[:=]\s*"?([0-9a-f]{40})`, group: 1},
	tok("google-oauth-secret", b+`(GOCSPX-[A-Za-z0-9_\-]{28})`+e, 3.5, "gocspx-"),
	tok("google-oauth-token", b+`(ya29\.[0-9A-Za-z_\-]{30,})`, 3.5, "ya29."),
	{kind: "azure-storage-key", keywords: []string{"accountkey", "sharedaccesskey", "sharedaccesssignature"},
		pattern: `(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*([A-Za-z0-9+/%&=:\-]{20,})`, group: 1,
		ok: func(m []string, _ string, _, _ int) bool { return !placeholder(m[1]) }},
	tok("azure-ad-client-secret", `(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|$)`, 3.0, "q~"),
	tok("github-token", b+`((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36})`+e, 3.5, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	tok("github-token", b+`(github_pat_[A-Za-z0-9_]{50,})`+e, 3.5, "github_pat_"),
	tok("gitlab-token", b+`((?:glpat|gloas|gldt|glrt|glptt|glcbt|glimt|glsoat|glffct|glagent)-[A-Za-z0-9_\-]{20,})`+e, 3.2,
		"glpat-", "gloas-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glsoat-", "glffct-", "glagent-"),
	tok("gitlab-token", b+`(GR1348941[A-Za-z0-9_\-]{20,})`+e, 3.2, "gr1348941"),
	tok("anthropic-key", b+`(sk-ant-(?:api|admin|sid|oat)\d{2}-[A-Za-z0-9_\-]{32,})`, 3.5, "sk-ant-"),
	{kind: "openai-key", keywords: []string{"sk-"}, join: true, group: 1,
		pattern: b + `(sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,})` + e,
		ok: func(m []string, _ string, _, _ int) bool {
			k := m[1]
			if strings.HasPrefix(k, "sk-ant-") {
				return false
			}
			body := k[strings.LastIndexByte(k[:min(len(k), 16)], '-')+1:]
			return mixed(body) && entropy(body) >= 3.5 && !placeholder(body)
		}},
	tok("huggingface-token", b+`((?:hf_|api_org_)[A-Za-z0-9]{30,40})`+e, 3.5, "hf_", "api_org_"),
	tok("slack-token", b+`(xox[baprseo]-[0-9A-Za-z\-]{10,})`, 3.0, "xox"),
	tok("slack-token", b+`(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)`, 3.0, "xapp-"),
	{kind: "slack-webhook", keywords: []string{"hooks.slack.com"}, join: true,
		pattern: `https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}`},
	{kind: "discord-webhook", keywords: []string{"/api/webhooks/"}, join: true,
		pattern: `https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}`},
	tok("stripe-key", b+`((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})`+e, 3.2, "sk_live", "sk_test", "rk_live", "rk_test"),
	tok("stripe-webhook-secret", b+`(whsec_[A-Za-z0-9+/]{24,})`, 3.2, "whsec_"),
	tok("twilio-key", b+`(SK[0-9a-fA-F]{32})`+e, 3.0, "sk"),
	{kind: "twilio-key", keywords: []string{"twilio"}, minHex: 32, pattern: `(?i)twilio[^\n]{0,60}?(?:^|[^0-9a-f])([0-9a-f]{32})(?:[^0-9a-f]|$)`, group: 1},
	tok("sendgrid-key", b+`(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})`+e, 3.5, "sg."),
	tok("npm-token", b+`(npm_[A-Za-z0-9]{36})`+e, 3.5, "npm_"),
	{kind: "npm-token", keywords: []string{"_authtoken"}, pattern: `_authToken\s*=\s*([^\s"']{8,})`, group: 1,
		ok: func(m []string, _ string, _, _ int) bool { return !placeholder(m[1]) }},
	tok("pypi-token", b+`(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})`, 3.5, "pypi-ageichlwas5vcmc"),
	tok("digitalocean-token", b+`(do[opr]_v1_[a-f0-9]{64})`+e, 3.0, "dop_v1_", "doo_v1_", "dor_v1_"),
	tok("shopify-token", b+`(shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})`+e, 3.0, "shpat_", "shpss_", "shpca_", "shppa_"),
	tok("databricks-token", b+`(dapi[a-f0-9]{32}(?:-\d)?)`+e, 3.0, "dapi"),
	tok("vault-token", b+`(hv[sb]\.[A-Za-z0-9_\-]{24,})`, 3.5, "hvs.", "hvb."),
	tok("telegram-bot-token", `(?:^|[^0-9])(\d{8,10}:AA[A-Za-z0-9_\-]{33})`+e, 3.5, ":aa"),
	tok("mailchimp-key", `(?:^|[^0-9a-f])([0-9a-f]{32}-us\d{1,2})`+e, 3.0, "-us"),
	tok("linear-key", b+`(lin_api_[A-Za-z0-9]{40})`+e, 3.5, "lin_api_"),
	tok("postman-key", b+`(PMAK-[a-f0-9]{24}-[a-f0-9]{34})`+e, 3.0, "pmak-"),
	tok("square-token", b+`(sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43})`+e, 3.2, "sq0atp-", "sq0csp-"),
	tok("groq-key", b+`(gsk_[A-Za-z0-9]{48,52})`+e, 3.5, "gsk_"),
	tok("perplexity-key", b+`(pplx-[A-Za-z0-9]{40,48})`+e, 3.5, "pplx-"),
	tok("xai-key", b+`(xai-[A-Za-z0-9]{60,80})`+e, 3.5, "xai-"),
	tok("notion-token", b+`(ntn_[A-Za-z0-9]{40,50})`+e, 3.5, "ntn_"),
	{kind: "jwt", keywords: []string{"eyj"}, join: true, group: 1, minRun: 20,
		pattern: b + `(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)`,
		ok:      func(m []string, _ string, _, _ int) bool { return jwtHeader(m[1][:strings.IndexByte(m[1], '.')]) }},
	{kind: "url-credentials", keywords: []string{"://"}, join: true, group: 2, hint: hasAt,
		pattern: `\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://([^\s:/?#@"'<>]*):([^\s/?#@"'<>]+)@[A-Za-z0-9.\-\[]`,
		ok:      func(m []string, _ string, _, _ int) bool { return !placeholder(m[2]) }},
	{kind: "password", keywords: []string{"pass", "pwd"}, group: 3, hint: assigned("pass", "pwd"),
		pattern: `(?i)(?:^|[^a-z0-9])(?:[a-z0-9_.\-]*?)(password|passwd|passphrase|passcode|pwd)["']?\s*(:=|=>|=|:)\s*("[^"\n]+"|'[^'\n]+'|[^\s,;"'` + "`" + `]+)`,
		ok: func(m []string, _ string, _, _ int) bool {
			q := len(m[3]) > 0 && (m[3][0] == '"' || m[3][0] == '\'')
			return humanSecret(m[3], q || m[2] != ":")
		}},
	{kind: "password", keywords: []string{"pass", "pin"}, group: 3,
		pattern: `(?i)\b(password|passphrase|passcode|pin)\b((?:\s+(?:for|of|to|on|at)\s+[^\s.,;:]+){0,2})\s+(?:is|was|reads|=|:)\s+("[^"\n]+"|'[^'\n]+'|“[^”\n]+”|[^\s]+)`,
		ok: func(m []string, _ string, _, _ int) bool {
			if strings.EqualFold(m[1], "pin") {
				v := trimValue(m[3])
				return len(v) >= 4 && len(v) <= 8 && strings.Trim(v, "0123456789") == ""
			}
			q := m[3] != "" && strings.ContainsRune(`"'“`, []rune(m[3])[0])
			return humanSecret(m[3], q)
		}},
	{kind: "password", keywords: []string{"sshpass"}, group: 1,
		pattern: `(?i)\bsshpass\s+-p\s*("[^"\n]+"|'[^'\n]+'|[^\s]+)`,
		ok:      func(m []string, _ string, _, _ int) bool { return !placeholder(trimValue(m[1])) }},
	{kind: "password", keywords: []string{"mysql", "mariadb", "mysqldump", "mysqladmin"}, group: 1, hint: dashP,
		pattern: `(?i)\b(?:mysql|mariadb|mysqldump|mysqladmin)\b[^\n|;&]*?\s-p("[^"\n]+"|'[^'\n]+'|[^\s"']+)`,
		ok:      func(m []string, _ string, _, _ int) bool { return humanSecret(m[1], true) }},
	// "the admin pass is …", "Das Passwort lautet …", "le mot de passe est
	// …", "la contraseña es …", "a senha é …", "het wachtwoord is …"
	{kind: "password", keywords: []string{"pass", "pw", "kennwort", "mot de passe", "contraseña", "senha", "wachtwoord", "parola", "hasło", "lösenord", "salasana"}, group: 2,
		pattern: `(?i)\b(pass|pw|passwort|kennwort|mot de passe|contraseña|contrasena|senha|wachtwoord|parola d'ordine|password|hasło|haslo|lösenord|salasana)\s+(?:(?:is|was|lautet|ist|est|es|é|era|to|är|on)\s+|(?:=|:)\s*)("[^"\n]+"|'[^'\n]+'|“[^”\n]+”|„[^“\n]+“|[^\s]+)`,
		ok: func(m []string, _ string, _, _ int) bool {
			q := m[2] != "" && strings.ContainsRune(`"'“„`, []rune(m[2])[0])
			return humanSecret(strings.TrimRight(m[2], ".,;"), q)
		}},
	// a long hex string named a secret: webhook and signing secrets, HMAC
	// keys, hex API tokens (never a commit or a checksum, which are named so)
	{kind: "hex-secret", keywords: []string{"secret", "webhook", "signing", "hmac", "token", "api key", "apikey", "api_key", "password"}, group: 1, minHex: 32,
		pattern: `(?:^|[^0-9A-Fa-f])([0-9a-fA-F]{32,128})(?:[^0-9A-Za-z]|$)`,
		ok: func(m []string, lower string, s, en int) bool {
			return entropy(m[1]) >= 3.0 && near(lower, s, en, 40, "secret", "webhook", "signing", "hmac", "token", "api key", "apikey", "api_key", "password") &&
				!near(lower, s, en, 60, "sha", "commit", "hash", "digest", "checksum", "md5", "revision", "rev ", "uuid", "etag")
		}},
	{kind: "secret-assignment", keywords: []string{"secret", "token", "key", "credential", "auth"}, group: 2, hint: assigned("secret", "token", "key", "credential"),
		pattern: `(?i)(?:^|[^a-z0-9])[a-z0-9_.\-]*?(secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth[_\-]?token|credentials?)["']?\s*(?::=|=>|=|:)\s*("[^"\n]+"|'[^'\n]+'|[^\s,;"'` + "`" + `]+)`,
		ok:      func(m []string, _ string, _, _ int) bool { return machineSecret(m[2], 12, 3.0) }},
	{kind: "basic-auth", keywords: []string{"basic"}, group: 1, join: true,
		pattern: `(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})`,
		ok:      func(m []string, _ string, _, _ int) bool { return basicCredentials(m[1]) }},
	{kind: "bearer-token", keywords: []string{"bearer"}, group: 1, join: true,
		pattern: `(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`,
		ok:      func(m []string, _ string, _, _ int) bool { return machineSecret(m[1], 16, 3.0) }},
	{kind: "basic-auth", keywords: []string{"-u", "--user"}, group: 1, hint: func(_, lower string) bool { return strings.Contains(lower, "curl") },
		pattern: `(?:\s|^)(?:-u|--user)\s+["']?([^\s:"']+:[^\s"']+)`,
		ok: func(m []string, lower string, s, _ int) bool {
			return !placeholder(m[1][strings.IndexByte(m[1], ':')+1:]) && strings.Contains(lower[max(0, s-200):s], "curl")
		}},
	{kind: "payment-card", minDigits: 12, group: 1,
		pattern: `(?:^|[^0-9.\-])(\d{4}(?:[ \-]?(?:\n\s*)?\d{2,7}){1,4})(?:[^0-9]|$)`,
		ok: func(m []string, lower string, s, en int) bool {
			raw := m[1]
			d := strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, raw)
			if len(d) < 12 || len(d) > 19 || !cardIIN(d) || !luhn(d) || strings.Trim(d, d[:1]) == "" {
				return false
			}
			if len(d) == len(raw) {
				return near(lower, s, en, 40, cardContext...)
			}
			groups := strings.FieldsFunc(raw, func(r rune) bool { return r < '0' || r > '9' })
			for i, g := range groups {
				if i < len(groups)-1 && len(g) != 4 && !(len(d) == 15 && len(groups) == 3) {
					return false
				}
			}
			return true
		}},
	{kind: "iban", minDigits: 8, group: 1, hint: func(s, _ string) bool { return ibanHint(s) },
		pattern: `(?i)(?:^|[^A-Za-z0-9])([A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?)(?:[^A-Za-z0-9]|$)`,
		ok: func(m []string, _ string, _, _ int) bool {
			return ibanValid(strings.ReplaceAll(m[1], " ", ""))
		}},
	{kind: "national-id", minDigits: 9, group: 1,
		pattern: `(?:^|[^0-9\-])((\d{3})-(\d{2})-(\d{4}))(?:[^0-9\-]|$)`,
		ok:      func(m []string, _ string, _, _ int) bool { return ssnValid(m[2], m[3], m[4]) }},
	{kind: "national-id", keywords: []string{"ssn", "social security"}, group: 1,
		pattern: `(?i)(?:ssn|social security(?: number)?)\D{0,20}?((\d{3}) ?(\d{2}) ?(\d{4}))(?:[^0-9]|$)`,
		ok:      func(m []string, _ string, _, _ int) bool { return ssnValid(m[2], m[3], m[4]) }},
	{kind: "national-id", minDigits: 17, group: 1,
		pattern: `(?:^|[^0-9A-Za-z])(\d{17}[0-9Xx])(?:[^0-9A-Za-z]|$)`,
		ok:      func(m []string, _ string, _, _ int) bool { return cnResidentID(m[1]) }},
	{kind: "national-id", keywords: []string{"dni", "nie", "nif", "documento"}, group: 1,
		pattern: `(?i)(?:^|[^0-9A-Za-z])([XYZ0-9]\d{7}-?[A-Z])(?:[^0-9A-Za-z]|$)`,
		ok: func(m []string, lower string, s, en int) bool {
			return dniValid(m[1]) && near(lower, s, en, 40, "dni", "nie", "nif", "documento")
		}},
	{kind: "national-id", minDigits: 12, group: 1,
		pattern: `(?:^|[^0-9])([2-9]\d{3}[ \-]?\d{4}[ \-]?\d{4})(?:[^0-9]|$)`,
		ok: func(m []string, lower string, s, en int) bool {
			d := strings.NewReplacer(" ", "", "-", "").Replace(m[1])
			return verhoeff(d) && (len(m[1]) == 14 || near(lower, s, en, 40, "aadhaar", "uidai", "uid"))
		}},
	{kind: "national-id", keywords: []string{"national insurance", "nino", "ni number"}, group: 1,
		pattern: `(?i)(?:^|[^A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D])(?:[^A-Za-z0-9]|$)`},
	{kind: "email", keywords: []string{"@"}, pii: true, group: 1,
		pattern: `(?:^|[^A-Za-z0-9._%+\-])([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24})(?:[^A-Za-z0-9:/]|$)`,
		ok: func(m []string, _ string, _, _ int) bool {
			tld := strings.ToLower(m[1][strings.LastIndexByte(m[1], '.')+1:])
			switch tld {
			case "png", "jpg", "jpeg", "gif", "svg", "webp", "js", "ts", "css", "md", "json", "py", "go":
				return false
			}
			return true
		}},
	{kind: "phone", minDigits: 3, pii: true, group: 1,
		pattern: `(?:^|[^0-9A-Za-z+])(\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]?\d{2,4}){1,4})(?:[^0-9]|$)`,
		ok: func(m []string, _ string, _, _ int) bool {
			n := 0
			for i := 0; i < len(m[1]); i++ {
				if m[1][i] >= '0' && m[1][i] <= '9' {
					n++
				}
			}
			return n >= 8 && n <= 15
		}},
	{kind: "phone", keywords: []string{"phone", "tel", "mobile", "cell", "call me", "whatsapp"}, pii: true, group: 1,
		pattern: `(?i)(?:phone|tel|mobile|cell|call me|whatsapp)[^0-9\n]{0,20}?(\(?\d{2,4}\)?[ .\-]?\d{3,4}[ .\-]?\d{3,4})(?:[^0-9]|$)`},
}
