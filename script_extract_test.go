package main

import (
	"bytes"
	"os"

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
}
