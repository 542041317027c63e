package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print memctl's version",
		Long: `Version prints memctl's version: the one set at build time (make build),
else the module version of a "go install …@version" binary, else the VCS
revision the binary was built from, else "dev".`,
		Args:    cobra.NoArgs,
		Example: "  memctl version\n  memctl version --json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return f.printJSON(struct {
					Version   string `json:"version"`
					GoVersion string `json:"go_version"`
					Platform  string `json:"platform"`
				}{version(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH})
			}
			_, err := fmt.Fprintf(f.IO.Out, "memctl %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// version returns Version, or what the binary's build information says
// when Version was not set at build time.
func version() string {
	if Version != "dev" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	return versionFromBuildInfo(info)
}

// versionFromBuildInfo prefers the main module's version (set by `go
// install module@version`), then the VCS revision (with "+dirty" for a
// modified tree), then "dev".
func versionFromBuildInfo(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		return "dev-" + rev[:min(12, len(rev))] + dirty
	}
	return "dev"
}
