//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cmd

import "golang.org/x/sys/unix"

const ioctlReadTermios = unix.TIOCGETA
