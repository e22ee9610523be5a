package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// prepare writes what the daemon reads at start, before anything can
// activate it: the key record (which configs the key stands for) and the
// captured environment (DESIGN §2). It runs once per client. A ${VAR} the
// caller has not set is not an error here: it concerns only the servers that
// use it, and the daemon reports it (422 unset_variable) when one of them is
// started, so one missing token never blocks every other server.
func (c *Client) prepare() error {
	c.prepareOnce.Do(func() { c.prepareErr = c.writeRecords() })
	return c.prepareErr
}

func (c *Client) writeRecords() error {
	store := c.getenv(config.EnvTokenStore)
	if !slices.Contains(config.TokenStores, store) {
		return &ConfigError{fmt.Errorf("%s=%q: want auto, keyring or file", config.EnvTokenStore, store)}
	}
	env := c.brief.CaptureEnv(c.lookupEnv)
	// What each file should hold, as a digest: the files are read only
	// when their stamps changed since a command saw them hold it.
	keyDigest := config.FieldsDigest(c.configs()...)
	runtimeDigest := config.FieldsDigest(append([]string{string(c.key), c.paths.State, c.paths.Cache, store}, c.configs()...)...)
	envSum := config.EnvDigest(env)
	c.envDigest = envSum
	snap := c.snap
	if snap != nil && len(c.brief.Inputs) == 0 && snap.Unchanged(c.paths.KeyRecord(c.key), keyDigest) &&
		snap.Unchanged(c.paths.RuntimeKeyRecord(c.key), runtimeDigest) && snap.Unchanged(c.paths.EnvFile(c.key), envSum) {
		return nil
	}
	if err := c.paths.EnsureRuntime(); err != nil {
		return fmt.Errorf("prepare daemon %s: %w", c.key, err)
	}
	if err := c.writeKeyRecord(); err != nil {
		return err
	}
	if err := c.writeRuntimeKeyRecord(store); err != nil {
		return err
	}
	if err := c.inputs(env); err != nil {
		return err
	}
	if _, err := config.WriteEnvFile(c.paths.EnvFile(c.key), env); err != nil {
		return fmt.Errorf("prepare daemon %s: %w", c.key, err)
	}
	c.envDigest = config.EnvDigest(env) // with the inputs' answers, as written
	if snap != nil {
		snap.Remember(c.paths.KeyRecord(c.key), keyDigest)
		snap.Remember(c.paths.RuntimeKeyRecord(c.key), runtimeDigest)
		snap.Remember(c.paths.EnvFile(c.key), c.envDigest)
		_ = snap.Save() // a cache: the next command loads the sources again
	}
	return nil
}

// configs are the key record's configs.
func (c *Client) configs() []string {
	if c.brief.Sources == nil {
		return []string{}
	}
	return c.brief.Sources
}

// inputs adds the VS Code inputs (${input:ID}) the runnable servers use:
// the value the captured environment already holds (asked once, kept on the
// runtime tmpfs like every captured value), else the answer to Ask. An
// input nobody answers stays unset; the daemon then refuses only the
// servers that need it, naming the input.
func (c *Client) inputs(env map[string]string) error {
	var old map[string]string
	for _, use := range c.brief.Inputs {
		if _, done := env[use.Var]; done {
			continue
		}
		if old == nil {
			old, _ = config.ReadEnvFile(c.paths.EnvFile(c.key))
		}
		if val, ok := old[use.Var]; ok {
			env[use.Var] = val
			continue
		}
		if c.ask == nil {
			continue
		}
		val, err := c.ask(use.Input)
		if err != nil {
			return fmt.Errorf("input %s for server %s: %w", use.Input.ID, use.Server, err)
		}
		env[use.Var] = val
	}
	return nil
}

// CheckVars reports the first ${VAR} (without a default) of cfg, servers in
// name order, that lookup does not define, as a *ConfigError wrapping
// *config.UnsetVarError. lookup is os.LookupEnv-shaped so a variable set to
// "" counts as set.
func CheckVars(cfg *config.Config, lookup func(string) (string, bool)) error {
	for _, name := range cfg.Names() {
		s := cfg.Servers[name]
		if s.Untrusted != "" || s.Problem != "" {
			continue // never started: its variables do not matter
		}
		inputs := func(k string) (string, bool) {
			if strings.HasPrefix(k, "input:") {
				return "", true // asked for when the server starts
			}
			return lookup(k)
		}
		if _, err := s.Expand(inputs); err != nil {
			return &ConfigError{err}
		}
	}
	return nil
}

// writeKeyRecord writes the key record when it is missing or names other
// configs.
func (c *Client) writeKeyRecord() error {
	path := c.paths.KeyRecord(c.key)
	configs := c.configs()
	// The record decides what the daemon runs: never write it into (or
	// trust it from) a directory someone else controls.
	if err := owner.MkdirAll(c.paths.KeysDir(), 0o700); err != nil {
		return fmt.Errorf("write key record %s: %w", path, err)
	}
	if err := owner.CheckDir(c.paths.State); err != nil {
		return fmt.Errorf("write key record %s: %w", path, err)
	}
	if rec, err := config.ReadKeyRecord(path); err == nil && slices.Equal(rec.Configs, configs) {
		return nil
	}
	rec := config.KeyRecord{DaemonKey: string(c.key), Configs: configs, CreatedAt: time.Now().UTC()}
	if err := config.WriteJSONAtomic(path, rec, 0o600); err != nil {
		return fmt.Errorf("write key record %s: %w", path, err)
	}
	return nil
}

// writeRuntimeKeyRecord writes the copy of the key record beside the
// socket, naming this client's state and cache directories and token store
// (MCPX_TOKEN_STORE), when it is missing or differs: a daemon started by
// systemd or launchd reads it, since it does not see the shell's
// environment.
func (c *Client) writeRuntimeKeyRecord(store string) error {
	path := c.paths.RuntimeKeyRecord(c.key)
	configs := c.configs()
	if rec, err := config.ReadKeyRecord(path); err == nil && slices.Equal(rec.Configs, configs) &&
		rec.StateDir == c.paths.State && rec.CacheDir == c.paths.Cache && rec.DaemonKey == string(c.key) && rec.TokenStore == store {
		return nil
	}
	rec := config.KeyRecord{DaemonKey: string(c.key), Configs: configs, CreatedAt: time.Now().UTC(),
		StateDir: c.paths.State, CacheDir: c.paths.Cache, TokenStore: store}
	if err := config.WriteJSONAtomic(path, rec, 0o600); err != nil {
		return fmt.Errorf("write key record %s: %w", path, err)
	}
	return nil
}
