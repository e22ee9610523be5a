package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// CaptureEnv returns what a daemon needs from the caller's environment:
// every variable the config references that is set plus the base set
// (BaseEnv) when set. Nothing else of the caller leaks to servers. A Getenv cannot
// tell an empty variable from an unset one, so empty values are left out
// (and a ${VAR} without default then counts as unset); CaptureEnvFrom with
// os.LookupEnv keeps them.
func CaptureEnv(c *Config, getenv Getenv) map[string]string {
	return CaptureEnvFrom(c, func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	})
}

// CaptureEnvFrom is CaptureEnv over a lookup that can report a variable as
// set and empty.
func CaptureEnvFrom(c *Config, lookup func(string) (string, bool)) map[string]string {
	env := map[string]string{}
	for _, name := range append(c.Vars(), BaseEnv...) {
		if v, ok := lookup(name); ok {
			env[name] = v
		}
	}
	return env
}

// WriteEnvFile writes env as a JSON object (0600) through a temporary file
// and a rename, so a reader sees the old or the new file, never a torn one.
// It leaves the file alone (and reports false) when it already holds exactly
// these values. The directory is created 0700 if missing.
func WriteEnvFile(path string, env map[string]string) (bool, error) {
	if old, err := ReadEnvFile(path); err == nil && maps.Equal(old, env) {
		return false, nil
	}
	if env == nil {
		env = map[string]string{}
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return false, fmt.Errorf("write env file %s: %w", path, err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("write env file %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, ".env-*")
	if err != nil {
		return false, fmt.Errorf("write env file %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return false, fmt.Errorf("write env file %s: %w", path, err)
	}
	return true, nil
}

// ReadEnvFile reads a file written by WriteEnvFile; a missing file is an
// empty map and no error.
//
// The file names the values servers get: it must be the user's and writable
// by nobody else (package owner), else the error wraps owner.ErrUnsafe.
func ReadEnvFile(path string) (map[string]string, error) {
	b, err := owner.ReadFile(path, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read env file %s: %w", path, err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(bytes.TrimSpace(b), &env); err != nil {
		return nil, fmt.Errorf("read env file %s: %w", path, err)
	}
	return env, nil
}

// BaseEnv are the variables every stdio server gets from the caller's
// environment besides the ones its own entry references (DESIGN §2): what a
// program needs to find its tools, its home, its locale, its temporary
// directory, its terminal, and the network (proxies and CA bundles).
var BaseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG",
	"LC_ALL", "LC_ADDRESS", "LC_COLLATE", "LC_CTYPE", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_MESSAGES",
	"LC_MONETARY", "LC_NAME", "LC_NUMERIC", "LC_PAPER", "LC_TELEPHONE", "LC_TIME",
	"TZ", "TMPDIR", "TERM",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
}

// ServerEnv is the part of the captured environment server s may see: the
// base set and the variables its own entry references. Its env block is
// added on top by upstream.
func ServerEnv(s *Server, captured map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range BaseEnv {
		if v, ok := captured[k]; ok {
			out[k] = v
		}
	}
	for _, k := range s.Vars() {
		if v, ok := captured[k]; ok && !strings.HasPrefix(k, "input:") {
			out[k] = v
		}
	}
	return out
}
