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

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// alwaysCaptured are passed to every daemon besides the referenced variables:
// a service manager's PATH and HOME differ from the user's shell.
var alwaysCaptured = []string{"PATH", "HOME", "LANG"}

// CaptureEnv returns what a daemon needs from the caller's environment:
// every variable the config references that is set plus PATH, HOME and LANG
// when set. Nothing else of the caller leaks to servers. A Getenv cannot
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
	for _, name := range append(c.Vars(), alwaysCaptured...) {
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
