package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession starts memctl's MCP server on a fresh memory holding two
// consolidated entries and connects the SDK's own client to it in
// process.
func mcpSession(t *testing.T, opts *mcpOptions) (*mcp.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"MEMCTL_DIR": dir, "HOME": t.TempDir()}
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", dir},
		{"add", "Example code uses Python 3.11", "--category", "preference"},
		{"add", "The report cache is warmed at 06:00", "--category", "fact", "--topic", "ops"},
		{"consolidate", "--no-llm"},
	} {
		f, _, errOut := testFactory(env, "")
		if code := Run(ctx, f, args); code != 0 {
			t.Fatalf("memctl %v: exit %d: %s", args, code, errOut)
		}
	}
	f, _, _ := testFactory(env, "")
	srvT, cliT := mcp.NewInMemoryTransports()
	srv := newMCPServer(f, opts)
	ss, err := srv.Connect(ctx, srvT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cli := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := cli.Connect(ctx, cliT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, dir
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestMCPTools(t *testing.T) {
	cs, dir := mcpSession(t, &mcpOptions{})
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil {
			t.Errorf("%s has no input schema", tl.Name)
		}
	}
	if got := strings.Join(names, " "); got != "memory_add memory_forget memory_inject memory_search memory_show memory_used" {
		t.Errorf("tools: %s", got)
	}

	for _, tc := range []struct {
		name    string
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"search finds the fact", "memory_search", map[string]any{"query": "report cache"}, `"content": "The report cache is warmed at 06:00"`, false},
		{"search needs a query", "memory_search", map[string]any{"query": " "}, "query is empty", true},
		{"show by id", "memory_show", map[string]any{"ids": []string{"pref-001", "nope-9"}}, `"unknown_ids": [` + "\n" + `    "nope-9"`, false},
		{"show unknown only", "memory_show", map[string]any{"ids": []string{"nope-9"}}, "no entry with id nope-9", true},
		{"inject for a task", "memory_inject", map[string]any{"task": "when is the report cache warmed"}, "06:00", false},
		{"add queues as agent", "memory_add", map[string]any{"content": "The CI runs on Debian 13", "category": "constraint"}, "queued c", false},
		{"add refuses a bad category", "memory_add", map[string]any{"content": "x", "category": "gossip"}, "candidate not queued", true},
		{"used records known, reports unknown", "memory_used", map[string]any{"ids": []string{"pref-001", "pref-01", "pref-001"}}, `"recorded_ids": [` + "\n" + `    "pref-001"` + "\n" + `  ],` + "\n" + `  "unknown_ids": [` + "\n" + `    "pref-01"`, false},
		{"used with only unknown ids", "memory_used", map[string]any{"ids": []string{"zzz"}}, "nothing recorded", true},
		{"forget is off by default", "memory_forget", map[string]any{"id": "pref-001"}, "forgetting is turned off", true},
		{"a missing required argument", "memory_forget", map[string]any{}, "id", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := callText(t, cs, tc.tool, tc.args)
			if isErr != tc.isError || !strings.Contains(got, tc.want) {
				t.Errorf("%s: error %v, text:\n%s\nwant error %v and %q", tc.tool, isErr, got, tc.isError, tc.want)
			}
		})
	}
	cands, _, err := mdmem.ReadQueue(ctx, dir)
	if err != nil || len(cands) != 1 || cands[0].Source != "agent" || cands[0].Content != "The CI runs on Debian 13" {
		b, _ := json.Marshal(cands)
		t.Errorf("queue after memory_add: %s %v", b, err)
	}
}

func TestMCPForgetAllowed(t *testing.T) {
	cs, dir := mcpSession(t, &mcpOptions{AllowForget: true})
	got, isErr := callText(t, cs, "memory_forget", map[string]any{"id": "pref-001", "reason": "wrong"})
	if isErr || !strings.Contains(got, `"pref-001"`) {
		t.Fatalf("forget: error %v, %q", isErr, got)
	}
	b, err := os.ReadFile(filepath.Join(dir, mdmem.MainFile))
	if err != nil || strings.Contains(string(b), "Python 3.11") || strings.Contains(string(b), "pref-001") {
		t.Errorf("MEMORY.md after memory_forget (%v):\n%s", err, b)
	}
	got, isErr = callText(t, cs, "memory_forget", map[string]any{"id": "pref-001"})
	if !isErr {
		t.Errorf("forgetting an unknown id succeeded: %q", got)
	}
}

// TestMCPInputSchemasHaveOneType: every tool's input properties name one
// JSON type (no ["null","array"]), as the MCP Inspector and clients that
// map a schema to one type need; and the ones memory_add takes are there.
func TestMCPInputSchemasHaveOneType(t *testing.T) {
	cs, _ := mcpSession(t, &mcpOptions{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"memory_add":  {"content": "string", "scope": "array", "refs": "array", "confidence": "number"},
		"memory_show": {"ids": "array"},
		"memory_used": {"ids": "array"},
	}
	for _, tool := range res.Tools {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: input schema %s: %v", tool.Name, b, err)
		}
		for name, raw := range schema.Properties {
			var p struct {
				Type any `json:"type"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			typ, ok := p.Type.(string)
			if !ok {
				t.Errorf("%s.%s: type %v, want one type", tool.Name, name, p.Type)
			}
			if w, ok := want[tool.Name][name]; ok && typ != w {
				t.Errorf("%s.%s: type %q, want %q", tool.Name, name, typ, w)
			}
		}
	}
}
