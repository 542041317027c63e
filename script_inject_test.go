package main

import (
	"encoding/json"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// jsonfield <file> <key> <out>: write the string field key of the JSON
	// object in file to out (as jq -r .key would).
	scriptCmds["jsonfield"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 3 {
			ts.Fatalf("usage: jsonfield <file> <key> <out>")
		}
		var m map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &m))
		var s string
		raw, ok := m[args[1]]
		if !ok {
			ts.Fatalf("jsonfield: no key %q", args[1])
		}
		ts.Check(json.Unmarshal(raw, &s))
		ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(s), 0o644))
	}
}
