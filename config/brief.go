package config

import (
	"slices"
	"strings"
	"time"
)

// Brief is what a command needs of a directory's configuration to reach
// its daemon, independent of how many servers there are: the sources (the
// daemon key), the stamp a request carries, the variables the captured
// environment holds, the VS Code inputs to ask for, and the call bounds of
// servers whose timeouts are not the defaults. A Snapshot keeps it.
type Brief struct {
	// Sources are Config.Sources.
	Sources []string
	// Stamp is Config.Stamp.
	Stamp string
	// Vars are Config.Vars: every variable a runnable server references.
	Vars []string
	// Inputs are the VS Code inputs (${input:ID}) the runnable servers
	// reference, servers in name order, each server's in the order of
	// Server.Vars.
	Inputs []InputUse
	// Timeouts are the callTimeout and startTimeout of the servers whose
	// values are not DefaultCallTimeout and DefaultStartTimeout.
	Timeouts map[string]Timeouts
}

// InputUse is one ${input:ID} a server references.
type InputUse struct {
	Server string
	// Var is "input:ID".
	Var   string
	Input Input
}

// Timeouts are a server's callTimeout and startTimeout.
type Timeouts struct {
	Call, Start time.Duration
}

// BriefOf is the Brief of c.
func BriefOf(c *Config) *Brief {
	b := &Brief{Sources: c.Sources, Stamp: c.Stamp, Vars: c.Vars()}
	for _, name := range c.Names() {
		s := c.Servers[name]
		if t := (Timeouts{time.Duration(s.Options.CallTimeout), time.Duration(s.Options.StartTimeout)}); t != (Timeouts{DefaultCallTimeout, DefaultStartTimeout}) {
			if b.Timeouts == nil {
				b.Timeouts = map[string]Timeouts{}
			}
			b.Timeouts[name] = t
		}
		if s.Untrusted != "" || s.Problem != "" {
			continue
		}
		for _, v := range s.Vars() {
			id, ok := strings.CutPrefix(v, "input:")
			if !ok {
				continue
			}
			in, ok := c.Inputs[id]
			if !ok {
				in = Input{ID: id}
			}
			b.Inputs = append(b.Inputs, InputUse{Server: name, Var: v, Input: in})
		}
	}
	return b
}

// DaemonKey of the configuration (KeyOf(Sources)).
func (b *Brief) DaemonKey() DaemonKey { return KeyOf(b.Sources) }

// CallTimeouts are the callTimeout and startTimeout of server name (the
// defaults for a server with none of its own, or none of that name).
func (b *Brief) CallTimeouts(name string) Timeouts {
	if t, ok := b.Timeouts[name]; ok {
		return t
	}
	return Timeouts{DefaultCallTimeout, DefaultStartTimeout}
}

// CaptureEnv is CaptureEnvFrom for the configuration b describes.
func (b *Brief) CaptureEnv(lookup func(string) (string, bool)) map[string]string {
	env := make(map[string]string, len(b.Vars)+len(BaseEnv))
	for _, name := range slices.Concat(b.Vars, BaseEnv) {
		if v, ok := lookup(name); ok {
			env[name] = v
		}
	}
	return env
}
