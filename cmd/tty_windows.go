//go:build windows

package cmd

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether f is a console: the console answers for it
// (NUL, a pipe or a file does not).
func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
