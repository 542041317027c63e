//go:build e2e

package main

// The real-client test: Claude Code (installed from the npm registry by
// testdata/e2e/run.sh, which `make e2e` runs) with memctl's hooks and MCP
// server, against a fake Anthropic Messages API on 127.0.0.1. Scenarios
// are testdata/e2e/*.txtar; they need `claude` on PATH.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestE2EClaudeCode runs the scenarios of testdata/e2e with the real
// Claude Code.
func TestE2EClaudeCode(t *testing.T) {
	if _, err := exec.LookPath("claude"); err != nil {
		t.Fatal("claude is not on PATH: run testdata/e2e/run.sh (make e2e), which installs it from the npm registry")
	}
	cmds := map[string]func(*testscript.TestScript, bool, []string){"fakeanthropic": startFakeAnthropic, "lastrequest": lastRequest}
	for k, v := range scriptCmds {
		cmds[k] = v
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "e2e"),
		RequireExplicitExec: true,
		Cmds:                cmds,
		Setup: func(env *testscript.Env) error {
			if err := scriptSetup(env); err != nil {
				return err
			}
			// Claude Code: no traffic but to the fake API, no updater.
			for k, v := range map[string]string{
				"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_COST_WARNINGS": "1",
			} {
				env.Setenv(k, v)
			}
			return nil
		},
	})
}

// startFakeAnthropic is the scenario command `fakeanthropic <log>`: it
// serves the Anthropic Messages API on 127.0.0.1, sets ANTHROPIC_BASE_URL
// and ANTHROPIC_API_KEY, and appends every request body to <log> (one
// JSON object a line). When a request offers memctl's memory_search tool
// and holds no tool result yet, the model calls memory_search with the
// person's prompt; once a result is there it answers with that result on
// one line; any other request gets "ok".
func startFakeAnthropic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakeanthropic <request-log>")
	}
	logf, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	var mu sync.Mutex
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			if strings.HasSuffix(r.URL.Path, "/count_tokens") {
				writeJSONBody(w, map[string]any{"input_tokens": 100})
				return
			}
			http.NotFound(w, r)
			return
		}
		var req fakeMessagesRequest
		var raw json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil || json.Unmarshal(raw, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		logf.Write(append(append([]byte{}, raw...), '\n'))
		mu.Unlock()
		answerMessages(w, &req)
	})}
	go srv.Serve(ln)
	ts.Defer(func() {
		srv.Close()
		logf.Close()
	})
	ts.Setenv("ANTHROPIC_BASE_URL", "http://"+ln.Addr().String())
	ts.Setenv("ANTHROPIC_API_KEY", "sk-ant-fake-e2e")
}

// lastRequest is the scenario command `lastrequest <log> <regexp> <n>`:
// in the last request of the log that offered memctl's tools (the main
// model's, not a side request's), regexp matches n times.
func lastRequest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: lastrequest <request-log> <regexp> <n>")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	last := ""
	for _, l := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if strings.Contains(l, `"name":"mcp__memctl__memory_search"`) {
			last = l
		}
	}
	if last == "" {
		ts.Fatalf("no request offered memctl's tools")
	}
	// The JSON's own escapes: match the text as the model reads it.
	var body any
	ts.Check(json.Unmarshal([]byte(last), &body))
	text := strings.Join(texts(body), "\n")
	if got := len(re.FindAllStringIndex(text, -1)); got != want {
		ts.Fatalf("the last request holds %q %d times, want %d", args[1], got, want)
	}
}

// texts lists every string in a decoded JSON value.
func texts(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, texts(x)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, texts(x)...)
		}
		return out
	}
	return nil
}

// fakeMessagesRequest holds the fields of a Messages request the fake
// model reads.
type fakeMessagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// fakeBlock is one content block of a message.
type fakeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// blocks reads a message's content: a string or a list of blocks.
func blocks(raw json.RawMessage) []fakeBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []fakeBlock{{Type: "text", Text: s}}
	}
	var bs []fakeBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// answerMessages is the fake model's turn (see startFakeAnthropic).
func answerMessages(w http.ResponseWriter, req *fakeMessagesRequest) {
	const search = "mcp__memctl__memory_search"
	offered := false
	for _, t := range req.Tools {
		offered = offered || t.Name == search
	}
	answer := fakeBlock{Type: "text", Text: "ok"}
	stop := "end_turn"
	if offered {
		// The person's prompt is the last user text that is not a
		// <system-reminder>; hook context comes in other messages.
		var prompt, result string
		found := false
		for _, m := range req.Messages {
			for _, b := range blocks(m.Content) {
				switch {
				case b.Type == "tool_result":
					found, result = true, ""
					for _, c := range blocks(b.Content) {
						result += c.Text
					}
				case b.Type == "text" && m.Role == "user" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<"):
					prompt = b.Text
				}
			}
		}
		switch {
		case found:
			answer = fakeBlock{Type: "text", Text: "memory_search returned: " + strings.Join(strings.Fields(result), " ")}
		case prompt != "":
			in, _ := json.Marshal(map[string]string{"query": prompt})
			answer, stop = fakeBlock{Type: "tool_use", ID: "toolu_e2e_1", Name: search, Input: in}, "tool_use"
		}
	}
	if !req.Stream {
		writeJSONBody(w, map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": req.Model,
			"content": []fakeBlock{answer}, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": 100, "output_tokens": 10}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	event := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	if answer.Type == "tool_use" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": answer.ID, "name": answer.Name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(answer.Input)}})
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": answer.Text}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
	bw.Flush()
}

// writeJSONBody answers with v as JSON.
func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
