package config

import (
	"errors"
	"fmt"
)

// userTempFromConfstr reads confstr's answer: n is the size the value
// needs including its NUL, 0 for an error.
func userTempFromConfstr(buf []byte, n uintptr) (string, error) {
	if n == 0 {
		return "", errors.New("confstr(_CS_DARWIN_USER_TEMP_DIR) failed")
	}
	if n > uintptr(len(buf)) {
		return "", fmt.Errorf("confstr(_CS_DARWIN_USER_TEMP_DIR): %d bytes do not fit", n)
	}
	return string(buf[:n-1]), nil
}
