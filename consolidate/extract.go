package consolidate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/consolidate/transcript"
	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/redact"
	"github.com/memctl/memctl/templates"
)

// DigestSchema is the JSON schema of a digest answer.
var DigestSchema = json.RawMessage(`{
  "type": "object",
  "properties": {"digest": {"type": "string"}},
  "required": ["digest"],
  "additionalProperties": false
}`)

// CandidateSchema is the JSON schema of the extraction answer.
var CandidateSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "candidates": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "category": {"type": "string"},
          "content": {"type": "string"},
          "source": {"type": "string", "enum": ["user_explicit", "inference", "session_summary", "tool"]},
          "scope": {"type": "array", "items": {"type": "string"}},
          "confidence": {"type": "number"},
          "turns": {"type": "array", "items": {"type": "integer"}}
        },
        "required": ["category", "content", "source", "scope", "confidence", "turns"],
        "additionalProperties": false
      }
    }
  },
  "required": ["candidates"],
  "additionalProperties": false
}`)

// Schema names of the extraction requests (the fake LLM answers by them).
const (
	DigestSchemaName    = "memctl_digest"
	CandidateSchemaName = "memctl_candidates"
)

// Extraction defaults, the seed's section 3.2.
const (
	DefaultMinConfidence  = 0.7
	DefaultDialogueTokens = 2000
	DefaultToolTokens     = 1000
	DefaultChunkTokens    = 8000
)

// Per-turn caps before chunking: a tool result may hold a whole file, and
// its head says what it was.
const (
	maxTextTurn   = 4000
	maxToolCall   = 400
	maxToolResult = 800
	maxCoreBytes  = 16 << 10
	maxRefTurns   = 8
)

// Extractor distils session turns into candidate memories: a dialogue
// digest and a tool-call digest first (chunked and reduced so any length
// fits the model), then candidates in the entry schema with the current
// core memory in the prompt.
type Extractor struct {
	Completer Completer
	MemDir    string // template overrides
	Config    *mdmem.Config
	// Targets in tokens (estimated as bytes/4); zero means the default.
	DialogueTokens, ToolTokens, ChunkTokens int
	MinConfidence                           float64
	Scopes                                  []string // scopes the model may give; other scopes are dropped
	RetryBase                               time.Duration
	Log                                     func(format string, args ...any)
	// MaxCalls and MaxTokens cap the run's LLM calls and tokens
	// (ErrExtractCap past them); 0 = no cap.
	MaxCalls, MaxTokens int
	// Digests, when set, keeps each chunk's digest: a run that stops (its
	// cap, the deadline) leaves them for the next, which goes on from
	// there instead of paying for them again.
	Digests DigestCache
}

// DigestCache keeps chunk digests by a key of what was digested.
type DigestCache interface {
	Get(key string) (string, bool)
	Put(ctx context.Context, key, digest string) error
}

// ErrExtractCap is the run reaching extract.max_calls or max_tokens.
var ErrExtractCap = errors.New("this run reached its cap")

// Proposal is one candidate the model proposed, with the turns it cited
// and, if it was not kept, why.
type Proposal struct {
	Candidate *mdmem.Candidate `json:"candidate"`
	Turns     []int            `json:"turns"`
	Dropped   string           `json:"dropped,omitempty"`
	// Lowered says why the model's user_explicit became inference: the
	// person's typed turns do not hold what the candidate says.
	Lowered string `json:"lowered,omitempty"`
	// Secret is set when the candidate was dropped for holding a secret:
	// its content is then withheld from every report.
	Secret bool `json:"-"`
}

// MarshalJSON prints the candidate as its JSON view (candidate_id, lists
// always present), as every command's output does.
func (p *Proposal) MarshalJSON() ([]byte, error) {
	turns := p.Turns
	if turns == nil {
		turns = []int{}
	}
	var c *mdmem.CandidateJSON
	if p.Candidate != nil {
		j := p.Candidate.JSON()
		c = &j
	}
	return mdmem.MarshalNoEscape(struct {
		Candidate *mdmem.CandidateJSON `json:"candidate"`
		Turns     []int                `json:"turns"`
		Dropped   string               `json:"dropped,omitempty"`
		Lowered   string               `json:"lowered,omitempty"`
	}{c, turns, p.Dropped, p.Lowered})
}

// Extraction is what one extraction produced.
type Extraction struct {
	DialogueDigest string      `json:"dialogue_digest"`
	ToolDigest     string      `json:"tool_digest"`
	Proposals      []*Proposal `json:"proposals"`
	Usage          Usage       `json:"usage"`
}

func (x *Extractor) logf(format string, args ...any) {
	if x.Log != nil {
		x.Log(format, args...)
	}
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// estTokens estimates tokens as bytes/4, as the usage fallback does.
func estTokens(s string) int { return (len(s) + 3) / 4 }

// clip keeps the head and a little of the tail of s within max bytes, cut
// at rune boundaries.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	h := s[:head]
	for !utf8.ValidString(h) && len(h) > 0 {
		h = h[:len(h)-1]
	}
	t := s[len(s)-tail:]
	for !utf8.ValidString(t) && len(t) > 0 {
		t = t[1:]
	}
	return h + fmt.Sprintf(" […%d bytes…] ", len(s)-len(h)-len(t)) + t
}

// renderTurns splits turns into dialogue lines and tool lines "[tN] role:
// text". Subagent (sidechain) turns are the agent's own work: they go with
// the tool calls.
func renderTurns(turns []transcript.Turn) (dialogue, tools []string) {
	for _, t := range turns {
		raw := t.Text
		if t.Kind == transcript.KindToolCall {
			// A tool's input is JSON: a secret in an escaped string
			// ("-p\"S3cret\"") is found only once it is unescaped.
			if flat, ok := transcript.FlatJSON(raw); ok {
				raw = flat
			}
		}
		text := maskSecrets(strings.Join(strings.Fields(raw), " "))
		switch {
		case t.Kind == transcript.KindToolCall:
			tools = append(tools, fmt.Sprintf("[t%d] call %s: %s", t.N, t.Name, clip(text, maxToolCall)))
		case t.Kind == transcript.KindToolResult:
			tools = append(tools, fmt.Sprintf("[t%d] result: %s", t.N, clip(text, maxToolResult)))
		case t.Sidechain:
			tools = append(tools, fmt.Sprintf("[t%d] subagent %s: %s", t.N, t.Role, clip(text, maxTextTurn)))
		default:
			dialogue = append(dialogue, fmt.Sprintf("[t%d] %s: %s", t.N, speaker(t), clip(text, maxTextTurn)))
		}
	}
	return dialogue, tools
}

// speaker names who said a dialogue turn: "user" only for the person's
// own typed words, so the model is never told that a notification, a
// command's output or a summary is the user speaking.
func speaker(t transcript.Turn) string {
	if t.Role == "user" && !t.Person {
		return transcript.RoleHarness
	}
	return t.Role
}

// maskSecrets replaces what looks like a secret (package redact's
// detectors, on normalised text) with [REDACTED:<kind>] before the text
// goes to the model: a transcript's tool output often holds keys and tokens.
func maskSecrets(s string) string {
	out, _ := redact.Redact(s)
	return out
}

// pack groups lines into chunks of at most maxBytes (a longer line is a
// chunk of its own).
func pack(lines []string, maxBytes int) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, l := range lines {
		if size+len(l)+1 > maxBytes && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, l)
		size += len(l) + 1
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Extract distils the turns into proposals; core lists the existing core
// memory ("- [id] text" lines) so that known facts are not proposed again.
// A proposal may cite only the turns given; sessionID goes into its refs.
func (x *Extractor) Extract(ctx context.Context, turns []transcript.Turn, core []string, sessionID string) (*Extraction, error) {
	out := &Extraction{}
	if len(turns) == 0 {
		return out, nil
	}
	if d := x.Config.LLM.Deadline.Duration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	dialogue, tools := renderTurns(turns)
	var err error
	if out.DialogueDigest, err = x.digest(ctx, "the dialogue", false, dialogue, orDefault(x.DialogueTokens, DefaultDialogueTokens), &out.Usage); err != nil {
		return out, err
	}
	if out.ToolDigest, err = x.digest(ctx, "the tool calls and their results", true, tools, orDefault(x.ToolTokens, DefaultToolTokens), &out.Usage); err != nil {
		return out, err
	}
	if strings.TrimSpace(out.DialogueDigest+out.ToolDigest) == "" {
		return out, nil
	}
	out.Proposals, err = x.candidates(ctx, out, core, newTurnIndex(turns), sessionID)
	return out, err
}

// digest condenses lines to about target tokens: verbatim when they fit,
// else chunk by chunk, then the chunk digests again, until one is left.
func (x *Extractor) digest(ctx context.Context, kind string, tool bool, lines []string, target int, u *Usage) (string, error) {
	if len(lines) == 0 {
		return "", nil
	}
	if text := strings.Join(lines, "\n"); estTokens(text) <= target {
		return text, nil // a short session needs no summary
	}
	chunkBytes := 4 * max(orDefault(x.ChunkTokens, DefaultChunkTokens), 3*target)
	// A digest longer than 1.5× its target is cut, so every chunk of
	// digests holds at least two of them and each level shrinks the
	// input: the reduction ends.
	maxDigest := target * 4 * 3 / 2
	for level := 0; ; level++ {
		chunks := pack(lines, chunkBytes)
		var outs []string
		for i, c := range chunks {
			x.logf("extract: digest of %s, level %d, chunk %d/%d", kind, level+1, i+1, len(chunks))
			d, err := x.summarize(ctx, kind, tool, strings.Join(c, "\n"), target, u)
			if err != nil {
				return "", err
			}
			if d = strings.TrimSpace(d); d != "" {
				outs = append(outs, clip(d, maxDigest))
			}
		}
		if len(outs) <= 1 {
			return strings.Join(outs, "\n"), nil
		}
		lines = outs
		if level >= 16 {
			return "", errors.New("the digest does not converge (the model's digests do not shrink)")
		}
	}
}

// execTemplate loads the prompt template name (the memory's own, else
// the built-in one) and renders it with data.
func execTemplate(memDir, name string, data any) (string, error) {
	src, err := templates.Load(memDir, name)
	if err != nil {
		return "", err
	}
	return renderTemplate(name, src, data)
}

// renderTemplate renders the template source src, named name in errors,
// with data.
func renderTemplate(name, src string, data any) (string, error) {
	t, err := template.New(name).Parse(src)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	return b.String(), nil
}

func (x *Extractor) summarize(ctx context.Context, kind string, tool bool, text string, target int, u *Usage) (string, error) {
	sys, err := execTemplate(x.MemDir, "extract-digest.tmpl", map[string]any{"Kind": kind, "Tool": tool, "Tokens": target})
	if err != nil {
		return "", err
	}
	key := digestKey(sys, text)
	if x.Digests != nil {
		if d, ok := x.Digests.Get(key); ok {
			return d, nil // digested by an earlier run
		}
	}
	d, err := x.summarizeNow(ctx, sys, text, u)
	if err == nil && x.Digests != nil {
		err = x.Digests.Put(ctx, key, d)
	}
	return d, err
}

// digestKey names a digest by the prompt and the text it digested.
func digestKey(sys, text string) string {
	h := sha256.Sum256([]byte(sys + "\x00" + text))
	return hex.EncodeToString(h[:16])
}

// summarizeNow asks the model for the digest of one chunk.
func (x *Extractor) summarizeNow(ctx context.Context, sys, text string, u *Usage) (string, error) {
	req := Request{System: sys, User: "Session part:\n" + text + "\n\nReturn the JSON object with \"digest\" only.", SchemaName: DigestSchemaName, Schema: DigestSchema}
	var ans struct {
		Digest *string `json:"digest"`
	}
	if err := x.ask(ctx, req, u, func(s string) error {
		if err := json.Unmarshal([]byte(extractJSON(s)), &ans); err != nil || ans.Digest == nil {
			return fmt.Errorf("%w: no \"digest\" string", errUnreadable)
		}
		return nil
	}); err != nil {
		return "", err
	}
	return *ans.Digest, nil
}

// rawCandidate is a candidate as the model writes it.
type rawCandidate struct {
	Category   string          `json:"category"`
	Content    string          `json:"content"`
	Source     string          `json:"source"`
	Scope      mdmem.Strings   `json:"scope"`
	Confidence *float64        `json:"confidence"`
	Turns      json.RawMessage `json:"turns"`
}

var extractSources = map[string]bool{"user_explicit": true, "inference": true, "session_summary": true, "tool": true}

func (x *Extractor) candidates(ctx context.Context, ex *Extraction, core []string, ti *turnIndex, sessionID string) ([]*Proposal, error) {
	sys, err := execTemplate(x.MemDir, "extract-candidates.tmpl", map[string]any{"Categories": strings.Join(mdmem.CategoryNames(), ", "), "Scopes": x.Scopes})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("Existing memory (core profile):\n")
	coreText := strings.Join(core, "\n")
	if coreText == "" {
		coreText = "(empty)"
	}
	b.WriteString(clip(coreText, maxCoreBytes))
	b.WriteString("\n\nSession summary, dialogue:\n")
	b.WriteString(orNone(ex.DialogueDigest))
	b.WriteString("\n\nSession summary, tool calls:\n")
	b.WriteString(orNone(ex.ToolDigest))
	b.WriteString("\n\nReturn the JSON object with \"candidates\" only.")
	req := Request{System: sys, User: b.String(), SchemaName: CandidateSchemaName, Schema: CandidateSchema}
	var raws []rawCandidate
	if err := x.ask(ctx, req, &ex.Usage, func(s string) error {
		var ans struct {
			Candidates *[]rawCandidate `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(extractJSON(s)), &ans); err != nil || ans.Candidates == nil {
			var list []rawCandidate
			if json.Unmarshal([]byte(extractJSON(s)), &list) != nil {
				return fmt.Errorf("%w: no \"candidates\" list", errUnreadable)
			}
			raws = list
			return nil
		}
		raws = *ans.Candidates
		return nil
	}); err != nil {
		return nil, err
	}
	minConf := x.MinConfidence
	allowed := map[string]bool{}
	for _, s := range x.Scopes {
		allowed[s] = true
	}
	var out []*Proposal
	for _, r := range raws {
		p := &Proposal{Candidate: &mdmem.Candidate{Content: mdmem.OneLine(r.Content), Category: strings.ToLower(strings.TrimSpace(r.Category)),
			Source: strings.TrimSpace(r.Source), Confidence: r.Confidence}}
		out = append(out, p)
		turns, _ := parseIDs(r.Turns)
		for _, n := range turns {
			if ti.valid[n] && len(p.Turns) < maxRefTurns && !containsInt(p.Turns, n) {
				p.Turns = append(p.Turns, n)
			}
		}
		sort.Ints(p.Turns)
		c := p.Candidate
		if !extractSources[c.Source] {
			c.Source = "session_summary"
		}
		if c.Source == "user_explicit" {
			// The model's label can only lower authority: the person's
			// own typed turns must hold what the candidate says.
			if why := ti.unsupported(c.Content, p.Turns); why != "" {
				c.Source = "inference"
				p.Lowered = why
			} else {
				c.Seen = mdmem.SeenTyped
			}
		}
		for _, s := range r.Scope {
			if s = strings.TrimSpace(s); s != "" && allowed[s] {
				c.Scope = append(c.Scope, s)
			}
		}
		if len(c.Scope) == 0 && len(x.Scopes) > 0 {
			// none, or a scope not offered: the session's own (the hook's
			// project), never global by default
			c.Scope = append(c.Scope, x.Scopes...)
		}
		if sessionID != "" {
			c.Refs = append(c.Refs, "session:"+mdmem.TrailerValue(sessionID))
		}
		for _, n := range p.Turns {
			c.Refs = append(c.Refs, "turn:"+strconv.Itoa(n))
		}
		switch {
		case c.Confidence == nil:
			p.Dropped = "no confidence given"
		case *c.Confidence < minConf:
			p.Dropped = fmt.Sprintf("confidence %.2f below %.2f", *c.Confidence, minConf)
		case len(turns) > 0 && len(p.Turns) == 0:
			p.Dropped = "cites only turns that are not in this part of the transcript"
		}
	}
	return out, nil
}

func containsInt(s []int, n int) bool {
	for _, v := range s {
		if v == n {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// ask calls the model with retries (transport errors with backoff, an
// unreadable answer once) and passes the answer text to parse.
func (x *Extractor) ask(ctx context.Context, req Request, u *Usage, parse func(string) error) error {
	st := &LLMStage{Config: x.Config, RetryBase: x.RetryBase}
	retries := x.Config.Consolidate.MaxRetries
	parseRetries := 1
	for attempt := 0; ; attempt++ {
		if x.MaxCalls > 0 && u.Calls >= x.MaxCalls {
			return fmt.Errorf("%w of %d LLM calls (extract.max_calls)", ErrExtractCap, x.MaxCalls)
		}
		if x.MaxTokens > 0 && u.PromptTokens+u.CompletionTokens >= x.MaxTokens {
			return fmt.Errorf("%w of %d tokens (extract.max_tokens)", ErrExtractCap, x.MaxTokens)
		}
		actx, cancel := context.WithTimeout(ctx, st.timeout())
		resp, err := x.Completer.Complete(actx, req)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		u.Calls++
		if err == nil {
			st.count(u, req, resp)
			if len(resp.Text) > maxAnswerBytes {
				err = fmt.Errorf("%w: %d bytes, over the limit of %d", errUnreadable, len(resp.Text), maxAnswerBytes)
			} else {
				err = parse(resp.Text)
			}
			if err == nil {
				return nil
			}
			u.Failed++
			if errors.Is(err, errUnreadable) && parseRetries > 0 {
				parseRetries--
				x.logf("LLM answer unreadable (%v); asking again", err)
				continue
			}
			return err
		}
		u.Failed++
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				u.DeadlineHit = true
				return fmt.Errorf("the LLM deadline (llm.deadline = %v) was reached: %w", x.Config.LLM.Deadline.Duration, err)
			}
			return ctx.Err()
		}
		if !(timedOut || retryable(err)) || attempt >= retries {
			return fmt.Errorf("LLM call failed after %d attempt(s): %w", attempt+1, err)
		}
		d := st.backoff(attempt)
		x.logf("LLM call failed (%v); retrying in %v", err, d.Round(time.Millisecond))
		if err := st.doSleep(ctx, d); err != nil {
			return err
		}
	}
}
