package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/config/hosts"
)

// hostFile converts what a host's reader found into the entries Load
// merges. Entries with a Problem stay (they shadow lower definitions and
// show in `ls`), with a warning naming the file. Only a trusted file's
// inputs are recorded: an untrusted one cannot change how a trusted
// server's input is asked (echoed or not).
func hostFile(h *hosts.Host, hf *hosts.File, path, key string, c *Config, trusted bool) *file {
	f := &file{entries: map[string]entry{}, warnings: hf.Warnings}
	if trusted {
		addInputs(c, hf.Inputs)
	}
	for _, he := range hf.Entries {
		s := &Server{
			Name: he.Name, Command: he.Command, Args: he.Args, Env: he.Env, Cwd: he.Cwd,
			URL: he.URL, Transport: he.Transport, Headers: he.Headers,
			Source: path, Host: h.Name, Problem: he.Problem, Ignored: he.Ignored,
		}
		s.Raw = hostRaw(s, h.Name, hostBlock(he))
		if s.Problem != "" && !he.Disabled {
			f.warnings = append(f.warnings, problemWarning(s.Problem, path, key, h.Title, he.Name))
		}
		f.entries[he.Name] = entry{server: s, layer: hostLayer(he)}
	}
	return f
}

// addInputs records the inputs a host file declares (the first
// declaration of an id wins).
func addInputs(c *Config, inputs []hosts.Input) {
	for _, in := range inputs {
		if c.Inputs == nil {
			c.Inputs = map[string]Input{}
		}
		if _, ok := c.Inputs[in.ID]; !ok {
			c.Inputs[in.ID] = Input{ID: in.ID, Description: in.Description, Password: in.Password}
		}
	}
}

// hostLayer is the mcpx options a host's entry sets.
func hostLayer(he hosts.Entry) optLayer {
	var l optLayer
	if he.Disabled {
		l.disabled = ptr(true)
	}
	if he.Tools != nil {
		l.tools = ptr(he.Tools)
	}
	if he.ExcludeTools != nil {
		l.exclude = ptr(he.ExcludeTools)
	}
	if he.Description != "" {
		l.description = ptr(he.Description)
	}
	if he.StartTimeout > 0 {
		l.start = ptr(Duration(he.StartTimeout))
	}
	if he.CallTimeout > 0 {
		l.call = ptr(Duration(he.CallTimeout))
	}
	return l
}

func ptr[T any](v T) *T { return &v }

// hostBlock is hostLayer as it would be written in an mcpx block, for the
// definition's hash.
func hostBlock(he hosts.Entry) map[string]any {
	mcpx := map[string]any{}
	if he.Tools != nil {
		mcpx["tools"] = he.Tools
	}
	if he.ExcludeTools != nil {
		mcpx["excludeTools"] = he.ExcludeTools
	}
	if he.Description != "" {
		mcpx["description"] = he.Description
	}
	if he.StartTimeout > 0 {
		mcpx["startTimeout"] = he.StartTimeout.String()
	}
	if he.CallTimeout > 0 {
		mcpx["callTimeout"] = he.CallTimeout.String()
	}
	return mcpx
}

// hostRaw is the definition of a host's server as mcpx hashes it: its
// fields that are set, the host's name, and its mcpx block.
func hostRaw(s *Server, host string, mcpx map[string]any) json.RawMessage {
	raw := map[string]any{"host": host}
	for k, v := range map[string]any{"command": s.Command, "args": s.Args, "env": s.Env, "cwd": s.Cwd,
		"url": s.URL, "transport": s.Transport, "headers": s.Headers, "problem": s.Problem} {
		if isSet(v) {
			raw[k] = v
		}
	}
	if len(mcpx) > 0 {
		raw["mcpx"] = mcpx
	}
	b, _ := json.Marshal(raw)
	b, _ = Canonical(b)
	return b
}

// isSet reports whether a field of a Server is set.
func isSet(v any) bool {
	switch v := v.(type) {
	case string:
		return v != ""
	case []string:
		return v != nil
	case map[string]string:
		return v != nil
	}
	return false
}

// problemWarning is the warning for a host entry's problem: like mcpx's own
// files' ("FILE:LINE:COL: server "x": what; it is not started") when the
// problem is placed, else naming the source and its host.
func problemWarning(problem, path, key, title, name string) string {
	if rest, ok := strings.CutPrefix(problem, path+":"); ok {
		if where, what, ok := strings.Cut(rest, ": "); ok {
			return fmt.Sprintf("%s:%s: server %q: %s; it is not started", path, where, name, what)
		}
	}
	return fmt.Sprintf("%s (%s): server %q: %s; it is not started", key, title, name, problem)
}

// checkFilters gives an entry whose tool filter is malformed that problem.
func checkFilters(hf *hosts.File) {
	for i := range hf.Entries {
		he := &hf.Entries[i]
		for _, pats := range [][]string{he.Tools, he.ExcludeTools} {
			for _, p := range pats {
				if _, err := matchTool(p, ""); err != nil && he.Problem == "" {
					he.Problem, he.ProblemAt = fmt.Sprintf("tool filter: %v", err), ""
				}
			}
		}
	}
}
