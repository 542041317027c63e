//go:build !linux

package gitstore

import "os/exec"

// dieWithParent does nothing where the system cannot tie a child's life
// to its parent's: a git command left by a killed memctl finishes on its
// own, and the next sync retries a fetch that meets its ref lock.
func dieWithParent(*exec.Cmd) {}
