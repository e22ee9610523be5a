// Package version reports the mcpx version, shared by the CLI and the daemon.
package version

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// Version is set at link time (-ldflags "-X .../internal/version.Version=v1.2.3");
// otherwise it comes from the module's build info.
var Version = ""

// String returns the version, "dev" for an untagged local build.
func String() string {
	if Version != "" {
		return Version
	}
	return moduleVersion.Get()
}

// moduleVersion is the main module's version from the build info, read
// once (the daemon puts its version on every answer; parsing the build
// info cost ~5 % of a call).
var moduleVersion = lazy.Value[string]{New: func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}}

// BinaryID identifies the executable at path as built: its symlink-resolved
// path, size and modification time ("path:size:mtime-ns"). Installing a
// new build over a binary changes it; "" when path cannot be read. The
// daemon reports the BinaryID of its own executable (health, info file,
// the Mcpx-Binary header of every answer); the CLI compares it with its
// mcpxd's to notice that the running daemon is an older build.
func BinaryID(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return path + ":" + strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// BinaryPath is the path part of a BinaryID ("" for a malformed one).
func BinaryPath(id string) string {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(id[:i], ':')
	if j < 0 {
		return ""
	}
	return id[:j]
}
