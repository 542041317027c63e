package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
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
	testscript.Main(m, map[string]func(){
		"memctl": func() { os.Exit(cmd.Main(os.Args[1:])) },
	})
}

// TestScript runs the end-to-end scenarios in testdata/script.
func TestScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end scenarios skipped in -short mode")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Cmds:                scriptCmds,
		Setup:               scriptSetup,
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
