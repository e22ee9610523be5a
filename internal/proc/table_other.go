//go:build !linux && !darwin

package proc

func list() ([]Entry, error) { return nil, ErrNoTable }

func startTimeOS(int) uint64 { return 0 }
