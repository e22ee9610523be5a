package config

import "syscall"

// statTimes are the modification and change times of st (Darwin names
// them Mtimespec and Ctimespec).
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtimespec, st.Ctimespec }
