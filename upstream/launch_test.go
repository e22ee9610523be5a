package upstream

import (
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// A spec's Launch, set once, is the fingerprint acquire would compute, and
// what changes an instance's start changes it.
func TestWithLaunchIsTheFingerprint(t *testing.T) {
	spec := Spec{Server: &config.Server{Name: "s", Command: "srv", Args: []string{"a"}}, EnvDigest: "d1"}
	got := spec.WithLaunch()
	if got.Launch == "" || got.Launch != launchOf(spec) {
		t.Fatalf("Launch %q, launchOf %q", got.Launch, launchOf(spec))
	}
	other := spec
	other.EnvDigest = "d2"
	if other.WithLaunch().Launch == got.Launch {
		t.Error("another environment has the same fingerprint")
	}
	other = spec
	other.Roots = []Root{{URI: "file:///p", Name: "p"}}
	if other.WithLaunch().Launch == got.Launch {
		t.Error("other roots have the same fingerprint")
	}
}
