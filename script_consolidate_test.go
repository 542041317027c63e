package main

import (
	"strconv"
	"sync"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/rogpeppe/go-internal/testscript"
)

// fakeServers maps a running script to its fake LLM, for fakellm-calls.
var fakeServers sync.Map // *testscript.TestScript → *fakellm.Server

func init() {
	// fakellm <responses-file>: start a scripted OpenAI-compatible server
	// in the test process and point memctl at it (OPENAI_BASE_URL,
	// OPENAI_API_KEY, MEMCTL_MODEL). The file is a JSON array of steps or
	// one step per line; see package consolidate/fakellm.
	scriptCmds["fakellm"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg {
			ts.Fatalf("unsupported: ! fakellm")
		}
		if len(args) != 1 {
			ts.Fatalf("usage: fakellm <responses-file>")
		}
		steps, err := fakellm.Parse([]byte(ts.ReadFile(args[0])))
		ts.Check(err)
		if old, ok := fakeServers.Load(ts); ok {
			old.(*fakellm.Server).Close()
		}
		srv := fakellm.New(steps)
		fakeServers.Store(ts, srv)
		ts.Defer(func() {
			srv.Close()
			fakeServers.Delete(ts)
		})
		ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
		ts.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
		ts.Setenv("MEMCTL_MODEL", "fake-model")
	}
	// fakellm-calls <n>: the fake LLM received exactly n requests.
	scriptCmds["fakellm-calls"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: fakellm-calls <n>")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		v, ok := fakeServers.Load(ts)
		if !ok {
			ts.Fatalf("fakellm-calls: no fakellm running")
		}
		got := v.(*fakellm.Server).Calls()
		if (got == want) == neg {
			ts.Fatalf("fakellm received %d requests, want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	}
}
