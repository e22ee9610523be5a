package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
)

// mcpx never serves itself (issue #18): an entry that starts `mcpx serve`
// (any path to mcpx or mcpxd, with serve as its command) or points at this
// user's running `mcpx serve --http` would make mcpx list its own tools
// back to itself, each round adding a prefix, with a second daemon behind
// it. Load gives such an entry a Problem and Self, so it is listed as
// skipped and never started.

// EnvDaemonPid is set, in the environment of every stdio server a daemon
// starts, to that daemon's pid, and `mcpx serve` refuses to run where it is
// set: that serve would be mcpx serving itself through a command Load cannot
// see through (`env mcpx serve`, `sh -c 'mcpx serve'`, a link to mcpx under
// another name), each round of listing adding a prefix to every tool.
const EnvDaemonPid = "MCPX_DAEMON_PID"

// ServeRecord is what a running `mcpx serve --http` records in
// Paths.ServeRecords(): its pid (with start time, so a reused pid is not
// taken for it) and the address it listens on.
type ServeRecord struct {
	Pid       int       `json:"pid"`
	PidStart  uint64    `json:"pidStart,omitempty"`
	Addr      string    `json:"addr"`
	StartedAt time.Time `json:"startedAt"`
}

// WriteServeRecord records a serve process listening on addr and returns
// the function that removes the record (call it when serving ends).
func WriteServeRecord(p Paths, addr string) (remove func(), err error) {
	dir := p.ServeRecords()
	if err := ensurePrivateDir(dir); err != nil {
		return nil, fmt.Errorf("record serve address: %w", err)
	}
	pid := os.Getpid()
	rec := ServeRecord{Pid: pid, PidStart: proc.StartTime(pid), Addr: addr, StartedAt: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.Marshal(rec)
	path := filepath.Join(dir, strconv.Itoa(pid)+".json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("record serve address: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("record serve address: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// serveAddrs are the addresses of this user's running `mcpx serve --http`
// processes, read from dir; records of processes that are gone are
// skipped. Best effort: an unreadable directory has none.
func serveAddrs(dir string, lc *loadCtx) []string {
	lc.list(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		b, _, err := lc.read(filepath.Join(dir, e.Name()), 1<<12, CheckTrustable)
		if err != nil {
			continue
		}
		var rec ServeRecord
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		alive := proc.Is(rec.Pid, rec.PidStart)
		lc.proc(rec.Pid, rec.PidStart, alive)
		if !alive {
			continue
		}
		out = append(out, rec.Addr)
	}
	return out
}

// runsMcpxServe reports whether command with args is `mcpx serve` or
// `mcpxd serve` (any path to either; mcpx's global flags may come first).
func runsMcpxServe(command string, args []string) bool {
	if base := filepath.Base(command); base != "mcpx" && base != "mcpxd" {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json" || a == "-json":
		case a == "--config" || a == "-config" || a == "-C" || a == "--directory" || a == "-directory":
			i++ // and its value
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--directory="):
		default:
			return a == "serve"
		}
	}
	return false
}

// servedBy reports the address of a running serve process that rawURL
// reaches (loopback or an unspecified address listening on every
// interface, same port), or "".
func servedBy(rawURL string, addrs []string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Port() == "" || !loopbackHost(u.Hostname()) {
		return ""
	}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port != u.Port() {
			continue
		}
		if ip := net.ParseIP(host); host == "" || loopbackHost(host) || (ip != nil && ip.IsUnspecified()) {
			return a
		}
	}
	return ""
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// markSelf gives every server that is mcpx itself its Problem (and Self),
// with a warning. The serve records are read only when some server has a
// loopback URL.
func markSelf(c *Config, getenv Getenv, lc *loadCtx) {
	var addrs []string
	read := false
	for _, name := range c.Names() {
		s := c.Servers[name]
		if s.Problem != "" {
			continue // unusable anyway, and said so
		}
		why := ""
		switch {
		case s.URL == "" && runsMcpxServe(s.Command, s.Args):
			why = "runs `" + strings.Join(slices.Concat([]string{s.Command}, s.Args), " ") + "`, which is mcpx itself"
		case s.URL != "":
			if !read {
				read = true
				if p, err := DefaultPaths(getenv); err == nil {
					addrs = serveAddrs(p.ServeRecords(), lc)
				}
			}
			if a := servedBy(s.URL, addrs); a != "" {
				why = "its URL is your running `mcpx serve --http " + a + "`, which is mcpx itself"
			}
		}
		if why == "" {
			continue
		}
		why += "; skipped, since mcpx never serves itself"
		s.Self, s.Problem = true, why
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: server %q %s", s.Source, name, why))
	}
}
