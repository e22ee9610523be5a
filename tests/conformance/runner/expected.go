package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// An expected-failures file lists, for one suite and one mode, the
// scenarios known to fail: one per line, the scenario's name, then the
// reason. Blank lines and lines starting with # are ignored.
//
//	# comment
//	tasks-lifecycle  extension: mcp-go v1.2.1 has no SEP-2663 tasks
type expectedFailures map[string]string // scenario → reason

var errExpectedFile = errors.New("malformed expected-failures file")

func readExpected(path string) (expectedFailures, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return expectedFailures{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read expected failures: %w", err)
	}
	return parseExpected(path, b)
}

func parseExpected(path string, b []byte) (expectedFailures, error) {
	exp := expectedFailures{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %w: %s has no reason", path, n, errExpectedFile, name)
		}
		if _, dup := exp[name]; dup {
			return nil, fmt.Errorf("%s:%d: %w: %s is listed twice", path, n, errExpectedFile, name)
		}
		exp[name] = reason
	}
	return exp, sc.Err()
}

// verdict compares the outcomes of one suite and mode with what was
// expected.
type verdict struct {
	Passed, Failed, ExpectedFail int
	UnexpectedFail               []outcome // failed, not listed
	UnexpectedPass               []outcome // listed, passed: the list must shrink
	Stale                        []string  // listed, but the suite has no such scenario
}

func (v verdict) ok() bool {
	return len(v.UnexpectedFail) == 0 && len(v.UnexpectedPass) == 0 && len(v.Stale) == 0
}

// compare judges outcomes against exp. complete says the outcomes cover
// every scenario of the suite (no filter), so a listed scenario without
// an outcome is stale.
func compare(outcomes []outcome, exp expectedFailures, complete bool) verdict {
	var v verdict
	ran := map[string]bool{}
	for _, o := range outcomes {
		ran[o.Scenario] = true
		_, listed := exp[o.Scenario]
		switch {
		case o.Passed && listed:
			v.Passed++
			v.UnexpectedPass = append(v.UnexpectedPass, o)
		case o.Passed:
			v.Passed++
		case listed:
			v.Failed++
			v.ExpectedFail++
		default:
			v.Failed++
			v.UnexpectedFail = append(v.UnexpectedFail, o)
		}
	}
	if complete {
		for name := range exp {
			if !ran[name] {
				v.Stale = append(v.Stale, name)
			}
		}
		sort.Strings(v.Stale)
	}
	return v
}

// updated returns exp rewritten from outcomes: failing scenarios are
// listed, keeping the reason already written for them, new ones with the
// cause the run found; passing ones are dropped. Scenarios without an
// outcome keep their entry unless complete (then they are stale).
func updated(exp expectedFailures, outcomes []outcome, complete bool) expectedFailures {
	out := expectedFailures{}
	if !complete {
		for k, v := range exp {
			out[k] = v
		}
	}
	for _, o := range outcomes {
		delete(out, o.Scenario)
		if o.Passed {
			continue
		}
		if reason, ok := exp[o.Scenario]; ok {
			out[o.Scenario] = reason
		} else {
			out[o.Scenario] = o.Why
		}
	}
	return out
}

// writeExpected writes exp to path under a header naming what it is.
func writeExpected(path, header string, exp expectedFailures) error {
	var b strings.Builder
	for _, line := range strings.Split(header, "\n") {
		b.WriteString("# " + line + "\n")
	}
	names := make([]string, 0, len(exp))
	for k := range exp {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s  %s\n", k, oneLine(exp[k], 400))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write expected failures: %w", err)
	}
	return nil
}
