package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
)

// The HTTP side of serve: /mcp is the aggregate, /mcp/NS each namespace
// under its own names. Every request, whatever its path, passes the same
// gate first: a foreign Origin is refused (403), a request without the
// serve key is refused (401) unless --no-key, and a body over the bound
// is refused (413) before it is read, so neither a web page in the user's
// browser nor another local user can call the user's tools, and no request
// can take serve's memory.

// maxBody bounds a request body, as the daemon's (daemon/daemon.go).
const maxBody = 4 << 20

// httpHandler gates and routes the requests of `serve --http`.
type httpHandler struct {
	s       *mcpxServer
	key     *keyChecker // nil: --no-key
	keyPath string      // where the key is, for the 401's sentence
	maxBody int64
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("mcpx serve: Origin %s is refused: only pages served from this machine's loopback addresses may call it", o))
		return
	}
	if h.key != nil && !h.key.ok(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpx serve"`)
		refuse(w, http.StatusUnauthorized, fmt.Sprintf("mcpx serve: this endpoint needs the serve key, in %s: send it as \"Authorization: Bearer KEY\" or add ?key=KEY to the URL (`mcpx serve --print-config HOST --http ADDR` writes it into a host's config)", h.keyPath))
		return
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength > h.maxBody {
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("mcpx serve: a request body may have at most %d bytes, this one has %d", h.maxBody, r.ContentLength))
			return
		}
		// Read whole here, bounded (mcp-go reads a body without a bound).
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		if err != nil {
			refuse(w, http.StatusBadRequest, fmt.Sprintf("mcpx serve: read the request body: %v", err))
			return
		}
		if int64(len(body)) > h.maxBody {
			// What was read up to the bound is garbage now: give it back
			// instead of keeping it for the next one.
			body = nil
			debug.FreeOSMemory()
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("mcpx serve: a request body may have at most %d bytes", h.maxBody))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	ns, ok := route(r.URL.Path)
	if !ok {
		refuse(w, http.StatusNotFound, "mcpx serve: nothing here: MCP is served at /mcp (every server) and /mcp/NS (one server under its own names)")
		return
	}
	f := h.s.frontOf(ns)
	if f == nil || f.http == nil {
		refuse(w, http.StatusNotFound, fmt.Sprintf("mcpx serve: no server %q is served here (%s)", ns, h.s.servedList()))
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && r.Method == http.MethodPost {
		defer h.s.posts.begin(id)()
	}
	fc := &flushCounter{ResponseWriter: w, sse: r.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`)) &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")}
	if fc.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	}
	ctx := context.WithValue(r.Context(), flushKey{}, fc)
	if r.Method == http.MethodPost {
		if fc.slot = slotFor(body); fc.slot != nil {
			ctx = withSlot(ctx, fc.slot) // (answers.go)
		}
	}
	f.http.ServeHTTP(fc, r.WithContext(ctx))
	fc.release()
}

// route maps a path to the namespace whose front serves it ("" for the
// aggregate at /mcp).
func route(path string) (ns string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/mcp")
	switch {
	case !ok:
		return "", false
	case rest == "" || rest == "/":
		return "", true
	}
	ns, ok = strings.CutPrefix(rest, "/")
	ns = strings.TrimSuffix(ns, "/")
	if !ok || ns == "" || strings.Contains(ns, "/") {
		return "", false
	}
	if u, err := url.PathUnescape(ns); err == nil {
		ns = u
	}
	return ns, true
}

// servedList names the namespaces served under their own names.
func (s *mcpxServer) servedList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cat == nil || len(s.cat.served) == 0 {
		return "no server is"
	}
	return "served: " + strings.Join(s.cat.served, ", ")
}

// refuse answers status with one line of text.
func refuse(w http.ResponseWriter, status int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Connection", "close") // the body, if any, stays unread
	w.WriteHeader(status)
	io.WriteString(w, line+"\n")
}

// loopbackOrigin reports whether an Origin header names a page served from
// a loopback address (localhost, 127.0.0.0/8, ::1).
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
