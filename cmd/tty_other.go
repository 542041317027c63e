//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos || windows)

package cmd

import "os"

// isTerminal reports false: memctl cannot ask this system's terminal
// driver, so it never takes a file for a person at a terminal.
func isTerminal(*os.File) bool { return false }
