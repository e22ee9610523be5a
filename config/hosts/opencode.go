package hosts

import (
	"path/filepath"
	"time"
)

// opencode: $XDG_CONFIG_HOME/opencode/opencode.json[c] and a project's
// opencode.json[c]. Two layouts:
//
//   - V1: "mcp": {NAME: entry}, with "enabled" (false: off) and "timeout"
//     (ms to connect and list tools); "experimental": {"mcp_timeout"} (ms)
//     bounds tool calls of every server.
//   - V2: "mcp": {"servers": {NAME: entry}, "timeout": …}, with "disabled"
//     (there is no "enabled") and "timeout": {"startup", "request"} (ms;
//     "mcp.timeout" is the default of every server; a plain number there
//     is the request timeout opencode migrated from mcp_timeout, on an
//     entry the startup one as V1's).
//
// An entry has type local (command as an array, environment, cwd) or
// remote (url, headers). opencode expands {env:NAME} (and {file:PATH},
// which mcpx does not).
// https://opencode.ai/docs/mcp-servers/
var opencode = &Host{
	Name:    "opencode",
	Title:   "opencode",
	Project: []string{"opencode.json", "opencode.jsonc"},
	format:  jsonFormat,
	user: func(e Env) []string {
		d := filepath.Join(e.ConfigHome, "opencode")
		return []string{filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc")}
	},
	read: func(doc map[string]any, c *Context) *File {
		mcp, _ := doc["mcp"].(map[string]any)
		if servers, ok := mcp["servers"].(map[string]any); ok && !looksLikeEntry(servers) {
			start, call := opencodeTimeouts(mcp["timeout"], true)
			return readServers(mcp, "servers", c, varStyle{braceEnv: true}, func(r *entryReader) Entry {
				e := opencodeEntry(r)
				if d, ok := r.boolean("disabled"); ok && d {
					e.Disabled = true
				}
				if e.StartTimeout == 0 {
					e.StartTimeout = start
				}
				if e.CallTimeout == 0 {
					e.CallTimeout = call
				}
				return e
			}).under("mcp")
		}
		experimental, _ := doc["experimental"].(map[string]any)
		_, call := opencodeTimeouts(experimental["mcp_timeout"], true)
		return readServers(doc, "mcp", c, varStyle{braceEnv: true}, func(r *entryReader) Entry {
			e := opencodeEntry(r)
			if on, ok := r.boolean("enabled"); ok && !on {
				e.Disabled = true
			}
			if e.CallTimeout == 0 {
				e.CallTimeout = call
			}
			return e
		})
	},
}

// looksLikeEntry tells a V1 server named "servers" from V2's map of
// servers: an entry has a type, a command or a url of its own.
func looksLikeEntry(m map[string]any) bool {
	for _, k := range []string{"type", "command", "url"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// opencodeEntry reads the keys both layouts share.
func opencodeEntry(r *entryReader) Entry {
	var e Entry
	switch t := r.plain("type"); t {
	case "local":
		e.Transport = Stdio
	case "remote":
		e.Transport = HTTP
	case "":
	default:
		r.fail("type %q is not local or remote", t)
	}
	if v, ok := r.raw("command"); ok {
		switch v := v.(type) {
		case string:
			e.Command = r.tr("command", v)
		default:
			cmd := r.strList("command", v)
			if len(cmd) > 0 {
				e.Command, e.Args = cmd[0], cmd[1:]
			}
		}
	}
	e.Env = r.strMap("environment")
	e.Cwd = r.str("cwd")
	e.URL = r.str("url")
	e.Headers = r.strMap("headers")
	if v, ok := r.raw("timeout"); ok {
		var valid bool
		e.StartTimeout, e.CallTimeout, valid = opencodeTimeout(v, false)
		if !valid {
			r.fail(`"timeout" must be a positive number of milliseconds or {"startup": ms, "request": ms}`)
		}
	}
	return e
}

// opencodeTimeouts reads a timeout that is not an entry's (mcp.timeout,
// experimental.mcp_timeout); a value mcpx cannot read is no timeout, as
// opencode would refuse the file.
func opencodeTimeouts(v any, numberIsRequest bool) (start, call time.Duration) {
	start, call, _ = opencodeTimeout(v, numberIsRequest)
	return start, call
}

// opencodeTimeout reads opencode's timeout: {"startup": ms, "request": ms},
// or a number of ms (the startup bound, or the request bound when
// numberIsRequest). valid is false for anything else.
func opencodeTimeout(v any, numberIsRequest bool) (start, call time.Duration, valid bool) {
	ms := func(v any) (time.Duration, bool) {
		var f float64
		switch v := v.(type) {
		case float64:
			f = v
		case int64:
			f = float64(v)
		default:
			return 0, false
		}
		return time.Duration(f * float64(time.Millisecond)), f > 0
	}
	switch v := v.(type) {
	case nil:
		return 0, 0, true
	case map[string]any:
		valid = true
		for k, x := range v {
			d, ok := ms(x)
			switch {
			case !ok:
				valid = false
			case k == "startup":
				start = d
			case k == "request":
				call = d
			default:
				valid = false
			}
		}
		return start, call, valid
	default:
		d, ok := ms(v)
		if !ok {
			return 0, 0, false
		}
		if numberIsRequest {
			return 0, d, true
		}
		return d, 0, true
	}
}
