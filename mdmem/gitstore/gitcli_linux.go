//go:build linux

package gitstore

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a git child process die with memctl: a memctl
// killed mid-sync must not leave a git fetch or push running beside the
// next memctl's.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
