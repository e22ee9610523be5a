package config

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx-dev/mcpx/config/hosts"
)

// hostFile converts what a host's reader found into the entries Load
// merges. Entries with a Problem stay (they shadow lower definitions and
// show in `ls`), with a warning naming the file. Only a trusted file's
// inputs are recorded: an untrusted one cannot change how a trusted
// server's input is asked (echoed or not).
func hostFile(h *hosts.Host, hf *hosts.File, path, key string, c *Config, trusted bool) *file {
	f := &file{entries: map[string]entry{}, warnings: hf.Warnings}
	for _, in := range hf.Inputs {
		if !trusted {
			break
		}
		if c.Inputs == nil {
			c.Inputs = map[string]Input{}
		}
		if _, ok := c.Inputs[in.ID]; !ok {
			c.Inputs[in.ID] = Input{ID: in.ID, Description: in.Description, Password: in.Password}
		}
	}
	for _, he := range hf.Entries {
		s := &Server{
			Name: he.Name, Command: he.Command, Args: he.Args, Env: he.Env, Cwd: he.Cwd,
			URL: he.URL, Transport: he.Transport, Headers: he.Headers,
			Source: path, Host: h.Name, Problem: he.Problem, Ignored: he.Ignored,
		}
		var l optLayer
		if he.Disabled {
			t := true
			l.disabled = &t
		}
		for _, pats := range []*[]string{&he.Tools, &he.ExcludeTools} {
			for _, p := range *pats {
				if _, err := matchTool(p, ""); err != nil && s.Problem == "" {
					s.Problem = fmt.Sprintf("tool filter: %v", err)
				}
			}
		}
		if he.Tools != nil {
			t := he.Tools
			l.tools = &t
		}
		if he.ExcludeTools != nil {
			x := he.ExcludeTools
			l.exclude = &x
		}
		if he.Description != "" {
			d := he.Description
			l.description = &d
		}
		if he.StartTimeout > 0 {
			d := Duration(he.StartTimeout)
			l.start = &d
		}
		if he.CallTimeout > 0 {
			d := Duration(he.CallTimeout)
			l.call = &d
		}
		raw := map[string]any{"host": h.Name}
		for k, v := range map[string]any{"command": s.Command, "args": s.Args, "env": s.Env, "cwd": s.Cwd,
			"url": s.URL, "transport": s.Transport, "headers": s.Headers, "problem": s.Problem} {
			switch v := v.(type) {
			case string:
				if v != "" {
					raw[k] = v
				}
			case []string:
				if v != nil {
					raw[k] = v
				}
			case map[string]string:
				if v != nil {
					raw[k] = v
				}
			}
		}
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
		if len(mcpx) > 0 {
			raw["mcpx"] = mcpx
		}
		b, _ := json.Marshal(raw)
		s.Raw, _ = Canonical(b)
		if s.Problem != "" && !he.Disabled {
			f.warnings = append(f.warnings, fmt.Sprintf("%s (%s): server %q: %s; it is not started", key, h.Title, he.Name, s.Problem))
		}
		f.entries[he.Name] = entry{server: s, layer: l}
	}
	return f
}
