//go:build darwin

package config

import (
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// _CS_DARWIN_USER_TEMP_DIR from <unistd.h>.
const csDarwinUserTempDir = 65537

// userTempDir is the per-user temporary directory,
// confstr(_CS_DARWIN_USER_TEMP_DIR) (/var/folders/…/T/): what launchd gives
// the user's agents as TMPDIR, whatever the calling shell's TMPDIR says. It
// is the user's own (mode 0700) and the system empties it at boot, like a
// runtime directory. libSystem's confstr(3) is called through purego so
// that a CGO_ENABLED=0 build has it too.
var userTempDir = sync.OnceValues(func() (string, error) {
	lib, err := purego.Dlopen("/usr/lib/libSystem.B.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return "", fmt.Errorf("load libSystem: %w", err)
	}
	sym, err := purego.Dlsym(lib, "confstr")
	if err != nil {
		return "", fmt.Errorf("libSystem has no confstr: %w", err)
	}
	// size_t confstr(int name, char *buf, size_t len)
	var confstr func(name int32, buf *byte, n uintptr) uintptr
	purego.RegisterFunc(&confstr, sym)
	buf := make([]byte, 1024)
	n := confstr(csDarwinUserTempDir, &buf[0], uintptr(len(buf)))
	return userTempFromConfstr(buf, n)
})
