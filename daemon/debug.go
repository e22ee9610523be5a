package daemon

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// Profiling on demand: a daemon started with MCPX_DEBUG=1 in its own
// environment serves Go's profiles under /debug/pprof/ on its socket (to
// its own user only, like every route), e.g.
//
//	curl --unix-socket "$sock" http://mcpx/debug/pprof/heap > heap.pb.gz
//
// Never by default.

// debugPrefix is where the profiles are served.
const debugPrefix = "/debug/pprof/"

// debugEnabled reports whether the daemon's environment asks for profiles.
func debugEnabled(getenv func(string) string) bool { return getenv("MCPX_DEBUG") == "1" }

// serveDebug answers /debug/pprof/… requests.
func serveDebug(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, debugPrefix) {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r) // the index and the named profiles (heap, goroutine, …)
	}
}
