package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode"
)

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// classes counts the character classes of s: lower, upper, digit.
func classes(s string) (lower, upper, digit bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return
}

// mixed reports whether s holds lower case, upper case and digits, as a
// generated key does and a word does not.
func mixed(s string) bool {
	l, u, d := classes(s)
	return l && u && d
}

// placeholder reports whether v is a placeholder or a variable rather
// than a value: "<your-key>", "${TOKEN}", "$PASS", "xxxx", "****",
// "…EXAMPLE", "[REDACTED:…]", "os.getenv(…)", a run of one character, or
// an ascending run that is most of it.
func placeholder(v string) bool {
	l := strings.ToLower(strings.Trim(v, `"'`+"`"))
	if l == "" {
		return true
	}
	switch l[0] {
	case '$', '<', '{', '%', '[', '(':
		return true
	}
	for _, p := range []string{"example", "xxxx", "****", "....", "redacted", "your_", "your-", "yourkey", "placeholder", "dummy",
		"<", ">", "${", "{{", "getenv", "environ", "process.env", "env.", "env[", "secrets.", "vault:", "()"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	run, asc := 1, 1
	for i := 1; i < len(l); i++ {
		if l[i] == l[i-1] {
			run++
			if run >= 6 {
				return true
			}
		} else {
			run = 1
		}
		if l[i] == l[i-1]+1 {
			asc++
			// "abcdefghijklmnop…": an ascending run that is most of
			// the value; a run inside a longer key is not enough.
			if asc >= 8 && 10*asc >= 6*len(l) {
				return true
			}
		} else {
			asc = 1
		}
	}
	return false
}

// stopValues are values of a password or secret assignment that name no
// secret: types, booleans, words of documentation.
var stopValues = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`none null nil true false yes no empty required optional string str int bool
		hidden secret password passwd token undefined unset default value masked omitted foo bar baz test
		hashed encrypted stored rotated set provided missing invalid wrong expired correct same different
		changed needed used present absent generated random strong weak long short there here`) {
		m[w] = true
	}
	return m
}()

// trimValue removes quotes and trailing punctuation around a value.
func trimValue(v string) string {
	v = strings.TrimRight(v, ".,;:!?)]}")
	return strings.Trim(v, `"'`+"`“”‘’")
}

// humanSecret reports whether v (a value after "password is" or
// "password:") looks like a chosen secret rather than a word of prose: at
// least 4 characters, not a stop word or placeholder, and either quoted
// or holding a digit, a symbol or a capital after the first letter.
func humanSecret(v string, quoted bool) bool {
	t := trimValue(v)
	if len(t) < 4 || placeholder(t) || stopValues[strings.ToLower(t)] {
		return false
	}
	if quoted {
		return true
	}
	for i, r := range t {
		if unicode.IsDigit(r) || !unicode.IsLetter(r) || i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// machineSecret reports whether v looks generated: long enough, not a
// placeholder, with high entropy and more than one character class.
func machineSecret(v string, minLen int, minEntropy float64) bool {
	t := trimValue(v)
	if len(t) < minLen || placeholder(t) || entropy(t) < minEntropy {
		return false
	}
	l, u, d := classes(t)
	n := 0
	for _, b := range []bool{l, u, d} {
		if b {
			n++
		}
	}
	return n >= 2
}

// luhn reports whether the digits pass the Luhn checksum.
func luhn(digits string) bool {
	sum, alt := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if alt {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		alt = !alt
	}
	return sum%10 == 0
}

// cardIIN reports whether a card number's prefix and length belong to a
// card scheme: Visa, Mastercard, American Express, Discover, Diners, JCB,
// UnionPay, Maestro, Mir.
func cardIIN(d string) bool {
	n := len(d)
	p := func(k int) int {
		v := 0
		for i := 0; i < k && i < n; i++ {
			v = v*10 + int(d[i]-'0')
		}
		return v
	}
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p(2) >= 51 && p(2) <= 55, p(4) >= 2221 && p(4) <= 2720:
		return n == 16
	case p(2) == 34 || p(2) == 37:
		return n == 15
	case p(4) == 6011, p(3) >= 644 && p(3) <= 649, p(2) == 65:
		return n >= 16 && n <= 19
	case p(2) == 36, p(3) >= 300 && p(3) <= 305, p(2) == 38, p(2) == 39:
		return n >= 14 && n <= 19
	case p(4) >= 3528 && p(4) <= 3589:
		return n >= 16 && n <= 19
	case p(2) == 62:
		return n >= 16 && n <= 19
	case p(4) >= 2200 && p(4) <= 2204:
		return n >= 16 && n <= 19
	case p(2) == 50, p(2) >= 56 && p(2) <= 58, d[0] == '6':
		return n >= 12 && n <= 19
	}
	return false
}

// ibanLengths are the IBAN lengths of the countries that use one.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CR": 22,
	"CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22,
	"GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
	"JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}

// ibanHint reports whether s holds two letters and two digits after a
// non-alphanumeric byte (or at its start): where an IBAN begins.
func ibanHint(s string) bool {
	letter := func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i+3 < len(s); i++ {
		if letter(s[i]) && letter(s[i+1]) && digit(s[i+2]) && digit(s[i+3]) && (i == 0 || !letter(s[i-1]) && !digit(s[i-1])) {
			return true
		}
	}
	return false
}

// ibanValid checks an IBAN without spaces: known country, its length,
// and the ISO 7064 mod-97 check.
func ibanValid(s string) bool {
	s = strings.ToUpper(s)
	if want, ok := ibanLengths[s[:2]]; !ok || want != len(s) {
		return false
	}
	r := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// verhoeff reports whether the digits pass the Verhoeff check (Aadhaar).
func verhoeff(num string) bool {
	d := [10][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
		{3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1}, {6, 5, 9, 8, 7, 1, 0, 4, 3, 2},
		{7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	p := [8][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
		{8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1}, {2, 7, 9, 3, 8, 0, 6, 4, 1, 5},
		{7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
	c := 0
	for i := 0; i < len(num); i++ {
		c = d[c][p[i%8][int(num[len(num)-1-i]-'0')]]
	}
	return c == 0
}

// cnResidentID checks an 18-character PRC resident identity number: a
// plausible birth date at positions 7–14 and the ISO 7064 MOD 11-2 check
// character.
func cnResidentID(s string) bool {
	if s[0] == '0' || s[0] == '9' {
		return false
	}
	y := atoi(s[6:10])
	m := atoi(s[10:12])
	day := atoi(s[12:14])
	if y < 1900 || y > 2100 || m < 1 || m > 12 || day < 1 || day > 31 {
		return false
	}
	w := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i := 0; i < 17; i++ {
		sum += int(s[i]-'0') * w[i]
	}
	return "10X98765432"[sum%11] == (s[17]&^0x20) || "10X98765432"[sum%11] == s[17]
}

// ssnValid checks the area, group and serial of a US social security number.
func ssnValid(area, group, serial string) bool {
	a := atoi(area)
	return a != 0 && a != 666 && a < 900 && atoi(group) != 0 && atoi(serial) != 0
}

// dniValid checks a Spanish DNI (8 digits and a letter) or NIE (X, Y or
// Z, 7 digits and a letter).
func dniValid(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, "-", ""))
	if len(s) != 9 {
		return false
	}
	num := s[:8]
	switch num[0] {
	case 'X':
		num = "0" + num[1:]
	case 'Y':
		num = "1" + num[1:]
	case 'Z':
		num = "2" + num[1:]
	}
	for i := 0; i < 8; i++ {
		if num[i] < '0' || num[i] > '9' {
			return false
		}
	}
	return "TRWAGMYFPDXBNJZSQVHLCKE"[atoi(num)%23] == s[8]
}

func atoi(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// basicCredentials reports whether a Basic token decodes to "user:pass".
func basicCredentials(tok string) bool {
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(tok, "="))
		if err != nil {
			return false
		}
	}
	s := string(b)
	i := strings.IndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// jwtHeader reports whether the first part of a JWT decodes to a JSON
// object naming an algorithm or a type.
func jwtHeader(part string) bool {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(part, "="))
	if err != nil {
		return false
	}
	s := string(b)
	return strings.HasPrefix(strings.TrimSpace(s), "{") && (strings.Contains(s, `"alg"`) || strings.Contains(s, `"typ"`))
}
