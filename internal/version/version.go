// Package version reports the mcpx version, shared by the CLI and the daemon.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../internal/version.Version=v1.2.3");
// otherwise it comes from the module's build info.
var Version = ""

// String returns the version, "dev" for an untagged local build.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
