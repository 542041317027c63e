package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// trimnl FILE: remove the newline txtar puts at the end of FILE, to
	// make a torn last line (a live transcript mid-write).
	scriptCmds["trimnl"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: trimnl FILE")
		}
		p := ts.MkAbs(args[0])
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, bytes.TrimRight(b, "\n"), 0o644))
	}
	// mcpcall [mcp args...] -- TOOL JSON: start `memctl mcp [args...]`
	// as a subprocess speaking MCP on stdio, call TOOL with the JSON
	// arguments through the SDK's client, and print the result's text
	// (and the server's stderr on stderr).
	// "! mcpcall" expects a tool error (or a protocol error, printed).
	scriptCmds["mcpcall"] = func(ts *testscript.TestScript, neg bool, args []string) {
		i := len(args) - 3
		if i < 0 || args[i] != "--" {
			ts.Fatalf("usage: mcpcall [mcp args...] -- TOOL JSON")
		}
		var in map[string]any
		ts.Check(json.Unmarshal([]byte(args[i+2]), &in))
		memctl, err := exec.LookPath("memctl")
		ts.Check(err)
		cmd := exec.Command(memctl, append([]string{"mcp"}, args[:i]...)...)
		cmd.Dir = ts.MkAbs(".")
		for _, k := range []string{"PATH", "HOME", "MEMCTL_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "MEMCTL_MCP_ALLOW_FORGET", "OPENAI_BASE_URL", "OPENAI_API_KEY", "MEMCTL_EMBEDDING_MODEL", "GORACE"} {
			cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "testscript", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		ts.Check(err)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: args[i+1], Arguments: in})
		cs.Close()
		fmt.Fprint(ts.Stderr(), stderr.String()) // the server's warnings
		if err != nil && neg {
			fmt.Fprintln(ts.Stdout(), err) // a protocol error: an unknown tool
			return
		}
		if err != nil {
			ts.Fatalf("mcpcall %s: %v\n%s", args[i+1], err, stderr.String())
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text + "\n")
			}
		}
		fmt.Fprint(ts.Stdout(), b.String())
		if res.IsError != neg {
			ts.Fatalf("mcpcall %s: tool error %v, want %v: %s", args[i+1], res.IsError, neg, b.String())
		}
	}
}
