package main

import (
	"os"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The values json_shapes.txtar cannot fix in advance, and what jsonnorm
// writes in their place.
var jsonVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\bc\d{8}T\d{6}\.\d{6}-\d{8}-[0-9a-f]{8}\b`), "<candidate>"},
	{regexp.MustCompile(`\b[0-9a-f]{40}\b`), "<commit>"},
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d`), "<date>"},
	{regexp.MustCompile(`(\\n)\d\d-\d\d([: ])`), "$1<day>$2"}, // a date line without the year
	{regexp.MustCompile(`("[a-z0-9_]*(_seconds|_ms)": )[0-9.e+-]+`), "${1}0"},
	{regexp.MustCompile(`("(version|go_version|platform)": )"[^"]*"`), `$1"<build>"`},
}

func init() {
	// jsonnorm <in> <out>: copy the JSON in <in> to <out> with the values
	// that change from run to run (commits, candidate ids, times, dates,
	// durations, the work directory) replaced by placeholders, so cmp can
	// compare a command's whole --json output with a golden file.
	scriptCmds["jsonnorm"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: jsonnorm <in> <out>")
		}
		s := strings.ReplaceAll(ts.ReadFile(args[0]), ts.Getenv("WORK"), "$WORK")
		for _, v := range jsonVolatile {
			s = v.re.ReplaceAllString(s, v.with)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
	}
}
