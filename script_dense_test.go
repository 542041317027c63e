package main

import (
	"strconv"
	"strings"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// fakellm-concepts word=concept ...: the running fake LLM embeds each
	// word as its concept, so texts that share a concept but no word get
	// similar vectors (as a real model gives synonyms).
	scriptCmds["fakellm-concepts"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) == 0 {
			ts.Fatalf("usage: fakellm-concepts word=concept ...")
		}
		m := map[string]string{}
		for _, a := range args {
			w, c, ok := strings.Cut(a, "=")
			if !ok || w == "" || c == "" {
				ts.Fatalf("fakellm-concepts: %q is not word=concept", a)
			}
			m[strings.ToLower(w)] = strings.ToLower(c)
		}
		fakeServer(ts).SetConcepts(m)
	}
	// fakellm-embeddings ok|error|empty|zero|short|slow: how the running
	// fake LLM answers /v1/embeddings from now on (see
	// fakellm.SetEmbeddingFault).
	scriptCmds["fakellm-embeddings"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: fakellm-embeddings ok|%s", strings.Join(fakellm.EmbeddingFaults, "|"))
		}
		fault := args[0]
		if fault == "ok" {
			fault = ""
		}
		ts.Check(fakeServer(ts).SetEmbeddingFault(fault))
	}
	// fakellm-embedded <n>: the running fake LLM has embedded n texts.
	scriptCmds["fakellm-embedded"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: fakellm-embedded <n>")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		got := fakeServer(ts).Embedded()
		if (len(got) == want) == neg {
			ts.Fatalf("fakellm embedded %d texts %q, want %s%d", len(got), got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	}
}

// fakeServer is the script's running fake LLM.
func fakeServer(ts *testscript.TestScript) *fakellm.Server {
	v, ok := fakeServers.Load(ts)
	if !ok {
		ts.Fatalf("no fakellm running")
	}
	return v.(*fakellm.Server)
}
