package redact

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// pattern is one family of instruction-like text.
type pattern struct {
	why      string   // reason shown to a person: "overrides earlier instructions"
	keywords []string // the pattern runs only on texts holding one of these
	re       string   // lower case: it reads the lower-cased text
}

// Words of the families, as regular-expression alternations.
const (
	rulesWord = `(?:instructions?|rules?|guidelines?|guidance|directions?|directives?|prompts?|constraints?|polic(?:y|ies)|safeguards?|guardrails?|restrictions?|filters?|orders?|commands?|context|memor(?:y|ies)|entries|notes)`
	// guardWord is rulesWord with the checks a rule may stand for, for
	// texts that declare them void ("all safety checks are lifted").
	guardWord = `(?:checks?|protections?|reviews?|approvals?|` + rulesWord + `)`
	priorWord = `(?:previous|prior|above|preceding|earlier|existing|original|all|any|every|your|system|safety|security|old)`
	authority = `(?:system )?(?:administrator|admin|sysadmin|developer|operator|owner|root|superuser|security team|it department|anthropic|openai|creator|supervisor|your (?:boss|maker|master|principal))`
)

var patterns = []pattern{
	{"overrides earlier instructions", []string{"ignore", "disregard", "forget", "override", "overrule", "bypass", "skip", "discard", "abandon", "drop", "cancel", "nullify", "set aside", "throw out"}, `\b(?:ignore|disregard|forget|override|overrule|bypass|skip|discard|abandon|drop|cancel|nullify|set aside|throw out)\s+(?:(?:the|these|those|my)\s+)?(?:` + priorWord + `\s+){1,3}(?:[a-z]+\s+)?` + rulesWord + `\b|\bforget (?:everything|all) (?:you|that|above|before)`},
	{"declares the rules void", []string{"void", "null", "cancel", "obsolete", "revoked", "invalid", "superseded", "lifted", "suspended", "disabled", "overridden", "no longer"}, `\b(?:(?:above|preceding|previous|prior|earlier|all|your|system|safety|other|these|those|existing|original)\s+(?:[a-z]+\s+)?` + guardWord + `|` + guardWord + `\s+(?:above|before|so far|given earlier))\s+(?:(?:are|is|were|have been|has been|become)\s+(?:now\s+)?(?:void|null|cancell?ed|obsolete|revoked|invalid|superseded|lifted|suspended|disabled|overridden|no longer (?:valid|in effect|binding|relevant))|(?:(?:are|is|does|do)\s+)?(?:now\s+)?no longer (?:valid|apply|applies|in effect|binding|relevant|matters?|counts?))\b`},
	{"claims authority", []string{"admin", "developer", "operator", "owner", "root", "superuser", "security team", "it department", "anthropic", "openai", "creator", "supervisor", "boss", "maker", "master", "principal"}, `\b(?:as|i am|i'm|this is|speaking as|message from|on behalf of)\s+(?:the|your|an|a)?\s*` + authority + `\b[^.]*\b(?:authori[sz]e|permit|allow|grant|order|instruct|command|require|override|approve)`},
	{"grants itself permission", []string{"authori", "permitted", "allowed", "cleared", "permission", "allow you", "permit you"}, `\b(?:i (?:hereby )?(?:authori[sz]e|permit|allow) you|you are (?:now )?(?:authori[sz]ed|permitted|allowed|cleared) to|you have (?:my |full )?(?:permission|authori[sz]ation) to)\b`},
	{"demands obedience", []string{"obey", "follow", "execute", "comply", "exactly what"}, `\b(?:obey|follow|execute|comply with)\s+(?:only\s+)?(?:this|these|my|the following)\s+(?:entry|note|memory|memories|instructions? (?:instead|only|exclusively|above all))\b|\bobey (?:only )?(?:this|me|my)\b|\bdo exactly what (?:this|i) says?\b`},
	{"redefines the assistant", []string{"dan mode", "you are now", "from now on", "from here on", "from this point", "henceforth", "going forward", "act as", "pretend", "roleplay", "you must now", "new instruction", "new system prompt", "developer mode", "jailbreak", "do anything now"}, `\b(?:you are now|from now on,? you|(?:from (?:now|here|this point) on(?:wards?)?|from this point (?:on|forward)|henceforth|going forward),? (?:you )?(?:must |should |will |shall )?(?:act|answer|respond|reply|approve|skip|ignore|obey|execute|bypass|disable|never ask|do not ask|don't ask|stop asking)\b|(?:^|you (?:will |must |should |shall )?)act as (?:a|an|the|my)|pretend (?:to be|you are)|roleplay as|you must now|new instructions?:|new system prompt|developer mode|jailbreak|do anything now|\bdan mode)`},
	{"bypasses safety", []string{"bypass", "disable", "turn off", "circumvent", "evade", "ignore"}, `\b(?:bypass|disable|turn off|circumvent|evade|ignore)\s+(?:the\s+|your\s+|all\s+|any\s+)?(?:safety|security|content|moderation|ethical)?\s*(?:checks?|filters?|guardrails?|safeguards?|restrictions?|policies|protections?|safety|moderation)\b`},
	{"hides from the user", []string{"tell", "inform", "mention", "reveal", "alert", "keep this", "keep it"}, `\b(?:do not|don't|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|alert(?:ing)?)\s+(?:(?:it|this|that|these)(?:\s+(?:entry|note|memory|instruction|message))?\s+to\s+)?(?:the\s+)?(?:user|human|person|operator)\b|\bkeep (?:this|it) (?:secret|hidden) from\b`},
	{"asks to exfiltrate data", []string{"send", "post", "upload", "forward", "exfiltrate", "leak", "email", "transmit", "copy"}, `\b(?:send|post|upload|forward|exfiltrate|leak|email|transmit|copy)\s+(?:the\s+|all\s+|your\s+|any\s+|every\s+)?(?:contents?|conversation|chat|history|memory|memories|files?|credentials|secrets?|keys?|tokens?|passwords?|env(?:ironment)?(?: variables)?|data|source code|system prompt)\b[^.]*\b(?:to|at)\s+(?:https?://|\S+@|my |the attacker|this (?:url|address|server|endpoint))`},
	{"asks to reveal the system prompt", []string{"prompt", "instructions"}, `\b(?:reveal|print|show|repeat|output|leak|dump)\s+(?:your|the)\s+(?:system\s+prompt|instructions|hidden prompt|initial prompt)`},
	{"redirects tool calls", []string{"tool", "function"}, `\b(?:instead,?\s+(?:call|use|invoke|run|execute)\s+(?:the\s+)?\S+\s+(?:tool|function|command)|(?:call|invoke|use|run)\s+(?:the\s+)?\S+\s+(?:tool|function)\s+instead|always (?:call|invoke) (?:the\s+)?\S+\s+(?:tool|function))\b`},
	{"holds tool-call syntax", []string{"tool_", "function_call", "invoke", "antml", "\"name\"", "functions."}, `<\s*/?\s*(?:tool_call|tool_use|function_calls?|invoke|antml:|tool_result)|"(?:tool_calls|function_call)"\s*:|\{\s*"name"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|parameters|input)"\s*:|\bfunctions\.[a-z_]+\(`},
	{"holds a chat-template token", []string{"<|", "[inst", "[/inst", "<<sys", "<</sys", "<", "system", "assistant", "human", "###"}, `<\|[a-z_ ]{2,30}\|>|\[/?inst\]|<</?sys>>|<\s*/?\s*(?:start_of_turn|end_of_turn|system|assistant|user|im_start|im_end|s)\s*>|(?:^|\n)\s*(?:system|assistant|human)\s*:|###\s*(?:instruction|system|response)s?\s*:?`},
	{"closes the memory fence", []string{"memory"}, `</\s*memory|<\s*memory[-_ ]context`},
	{"holds a hidden comment", []string{"<!--"}, `<!--`},
	{"holds a tracking image link", []string{"!["}, `!\[[^\]]*\]\(\s*https?://[^)\s]*\?[^)\s]*=`},
	{"pipes a download into a shell", []string{"curl", "wget"}, `\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b`},
	{"overrides earlier instructions", []string{"given", "told", "taught"}, `\b(?:ignore|disregard|forget|override|bypass|skip|discard|abandon|drop|set aside|throw out|put aside)\s+(?:all\s+|any\s+|the\s+|those\s+)?` + rulesWord + `\s+(?:that\s+)?you(?:'ve| have| were| had)?\s+(?:been\s+)?(?:given|told|taught|shown)\b`},
	{"overrides earlier instructions", []string{"attention", "no longer", "told", "supersede", "replace", "highest", "priority", "henceforth", "forward", "new polic", "new rule", "new directive", "new instruction"}, `\bpay no (?:attention|heed|mind) to (?:what|anything|everything|the (?:earlier|previous|prior|above|old))|\b(?:what|everything|anything) you (?:were|have been|are) (?:told|instructed|given) (?:earlier|before|previously|so far) (?:is|are|no longer|does not|doesn't)|\byou (?:no longer|don't|do not|never) (?:need|have) to (?:follow|obey|respect|observe|honou?r|abide by|comply with) (?:your |the |any )?(?:[a-z]+ )?` + rulesWord + `|\b(?:supersedes?|replaces?|overrides?|takes? precedence over|outranks?) (?:all |any |every )?(?:the )?(?:other |previous |prior |earlier |existing |your |system )+` + rulesWord + `|\b(?:highest|top|first)[- ]priority (?:directive|instruction|rule|order|command)|\b(?:treat|take|consider) (?:this|these|it) (?:note|entry|memory|text|message)? ?as (?:a |an |your )?(?:binding |standing |new |overriding )?(?:system |official )?(?:directive|instruction|order|command|rule)s?\b|\bnew (?:polic(?:y|ies)|rules?|directives?|instructions?|orders?) (?:from|by|issued by) (?:the |your )?(?:maintainers?|admins?|administrators?|developers?|owners?|security|management|operators?|vendor|anthropic|openai)`},
	{"asks to exfiltrate data", []string{".env", "credential", "id_rsa", "id_ed25519", ".ssh", ".aws", ".npmrc", ".netrc", "kubeconfig", "api key", "api_key", "secret", "token", "password", "private key", "cookie"}, `\b(?:send|post|upload|forward|exfiltrate|leak|e-?mail|mail|transmit|copy|share|paste|push|sync|attach|put|curl|pipe|publish|dump)\b[^\n]{0,120}(?:\.env\b|credentials|id_(?:rsa|ed25519|ecdsa)|\.ssh\b|\.aws\b|\.npmrc|\.netrc|kubeconfig|api[ _-]?keys?|secrets?|tokens?|passwords?|private keys?|cookies)[^\n]{0,120}(?:https?://|\b\S+@\S+\.[a-z]{2,}|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bgist\b|pastebin|paste\.|webhook|external|outside|third[- ]party|public|in (?:your|the) (?:reply|answer|response))|\b(?:send|post|upload|forward|exfiltrate|leak|e-?mail|transmit|copy|share|paste|curl)\b[^\n]{0,60}(?:https?://|\S+@\S+\.[a-z]{2,})[^\n]{0,60}(?:\.env\b|credentials|id_(?:rsa|ed25519)|api[ _-]?keys?|secrets?|tokens?|passwords?|private keys?)`},
	{"runs downloaded code", []string{"curl", "wget", "base64", "iwr", "invoke-webrequest", "fetch"}, `(?:\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b|\bbase64\s+(?:-d|--decode)\b)[^\n]*\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|source)\b|\b(?:(?:ba|z)?sh|source|\.)\s+(?:-c\s+)?["']?(?:<\(|\$\()\s*(?:curl|wget|fetch)\b|\beval\s+["']?(?:\$\(|` + "`" + `)\s*(?:curl|wget|fetch)\b`},
	{"plants a trigger", []string{"whenever", "every time", "each time", "if ever"}, `\b(?:whenever|every time|each time|if ever)\s+(?:the\s+)?(?:user|anyone|someone|you)\s+(?:asks?|mentions?|says?|types?|sees?|reads?)\b[^.]*\b(?:respond|reply|say|tell|recommend|output|mention)\b`},
}

// instrRegexps compiles the patterns' expressions, each on first use.
var instrRegexps = func() []func() *regexp.Regexp {
	out := make([]func() *regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(p.re) })
	}
	return out
}()

// Instructions returns why text reads like an instruction addressed to a
// model rather than a fact about the user or project, one reason per
// family it matches ("overrides earlier instructions", "holds hidden
// Unicode (U+200B)"), never quoting the text (a reason is stored in the
// entry's notes, and must not repeat the payload); nil for ordinary text. It reads the normalised text, so zero-width characters or
// full-width letters do not hide a payload; their presence is itself a
// reason.
func Instructions(text string) []string {
	var out []string
	var hidden []string
	for _, r := range text {
		if Hidden(r) && len(hidden) < 3 {
			hidden = append(hidden, fmt.Sprintf("U+%04X", r))
		}
	}
	if len(hidden) > 0 {
		out = append(out, "holds hidden Unicode ("+strings.Join(hidden, ", ")+")")
	}
	if mixedScriptWord(text) {
		out = append(out, "spells a word with look-alike letters of another script")
	}
	n := lowerASCII(Fold(text))
	if !strings.Contains(n, "\n") {
		n = strings.Join(strings.Fields(n), " ") // role markers and fences need their lines
	}
	var bg bigrams
	bg.fill(n)
	matched := make([]bool, len(patterns))
	for i, p := range patterns {
		matched[i] = bg.contains(n, p.keywords) && instrRegexps[i]().MatchString(n)
	}
	seen := map[string]bool{}
	for i, p := range patterns {
		if matched[i] && !seen[p.why] {
			seen[p.why] = true
			out = append(out, p.why)
		}
	}
	return out
}

// mixedScriptWord reports a word that mixes Latin letters with letters of
// another script that look like Latin ones ("pаssword" with a Cyrillic а):
// no one types that, it is written to get past a filter.
func mixedScriptWord(text string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !Hidden(r) }) {
		latin, other := false, false
		for _, r := range w {
			if r < 0x80 {
				latin = true
			} else if _, ok := confusables[r]; ok {
				other = true
			}
		}
		if latin && other {
			return true
		}
	}
	return false
}

// concealment lists the reasons Instructions gives for what no one types
// by accident: they hold a text whatever its source.
var concealment = map[string]bool{"holds tool-call syntax": true, "holds a chat-template token": true,
	"closes the memory fence": true, "holds a hidden comment": true, "holds a tracking image link": true}

// Concealment returns the reasons of Instructions that do not depend on
// wording: hidden Unicode, look-alike letters of another script,
// chat-template and tool-call syntax, a closed fence, a hidden comment, a
// tracking image. nil when there are none.
func Concealment(text string) []string {
	var out []string
	for _, why := range Instructions(text) {
		if concealment[why] || strings.HasPrefix(why, "holds hidden Unicode") || strings.HasPrefix(why, "spells a word with look-alike") {
			out = append(out, why)
		}
	}
	return out
}

// chatToken finds chat-template control tokens: <|im_start|>, [INST],
// <<SYS>>, <start_of_turn>, </s> and the like.
var chatToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)<\|[a-z_ ]{2,30}\|>|\[/?INST\]|<</?SYS>>|<\s*/?\s*(?:start_of_turn|end_of_turn|im_start|im_end|s)\s*>`)
})

// Neutralise makes stored text inert for a prompt: hidden characters
// (zero-width, bidi, tag block) are removed and chat-template tokens are
// rewritten as plain words ("<|im_start|>" becomes "(chat token im_start)"),
// so no stored text can reorder what a reader sees or pose as a turn of
// the conversation. Text without either is returned as is.
func Neutralise(text string) string {
	clean := true
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= 0x80 || c == '<' || c == '[' {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var b strings.Builder
	for _, r := range text {
		if !Hidden(r) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if !strings.ContainsAny(s, "<[") {
		return s
	}
	return chatToken().ReplaceAllStringFunc(s, func(t string) string {
		name := strings.ToLower(strings.Trim(t, "<>|[]/ "))
		if strings.Contains(t, "/") {
			name = "/" + name
		}
		return "(chat token " + name + ")"
	})
}
