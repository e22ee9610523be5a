package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// failing reports whether the check fails the scenario. Like the suites'
// own expected-failures logic, a WARNING fails it too.
func (c check) failing() bool { return c.Status == "FAILURE" || c.Status == "WARNING" }

// outcome is the verdict on one scenario.
type outcome struct {
	Scenario string
	Passed   bool
	// Why is a one-line cause when it did not pass: the failing checks,
	// or what went wrong around them.
	Why string
}

// judge turns a scenario's checks into an outcome. problem, if not
// empty, is a failure seen outside the checks (the suite could not run
// or ran over its time, no result was written). How the client under
// test exited is not one: as in the suites' own verdicts, the checks
// decide, and a client that rightly refuses a server (a wrong issuer, a
// foreign resource) exits non-zero.
func judge(scenario string, checks []check, problem string) outcome {
	var ids []string
	first := ""
	seen := map[string]bool{}
	for _, c := range checks {
		if !c.failing() {
			continue
		}
		if !seen[c.ID] {
			seen[c.ID] = true
			ids = append(ids, c.ID)
		}
		if first == "" && c.ErrorMessage != "" {
			first = c.ErrorMessage
		}
	}
	var why []string
	if len(ids) > 0 {
		w := "failed " + strings.Join(ids, ", ")
		if first != "" {
			w += ": " + first
		}
		why = append(why, w)
	}
	if problem != "" {
		why = append(why, problem)
	}
	return outcome{Scenario: scenario, Passed: len(why) == 0, Why: oneLine(strings.Join(why, "; "), 240)}
}

// oneLine collapses whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// resultDirSuffix is the timestamp the suites append to a result
// directory's name.
var resultDirSuffix = regexp.MustCompile(`-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// readResults finds every checks.json under dir and returns the checks
// by scenario name. A directory is named [server-]SCENARIO-TIMESTAMP,
// nested where the scenario's name has a slash (auth/metadata-default).
func readResults(dir, prefix string) (map[string][]check, error) {
	out := map[string][]check{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		name := resultDirSuffix.ReplaceAllString(filepath.ToSlash(rel), "")
		name = strings.TrimPrefix(name, prefix)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		out[name] = append(out[name], checks...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read results under %s: %w", dir, err)
	}
	return out, nil
}
