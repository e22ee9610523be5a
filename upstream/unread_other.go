//go:build !linux

package upstream

import "os"

// unread cannot be told here: only "nothing written" proves a request
// never reached the server.
func unread(*os.File) int64 { return -1 }

// noReader cannot be told here either.
func noReader(*os.File) bool { return false }
