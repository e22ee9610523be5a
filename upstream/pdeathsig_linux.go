package upstream

import "syscall"

// setPdeathsig makes the kernel SIGKILL the child when the daemon dies
// (even by SIGKILL), so a crashed daemon leaves no server behind. It
// reaches only the direct child; grandchildren in its process group are
// reaped by the next daemon for the key (reap.go), and under systemd the
// cgroup ends them all.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
