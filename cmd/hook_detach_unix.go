//go:build unix

package cmd

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so that the agent ending the
// hook's process group does not end the background extract.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
