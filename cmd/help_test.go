package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagsShowOneDefault: a flag whose usage names its default in words
// ("default: extract.min_confidence") must not have cobra print a second
// one, "(default 0.7)", beside it.
func TestFlagsShowOneDefault(t *testing.T) {
	f, _, _ := testFactory(nil, "")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			usage := c.LocalFlags().FlagUsages()
			for _, line := range strings.Split(usage, "\n") {
				if strings.Contains(line, "--"+fl.Name+" ") && strings.Contains(line, "(default:") && strings.Contains(line, "(default ") {
					t.Errorf("%s --%s shows two defaults:%s", c.CommandPath(), fl.Name, line)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(f))
}
