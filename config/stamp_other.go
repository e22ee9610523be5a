//go:build !darwin

package config

import "syscall"

// statTimes are the modification and change times of st.
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtim, st.Ctim }
