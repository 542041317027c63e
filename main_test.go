package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/cmd"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript files with actual output")

// scriptCmds holds extra testscript commands registered by other test files
// (e.g. a fake LLM server).
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// noRaceExitSleep is GORACE for the binaries the tests start: a binary
// built with -race sleeps for atexit_sleep_ms (1 s by default) at exit;
// the scenarios start memctl hundreds of times. Race reports still fail
// the run: each is printed before the exit.
func noRaceExitSleep() string {
	return strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

func TestMain(m *testing.M) {
	os.Setenv("GORACE", noRaceExitSleep())
	testscript.Main(removingSimBinary{m}, map[string]func(){
		"memctl": func() { os.Exit(cmd.Main(os.Args[1:])) },
	})
}

// removingSimBinary runs the tests, then removes the memctl simBinary
// built for them, so that runs leave no binaries in the temporary
// directory.
type removingSimBinary struct{ m *testing.M }

// Run runs the tests and returns their exit code.
func (r removingSimBinary) Run() int {
	code := r.m.Run()
	if simBuild.bin != "" {
		os.RemoveAll(filepath.Dir(simBuild.bin))
	}
	return code
}

// racedScripts are the scenarios that run memctl built with the race
// detector when the tests are (make test): those whose commands run
// goroutines (the MCP server and hooks, parallel LLM calls, the commit's
// parallel blob writes, the index cache's segments, sync's landing). The
// others run a memctl built without it: a race-built memctl starts and
// runs 2 to 3 times slower, and the scenarios start it thousands of
// times; the detector sees races between goroutines of one process, not
// between processes (concurrent_add). Every package's own tests run under
// the race detector whole.
var racedScripts = []string{
	"mcp", "hook", "hooks", "trust_mcp", "consolidate_llm", "consolidate_parallel",
	"import_stream", "inject_core", "forget_vector_cache", "sync",
}

// TestScript runs the end-to-end scenarios in testdata/script; with the
// race detector, those not in racedScripts.
func TestScript(t *testing.T) {
	runScripts(t, func(name string) bool { return !raceBuild || !slices.Contains(racedScripts, name) }, raceBuild)
}

// TestScriptRaced runs racedScripts with memctl built with the race
// detector, when the tests are.
func TestScriptRaced(t *testing.T) {
	for _, name := range racedScripts {
		if _, err := os.Stat(filepath.Join("testdata", "script", name+".txtar")); err != nil {
			t.Errorf("racedScripts names %q: %v", name, err)
		}
	}
	if !raceBuild {
		t.Skip("the tests are built without the race detector: TestScript runs every scenario")
	}
	runScripts(t, func(name string) bool { return slices.Contains(racedScripts, name) }, false)
}

// runScripts runs the scenarios keep selects; plain runs them with a
// memctl built without the race detector.
func runScripts(t *testing.T, keep func(name string) bool, plain bool) {
	if testing.Short() {
		t.Skip("end-to-end scenarios skipped in -short mode")
	}
	all, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if keep(strings.TrimSuffix(filepath.Base(f), ".txtar")) {
			files = append(files, f)
		}
	}
	setup := scriptSetup
	if plain {
		bin := simBinary(t) // built without the race detector
		setup = func(env *testscript.Env) error {
			if err := scriptSetup(env); err != nil {
				return err
			}
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("MEMCTL_BIN", bin)
			return nil
		}
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Cmds:                scriptCmds,
		Setup:               setup,
	})
}

// scriptSetup gives every scenario a home of its own, a person's git
// identity, and no memory directory or LLM endpoint from the environment.
func scriptSetup(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	env.Setenv("HOME", home)
	env.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("GIT_AUTHOR_NAME", "Test Person")
	env.Setenv("GIT_AUTHOR_EMAIL", "person@example.com")
	env.Setenv("GIT_COMMITTER_NAME", "Test Person")
	env.Setenv("GIT_COMMITTER_EMAIL", "person@example.com")
	env.Setenv("MEMCTL_DIR", "")
	env.Setenv("OPENAI_API_KEY", "")
	env.Setenv("OPENAI_BASE_URL", "")
	env.Setenv("MEMCTL_MODEL", "")
	env.Setenv("GORACE", noRaceExitSleep())
	// MEMCTL_BIN is the memctl the scenarios run, as an absolute path
	// (what hook claude install writes into settings.json).
	bin, err := exec.LookPath("memctl")
	if err != nil {
		return err
	}
	env.Setenv("MEMCTL_BIN", bin)
	return os.MkdirAll(home, 0o755)
}
