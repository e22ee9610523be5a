package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Getenv looks up a variable; os.Getenv-shaped so tests can inject one.
type Getenv func(string) string

// projectFiles are looked for in every directory from the working directory
// up to /, in this order.
var projectFiles = []string{".mcpx.json", filepath.Join(".mcpx", "config.json"), ".mcp.json"}

// ErrNoConfigFile is MCPX_CONFIG naming a file that does not exist (wrapped
// together with fs.ErrNotExist).
var ErrNoConfigFile = errors.New("config file not found")

// Discover returns the config sources for dir, nearest first,
// symlink-resolved and deduplicated (DESIGN §2):
//
//  1. MCPX_CONFIG set (via getenv): exactly that file, which must exist; a
//     relative value is taken relative to dir.
//  2. From dir up to /: .mcpx.json, .mcpx/config.json, .mcp.json in each
//     directory; every readable regular file is a source.
//  3. $XDG_CONFIG_HOME/mcpx/config.json (default ~/.config/mcpx/config.json).
//
// dir itself is resolved through symlinks first, so a directory reached
// through a link has the same sources (and DaemonKey) as its target. An empty
// result means "use the built-in default".
func Discover(dir string, getenv Getenv) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("discover config for %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("discover config for %s: %w", dir, err)
	}
	if explicit := getenv("MCPX_CONFIG"); explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(real, explicit)
		}
		p, ok := readableFile(explicit)
		if !ok {
			return nil, fmt.Errorf("config file %s (MCPX_CONFIG): %w: %w", explicit, ErrNoConfigFile, fs.ErrNotExist)
		}
		return []string{p}, nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(candidate string) {
		if p, ok := readableFile(candidate); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for d := real; ; d = filepath.Dir(d) {
		for _, name := range projectFiles {
			add(filepath.Join(d, name))
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if cfg, err := userConfigDir(getenv); err == nil {
		add(filepath.Join(cfg, "config.json"))
	}
	return out, nil
}

// userConfigDir is $XDG_CONFIG_HOME/mcpx, or ~/.config/mcpx.
func userConfigDir(getenv Getenv) (string, error) {
	if v := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return filepath.Join(v, "mcpx"), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = h
	}
	return filepath.Join(home, ".config", "mcpx"), nil
}

// readableFile resolves p through symlinks and reports whether it is a
// regular file this process can open.
func readableFile(p string) (string, bool) {
	// One lstat answers "no such file" for most candidates; resolving
	// symlinks stats every component of the path.
	if _, err := os.Lstat(p); err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	f, err := os.Open(real)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

// LoadDir is Discover + Load.
func LoadDir(dir string, getenv Getenv, self string) (*Config, error) {
	sources, err := Discover(dir, getenv)
	if err != nil {
		return nil, err
	}
	return Load(sources, self)
}
