package transcript

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func turnsString(ts []Turn) string {
	var b strings.Builder
	for _, t := range ts {
		side := ""
		if t.Sidechain {
			side = " side"
		}
		fmt.Fprintf(&b, "%d %s/%s%s %s: %s\n", t.N, t.Role, t.Kind, side, t.Name, t.Text)
	}
	return b.String()
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, head, want string
	}{
		{"s.jsonl", `{"type":"user","sessionId":"x","message":{"role":"user","content":"hi"}}`, Claude},
		{"s.jsonl", `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, Claude},
		{"r.jsonl", `{"timestamp":"2025-10-29T00:59:38Z","type":"session_meta","payload":{"id":"abc"}}`, Codex},
		{"r.jsonl", `{"id":"0c1f","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}`, Codex},
		{"c.json", `[{"role":"user","content":"hi"}]`, OpenAI},
		{"c.json", "{\n  \"messages\": [\n", OpenAI},
		{"c.json", `{"messages":[{"role":"user","content":"hi"}]}`, OpenAI},
		{"c.jsonl", `{"role":"user","content":"hi"}`, OpenAI},
		{"notes.md", `{"type":"user"}`, Text},
		{"notes", "User: hello\n", Text},
		{"empty", "", Text},
	} {
		if got := Detect(tc.name, []byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q, %q) = %s, want %s", tc.name, tc.head, got, tc.want)
		}
	}
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, format, in string
		from             int64
		first            int
		want             string
		session          string
		next             int64
		warn             string
	}{
		{
			name: "claude blocks, sidechain, meta and unknown types", format: Claude,
			in: `{"type":"user","sessionId":"s1","message":{"role":"user","content":"use tabs"}}
{"type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"secret plan"},{"type":"text","text":"ok"},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"a.go"}],"is_error":true}]}}
{"type":"user","isMeta":true,"message":{"role":"user","content":"<command-name>/clear</command-name>"}}
{"type":"brand-new","x":1}
{"type":"summary","summary":"Tabs chosen"}
`,
			want:    "1 user/text : use tabs\n2 assistant/text side : ok\n2 assistant/tool_call side Bash: {\"command\":\"ls\"}\n3 tool/tool_result : error: a.go\n6 summary/text : Tabs chosen\n",
			session: "s1",
		},
		{
			name: "claude: memctl's own MCP calls and results left out, other tools kept", format: Claude,
			in: `{"type":"user","sessionId":"s2","message":{"role":"user","content":"when is the cache warmed?"}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"mcp__memctl__memory_search","input":{"query":"cache"}},{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"crontab -l"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"[{\"id\":\"fact-001\"}]"}]},{"type":"tool_result","tool_use_id":"toolu_2","content":"0 6 * * * warm"}]}}
`,
			want:    "1 user/text : when is the cache warmed?\n2 assistant/tool_call Bash: {\"command\":\"crontab -l\"}\n3 tool/tool_result : 0 6 * * * warm\n",
			session: "s2",
		},
		{
			name: "claude torn last line", format: Claude,
			in:   "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n{\"type\":\"user\",\"mess",
			want: "1 user/text : a\n", next: 56, warn: "line 2 is incomplete",
		},
		{
			name: "claude from an offset", format: Claude, from: 56, first: 2,
			in:   "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"b\"}}\n",
			want: "2 user/text : b\n", next: 112,
		},
		{
			name: "codex rollout", format: Codex,
			in: `{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{"id":"019a","cwd":"/tmp/p"}}
{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}
{"timestamp":"2025-10-29T00:59:38.317Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"what is 2+2"}]}}
{"timestamp":"2025-10-29T00:59:38.317Z","type":"event_msg","payload":{"type":"user_message","message":"what is 2+2"}}
{"timestamp":"2025-10-29T00:59:39.000Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}
{"timestamp":"2025-10-29T00:59:39.100Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}
{"timestamp":"2025-10-29T00:59:39.200Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a.go\\n\",\"metadata\":{\"exit_code\":0}}"}}
{"timestamp":"2025-10-29T00:59:39.300Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"4"}]}}
{"timestamp":"2025-10-29T00:59:39.400Z","type":"turn_context","payload":{"model":"gpt-5"}}
`,
			want:    "3 user/text : what is 2+2\n6 assistant/tool_call shell: {\"command\":[\"ls\"]}\n7 tool/tool_result : a.go\n\n8 assistant/text : 4\n",
			session: "019a",
		},
		{
			name: "codex rollout before typed records", format: Codex,
			in: `{"id":"0c1f","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"use pnpm"}]}
{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}
{"type":"reasoning","summary":[]}
`,
			want:    "3 user/text : use pnpm\n4 assistant/tool_call shell: {}\n",
			session: "0c1f",
		},
		{
			name: "openai array with tool calls", format: OpenAI,
			in:   `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"42"}]`,
			want: "1 system/text : be brief\n2 user/text : hi\n3 assistant/tool_call f: {}\n4 tool/tool_result : 42\n",
		},
		{
			name: "openai object from message 3", format: OpenAI, first: 3,
			in:   `{"id":"c9","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"text","text":"c"}]}]}`,
			want: "3 user/text : c\n", session: "c9",
		},
		{
			name: "text paragraphs and speakers", format: Text,
			in:   "# Notes\n\nUser: I like tea\nwith milk\n\nAssistant: noted\n",
			want: "1 text/text : # Notes\n3 user/text : I like tea\nwith milk\n6 assistant/text : noted\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(context.Background(), strings.NewReader(tc.in), tc.format, tc.from, tc.first)
			if err != nil {
				t.Fatal(err)
			}
			if got := turnsString(res.Turns); got != tc.want {
				t.Errorf("turns:\n%s\nwant:\n%s", got, tc.want)
			}
			if res.SessionID != tc.session {
				t.Errorf("session %q, want %q", res.SessionID, tc.session)
			}
			if tc.next != 0 && res.Next != tc.next {
				t.Errorf("next %d, want %d", res.Next, tc.next)
			}
			if w := strings.Join(res.Warnings, "; "); tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, format, in string
		line             int
		want             string
	}{
		{"claude bad middle line", Claude, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n{oops}\n{\"type\":\"summary\",\"summary\":\"x\"}\n", 2, "invalid JSON"},
		{"claude content of the wrong type", Claude, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":42}}\n", 1, "neither a string nor a list"},
		{"codex bad payload", Codex, "{\"type\":\"response_item\",\"payload\":\"x\"}\n", 1, "response_item payload"},
		{"invalid UTF-8", Claude, "{\"type\":\"summary\",\"summary\":\"\xff\"}\n", 1, "invalid UTF-8"},
		{"openai truncated", OpenAI, "[{\"role\":\"user\",\n\"content\":\"a\"}", 2, "invalid JSON"},
		{"openai message without role", OpenAI, `[{"content":"a"}]`, 1, `no "role"`},
		{"text invalid UTF-8", Text, "ok\n\xfe\n", 2, "invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(context.Background(), strings.NewReader(tc.in), tc.format, 0, 1)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v, want a LineError", err)
			}
			if le.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q at line %d, want %q at line %d", err, le.Line, tc.want, tc.line)
			}
		})
	}
	if _, err := Read(context.Background(), strings.NewReader(""), "yaml", 0, 1); err == nil {
		t.Error("unknown format accepted")
	}
}
