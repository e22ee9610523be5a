//go:build !linux

package upstream

import "syscall"

// setPdeathsig does nothing: only Linux has a parent-death signal. The
// next daemon for the key reaps what a crashed one left (reap.go).
func setPdeathsig(*syscall.SysProcAttr) {}
