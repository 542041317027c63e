// Package transcript reads agent session transcripts into turns: Claude
// Code session JSONL, OpenAI chat messages JSON, Codex CLI rollout JSONL
// and plain text or Markdown. It only parses; memctl extract (package
// consolidate) distils the turns into candidate memories.
//
// A turn's number is stable while a transcript grows: the line it starts
// on (JSONL and text) or its 1-based position in the messages array
// (OpenAI JSON). Reading can start at a byte offset a previous read
// stopped at (Result.Next), so a grown transcript is read only for its new
// part.
package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Formats memctl reads. Auto detects one of the others from the content.
const (
	Claude = "claude"
	OpenAI = "openai"
	Codex  = "codex"
	Text   = "text"
	Auto   = "auto"
)

// Names lists the formats a user may give.
var Names = []string{Auto, Claude, OpenAI, Codex, Text}

// Kinds of turn.
const (
	KindText       = "text"        // something said: user, assistant, system, summary
	KindToolCall   = "tool_call"   // the agent called a tool
	KindToolResult = "tool_result" // what the tool returned
)

// Turn is one piece of a session: a message, a tool call or its result.
type Turn struct {
	N         int    // turn number: source line (JSONL, text) or message position (OpenAI JSON)
	Role      string // user, assistant, system, tool, summary
	Kind      string // KindText, KindToolCall, KindToolResult
	Name      string // tool name for tool calls
	Text      string
	Sidechain bool // a subagent's turn (Claude Code isSidechain)
	// Person is set on the turns the person typed: a user message of the
	// main session that is not a tool result, a harness notification,
	// command output, a compaction summary or injected instructions. Only
	// these may back a user_explicit candidate; a Role of "user" alone
	// does not (Claude Code records tool output as user messages).
	Person bool
	Time   time.Time
}

// Result is what a read found.
type Result struct {
	Format    string
	SessionID string // from the records, empty when they carry none
	Cwd       string // working directory the records name, if any
	Turns     []Turn
	// Next is the byte offset to continue from when the file grows: the
	// end of the last complete record read (a torn last line is left for
	// the next read). NextTurn is the number the turn there will get.
	Next     int64
	NextTurn int
	// Skipped counts records of types that carry no dialogue (snapshots,
	// queue operations, unknown types): skipped, never fatal.
	Skipped  int
	Warnings []string

	// ownCalls holds the ids of memctl's own MCP tool calls (Claude
	// Code), whose results are left out with the calls.
	ownCalls map[string]bool
}

// ownToolPrefix starts the name Claude Code gives memctl's MCP tools: what
// they return came out of the memory and must not go back into it.
const ownToolPrefix = "mcp__memctl__"

// LineError is malformed input at a given line (or message, for OpenAI
// JSON).
type LineError struct {
	Line int
	What string
	Err  error
}

// Error names the line and the problem.
func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.What, e.Err)
	}
	return fmt.Sprintf("%s %d: %v", e.What, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// MaxRecord caps one JSONL record (a Claude Code tool result may hold a
// whole file): longer lines are an error, not a memory blow-up.
const MaxRecord = 64 << 20

// Detect guesses the format of a transcript from its name and first bytes.
func Detect(name string, head []byte) string {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(head, " \t\r\n")
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown", ".txt":
		return Text
	}
	if len(t) == 0 {
		return Text
	}
	if t[0] == '[' {
		return OpenAI
	}
	if t[0] != '{' {
		return Text
	}
	line := t
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		line = t[:i]
	}
	var probe struct {
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
		Messages  json.RawMessage `json:"messages"`
		SessionID string          `json:"sessionId"`
		Message   json.RawMessage `json:"message"`
		UUID      string          `json:"uuid"`
		Role      string          `json:"role"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
	}
	if json.Unmarshal(line, &probe) != nil {
		// one JSON document over several lines: an OpenAI messages object
		if bytes.Contains(head, []byte(`"messages"`)) {
			return OpenAI
		}
		return Text
	}
	switch {
	case probe.Messages != nil:
		return OpenAI
	case probe.Payload != nil || codexTypes[probe.Type]:
		return Codex
	case probe.Type == "" && probe.ID != "" && probe.Timestamp != "":
		return Codex // a rollout of 2025 before the typed records: session meta first
	case probe.SessionID != "" || probe.UUID != "" || probe.Message != nil || claudeTypes[probe.Type]:
		return Claude
	case probe.Role != "":
		return OpenAI // JSON Lines of messages
	}
	return Text
}

var codexTypes = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true}
var claudeTypes = map[string]bool{"user": true, "assistant": true, "system": true, "summary": true, "queue-operation": true, "file-history-snapshot": true}

// Read parses a transcript of the given format (not Auto) from r, which
// starts at byte offset from of the file (0 for the whole file; for
// OpenAI JSON, from must be 0: the document is read whole and firstTurn
// numbers the first message to keep). Turns numbered below firstTurn are
// dropped.
func Read(ctx context.Context, r io.Reader, format string, from int64, firstTurn int) (*Result, error) {
	switch format {
	case Claude, Codex:
		return readJSONL(ctx, r, format, from, firstTurn)
	case OpenAI:
		return readOpenAI(ctx, r, firstTurn)
	case Text:
		return readText(ctx, r, from, firstTurn)
	}
	return nil, fmt.Errorf("unknown transcript format %q (known: %s)", format, strings.Join(Names, ", "))
}

// readJSONL reads Claude Code or Codex records line by line.
func readJSONL(ctx context.Context, r io.Reader, format string, from int64, firstTurn int) (*Result, error) {
	res := &Result{Format: format, Next: from, NextTurn: max(firstTurn, 1)}
	br := bufio.NewReaderSize(r, 256<<10)
	off := from
	// Line numbers count from the start of the file; a read that starts
	// later does not know how many lines came before, so the caller
	// passes firstTurn, the number of the first line read.
	n := max(firstTurn, 1) - 1
	for {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line, err := readRecord(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &LineError{Line: n + 1, What: "line", Err: err}
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		n++
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		body := bytes.TrimSpace(line)
		if len(body) == 0 {
			off += int64(len(line))
			res.Next, res.NextTurn = off, n+1
			if errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		var perr error
		if !utf8.Valid(body) {
			perr = errors.New("invalid UTF-8")
		} else if format == Claude {
			perr = claudeRecord(res, n, body)
		} else {
			perr = codexRecord(res, n, body)
		}
		if perr != nil {
			if !complete {
				// A live transcript's last line may be half written:
				// leave it for the next read.
				res.Warnings = append(res.Warnings, fmt.Sprintf("line %d is incomplete (no newline, %v); skipped, it is read once it is whole", n, perr))
				break
			}
			return nil, &LineError{Line: n, What: "line", Err: perr}
		}
		off += int64(len(line))
		res.Next, res.NextTurn = off, n+1
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return res, nil
}

// readRecord reads one line including its newline, up to MaxRecord bytes.
func readRecord(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxRecord {
			return nil, fmt.Errorf("record is longer than %d bytes", MaxRecord)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// claudeRecord reads one record of a Claude Code session file.
func claudeRecord(res *Result, n int, body []byte) error {
	var rec struct {
		Type        string          `json:"type"`
		SessionID   string          `json:"sessionId"`
		Cwd         string          `json:"cwd"`
		Timestamp   string          `json:"timestamp"`
		IsSidechain bool            `json:"isSidechain"`
		IsMeta      bool            `json:"isMeta"`
		Compact     bool            `json:"isCompactSummary"`
		OnlyShown   bool            `json:"isVisibleInTranscriptOnly"`
		ToolResult  json.RawMessage `json:"toolUseResult"`
		Summary     string          `json:"summary"`
		Content     json.RawMessage `json:"content"` // system records
		Message     *struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if res.SessionID == "" && rec.SessionID != "" {
		res.SessionID = rec.SessionID
	}
	if res.Cwd == "" && rec.Cwd != "" {
		res.Cwd = rec.Cwd
	}
	at := parseTime(rec.Timestamp)
	add := func(t Turn) {
		t.N, t.Sidechain, t.Time = n, rec.IsSidechain, at
		if strings.TrimSpace(t.Text) != "" {
			res.Turns = append(res.Turns, t)
		}
	}
	switch rec.Type {
	case "summary":
		add(Turn{Role: "summary", Kind: KindText, Text: rec.Summary})
	case "user", "assistant":
		if rec.Message == nil || rec.IsMeta {
			res.Skipped++
			return nil
		}
		role := rec.Message.Role
		if role == "" {
			role = rec.Type
		}
		if role == "user" && (rec.Compact || rec.OnlyShown) {
			role = "summary" // a compaction summary the harness wrote as a user message
		}
		typed := role == "user" && !rec.IsSidechain && len(rec.ToolResult) == 0
		return claudeContent(res, rec.Message.Content, role, func(t Turn) {
			if t.Role == "user" && t.Kind == KindText {
				t.Person = typed
				t.Role, t.Text, t.Person = personTurn(t.Text, t.Person)
			}
			add(t)
		})
	default: // system, queue-operation, file-history-snapshot, and types to come
		res.Skipped++
	}
	return nil
}

// claudeContent reads message.content: a string or a list of blocks.
// memctl's own MCP calls and their results are left out (counted as
// skipped): the memory's entries are not the session's news.
func claudeContent(res *Result, raw json.RawMessage, role string, add func(Turn)) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("message.content: %w", err)
		}
		add(Turn{Role: role, Kind: KindText, Text: s})
		return nil
	}
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
		Thinking  string          `json:"thinking"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return fmt.Errorf("message.content is neither a string nor a list of blocks: %w", err)
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			add(Turn{Role: role, Kind: KindText, Text: b.Text})
		case "tool_use":
			if strings.HasPrefix(b.Name, ownToolPrefix) {
				if res.ownCalls == nil {
					res.ownCalls = map[string]bool{}
				}
				res.ownCalls[b.ID] = true
				res.Skipped++
				continue
			}
			add(Turn{Role: role, Kind: KindToolCall, Name: b.Name, Text: compactJSON(b.Input)})
		case "tool_result":
			if res.ownCalls[b.ToolUseID] {
				res.Skipped++
				continue
			}
			text := blockText(b.Content)
			if b.IsError {
				text = "error: " + text
			}
			add(Turn{Role: "tool", Kind: KindToolResult, Text: text})
		default:
			// thinking is the model's private reasoning, images and
			// documents carry no text: none of them is dialogue
		}
	}
	return nil
}

// blockText flattens a tool result's content: a string or text blocks.
func blockText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return compactJSON(raw)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// codexRecord reads one line of a Codex CLI rollout file: {timestamp,
// type, payload}. The dialogue is in response_item records; event_msg
// records repeat it for the UI and are skipped.
func codexRecord(res *Result, n int, body []byte) error {
	var rec struct {
		Timestamp string          `json:"timestamp"`
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	at := parseTime(rec.Timestamp)
	switch rec.Type {
	case "session_meta":
		var m struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		}
		if err := json.Unmarshal(rec.Payload, &m); err != nil {
			return fmt.Errorf("session_meta payload: %w", err)
		}
		if res.SessionID == "" {
			res.SessionID = m.ID
		}
		if res.Cwd == "" {
			res.Cwd = m.Cwd
		}
		return nil
	case "response_item":
		return codexItem(res, n, at, rec.Payload)
	case "compacted":
		var c struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(rec.Payload, &c) == nil && strings.TrimSpace(c.Message) != "" {
			res.Turns = append(res.Turns, Turn{N: n, Role: "summary", Kind: KindText, Text: c.Message, Time: at})
		}
		return nil
	}
	if rec.Payload == nil {
		// The rollout format before typed records: a session meta line
		// ({id, timestamp, instructions}), then bare response items and
		// {"record_type": "state"} lines.
		var legacy struct {
			ID         string `json:"id"`
			RecordType string `json:"record_type"`
		}
		_ = json.Unmarshal(body, &legacy)
		switch {
		case rec.Type == "" && legacy.ID != "" && legacy.RecordType == "":
			if res.SessionID == "" {
				res.SessionID = legacy.ID
			}
			return nil
		case rec.Type != "" && legacy.RecordType == "":
			return codexItem(res, n, at, body)
		}
	}
	res.Skipped++ // event_msg, turn_context, and types to come
	return nil
}

func codexItem(res *Result, n int, at time.Time, raw json.RawMessage) error {
	var it struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		Action    json.RawMessage `json:"action"`
		Output    json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return fmt.Errorf("response_item payload: %w", err)
	}
	add := func(t Turn) {
		t.N, t.Time = n, at
		if strings.TrimSpace(t.Text) != "" {
			res.Turns = append(res.Turns, t)
		}
	}
	switch it.Type {
	case "message":
		var parts []string
		for _, c := range it.Content {
			if c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		text := strings.Join(parts, "\n")
		if it.Role == "user" && strings.HasPrefix(strings.TrimSpace(text), "<environment_context>") {
			res.Skipped++ // the harness's own preamble, not the user's words
			return nil
		}
		role, person := it.Role, false
		switch role {
		case "developer":
			role = "system"
		case "user":
			role, text, person = personTurn(text, true)
		}
		add(Turn{Role: role, Kind: KindText, Text: text, Person: person})
	case "function_call", "custom_tool_call":
		args := it.Arguments
		if args == "" {
			args = it.Input
		}
		add(Turn{Role: "assistant", Kind: KindToolCall, Name: it.Name, Text: args})
	case "local_shell_call":
		add(Turn{Role: "assistant", Kind: KindToolCall, Name: "shell", Text: compactJSON(it.Action)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		add(Turn{Role: "tool", Kind: KindToolResult, Text: codexOutput(it.Output)})
	default: // reasoning (private), web_search_call, and types to come
		res.Skipped++
	}
	return nil
}

// codexOutput reads a tool output: a string (sometimes itself JSON with
// an "output" field) or an object.
func codexOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var o struct {
			Content string `json:"content"`
			Output  string `json:"output"`
		}
		if json.Unmarshal(raw, &o) == nil && (o.Content != "" || o.Output != "") {
			return o.Content + o.Output
		}
		return blockText(raw)
	}
	var inner struct {
		Output string `json:"output"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &inner) == nil && inner.Output != "" {
		return inner.Output
	}
	return s
}

// maxOpenAIBytes caps an OpenAI messages document, read whole.
const maxOpenAIBytes = 256 << 20

// readOpenAI reads an OpenAI chat messages document: an array of messages,
// an object with a "messages" array, or JSON Lines of messages.
func readOpenAI(ctx context.Context, r io.Reader, firstTurn int) (*Result, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOpenAIBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxOpenAIBytes {
		return nil, fmt.Errorf("OpenAI messages document is larger than %d MiB", maxOpenAIBytes>>20)
	}
	res := &Result{Format: OpenAI, Next: int64(len(data)), NextTurn: max(firstTurn, 1)}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	t := bytes.TrimSpace(data)
	var msgs []json.RawMessage
	switch {
	case len(t) == 0:
		return res, nil
	case t[0] == '[':
		if err := json.Unmarshal(t, &msgs); err != nil {
			return nil, &LineError{Line: lineOf(t, err), What: "line", Err: fmt.Errorf("invalid JSON: %w", err)}
		}
	default:
		var doc struct {
			Messages []json.RawMessage `json:"messages"`
			ID       string            `json:"id"`
		}
		if err := json.Unmarshal(t, &doc); err == nil && doc.Messages != nil {
			msgs, res.SessionID = doc.Messages, doc.ID
			break
		}
		// JSON Lines of messages
		for i, l := range bytes.Split(t, []byte("\n")) {
			l = bytes.TrimSpace(l)
			if len(l) == 0 {
				continue
			}
			if !json.Valid(l) {
				return nil, &LineError{Line: i + 1, What: "line", Err: errors.New("invalid JSON: not an OpenAI messages array, object or JSON Lines")}
			}
			msgs = append(msgs, l)
		}
	}
	res.NextTurn = max(res.NextTurn, len(msgs)+1)
	for i, raw := range msgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := i + 1
		if n < firstTurn {
			continue
		}
		var m struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &LineError{Line: n, What: "message", Err: err}
		}
		if m.Role == "" {
			return nil, &LineError{Line: n, What: "message", Err: errors.New(`no "role"`)}
		}
		text := blockText(m.Content)
		if string(bytes.TrimSpace(m.Content)) == "null" {
			text = ""
		}
		switch m.Role {
		case "tool", "function":
			res.Turns = append(res.Turns, Turn{N: n, Role: "tool", Kind: KindToolResult, Name: m.Name, Text: text})
		default:
			role := m.Role
			if role == "developer" {
				role = "system"
			}
			person := false
			if role == "user" {
				role, text, person = personTurn(text, true)
			}
			if strings.TrimSpace(text) != "" {
				res.Turns = append(res.Turns, Turn{N: n, Role: role, Kind: KindText, Text: text, Person: person})
			}
			for _, tc := range m.ToolCalls {
				res.Turns = append(res.Turns, Turn{N: n, Role: role, Kind: KindToolCall, Name: tc.Function.Name, Text: tc.Function.Arguments})
			}
		}
	}
	return res, nil
}

// lineOf returns the line of a JSON syntax error in data, or 0.
func lineOf(data []byte, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n")) + 1
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end") {
		return bytes.Count(data, []byte("\n")) + 1
	}
	return 0
}

// readText reads plain text or Markdown: each paragraph (lines up to a
// blank line) is one turn, numbered by its first line. Speaker prefixes
// ("User:", "Assistant:") name the role; otherwise it is "text".
func readText(ctx context.Context, r io.Reader, from int64, firstTurn int) (*Result, error) {
	res := &Result{Format: Text, Next: from, NextTurn: max(firstTurn, 1)}
	br := bufio.NewReaderSize(r, 64<<10)
	n := max(firstTurn, 1) - 1
	off := from
	var para []string
	start := 0
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := strings.Join(para, "\n")
		role := "text"
		lower := strings.ToLower(text)
		for _, p := range []struct{ prefix, role string }{{"user:", "user"}, {"human:", "user"}, {"assistant:", "assistant"}, {"ai:", "assistant"}, {"system:", "system"}} {
			if strings.HasPrefix(lower, p.prefix) {
				role, text = p.role, strings.TrimSpace(text[len(p.prefix):])
				break
			}
		}
		person := false
		if role == "user" {
			role, text, person = personTurn(text, true)
		}
		res.Turns = append(res.Turns, Turn{N: start, Role: role, Kind: KindText, Text: text, Person: person})
		para = nil
	}
	for {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line, err := readRecord(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &LineError{Line: n + 1, What: "line", Err: err}
		}
		if len(line) == 0 {
			break
		}
		n++
		if !utf8.Valid(line) {
			return nil, &LineError{Line: n, What: "line", Err: errors.New("invalid UTF-8; memctl reads text as UTF-8")}
		}
		s := strings.TrimRight(string(line), "\r\n")
		if strings.TrimSpace(s) == "" {
			flush()
		} else {
			if len(para) == 0 {
				start = n
			}
			para = append(para, s)
		}
		off += int64(len(line))
		if errors.Is(err, io.EOF) {
			break
		}
	}
	flush()
	res.Next, res.NextTurn = off, n+1
	return res, nil
}
