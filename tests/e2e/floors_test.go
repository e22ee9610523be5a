package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/systemdtest"
)

// The floors of the bench: zero-work programs in scripts/ doing the same
// process hops as mcpx (scripts/relay, scripts/relayd, scripts/coldfloor),
// measured in the same run as mcpx and its baseline. What a floor costs
// against the baseline is the least any design with those hops costs on
// this machine; a target below it cannot be met by that architecture here.
// They measure; they never stand in for mcpx.

// buildScript builds scripts/NAME the way mcpx is built (static).
func buildScript(t *testing.T, name string) string {
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "./scripts/"+name)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	mustRun(t, cmd)
	return bin
}

// serveFloorRows adds the process-hop floors to the serve table: the host's
// mcp-go client talks to the same stdio server (argv) through scripts/relay
// — one hop copying bytes, one hop relaying line by line, and two
// line-by-line hops in a row (the shape of serve in front of the daemon) —
// each in alternating blocks with the direct session of the row.
func serveFloorRows(t *testing.T, b *strings.Builder, calls int, label, gen, tool string, args map[string]any, direct *client.Client, argv []string) {
	relay := buildScript(t, "relay")
	for _, f := range []struct {
		name  string
		chain []string
	}{
		{"one hop, io.Copy both ways", []string{relay}},
		{"one hop, line by line", []string{relay, "-lines"}},
		{"two hops, line by line", []string{relay, "-lines", relay, "-lines"}},
	} {
		via, _ := connectStdio(t, nil, "", append(f.chain, argv...)...)
		// The relay's server is new, the direct session's has served
		// thousands of calls: warm it (node's JIT) before alternating.
		for range 500 {
			if err := callOnce(via, tool, args)(); err != nil {
				t.Fatal(err)
			}
		}
		d, v := alternate(t, calls, callOnce(direct, tool, args), callOnce(via, tool, args))
		via.Close()
		fmt.Fprintf(b, "| %s | (floor: scripts/relay, %s) | %s | %s | %s | %.2f× | %.2f× |\n", label, f.name, gen, medianOf(d).Round(time.Microsecond),
			medianOf(v).Round(time.Microsecond), ratio(medianOf(v), medianOf(d)), ratio(meanOf(v), meanOf(d)))
	}
}

// relayDaemon is scripts/relayd running in front of one stdio server.
type relayDaemon struct {
	sock string
	pid  int
}

// startRelayd starts scripts/relayd (bin) for the server argv and waits
// until it listens; it is killed when the test ends.
func startRelayd(t *testing.T, bin string, argv ...string) relayDaemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "relayd-") // short: a socket path has a bound
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	cmd := exec.Command(bin, append([]string{sock}, argv...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("relayd %s: %q, %v", strings.Join(argv, " "), line, err)
	}
	return relayDaemon{sock, cmd.Process.Pid}
}

// coldFloorSteps are the cold table's floors, timed in the same
// interleaved rounds as the cold calls: a hello-world process start,
// mcpxd's own start (`mcpxd version`: its package initialisation
// included), and scripts/coldfloor with two hops (CLI → daemon → server,
// zero work) and with none (the one-shot from a process of its own).
// With a systemd manager m, also the floor under systemd: coldfloor
// -connect on a socket unit whose Type=simple service is coldfloor
// -activated (the service stopped before each, as mcpx's is).
func coldFloorSteps(t *testing.T, e *Env, m *systemdtest.Manager) []coldStep {
	trivial, cold := buildTrivial(t), buildScript(t, "coldfloor")
	run := func(bin string, args ...string) func() {
		return func() {
			if r := e.Exec(bin, e.Work, args...); r.Code != 0 {
				t.Fatalf("%s", r)
			}
		}
	}
	echo := []string{"echo", `{"text":"x"}`, mcpxdBin, "demo-server"}
	steps := []coldStep{
		{"hello, cold rounds", func() {}, run(trivial)},
		{"mcpxd version", func() {}, run(mcpxdBin, "version")},
		{"cold floor", func() {}, run(cold, append([]string{"2"}, echo...)...)},
		{"cold floor, no hop", func() {}, run(cold, append([]string{"0"}, echo...)...)},
	}
	if m == nil {
		return steps
	}
	e.WriteUntrusted(filepath.Join(m.UnitDir(), "coldfloor.socket"), "[Socket]\nListenStream=%t/coldfloor.sock\nSocketMode=0600\n")
	e.WriteUntrusted(filepath.Join(m.UnitDir(), "coldfloor.service"), fmt.Sprintf(
		"[Unit]\nRequires=coldfloor.socket\nAfter=coldfloor.socket\nStartLimitIntervalSec=0\n\n[Service]\nType=simple\nExecStart=%s -activated %s\n",
		cold, strings.Join(echoQuoted(echo), " ")))
	for _, args := range [][]string{{"daemon-reload"}, {"start", "coldfloor.socket"}} {
		if out, err := m.Systemctl(args...); err != nil {
			t.Fatalf("systemctl %s: %v\n%s", args, err, out)
		}
	}
	stop := func() {
		if out, err := m.Systemctl("stop", "coldfloor.service"); err != nil {
			t.Fatalf("systemctl stop coldfloor.service: %v\n%s", err, out)
		}
	}
	return append(steps, coldStep{"cold floor, systemd", stop, run(cold, "-connect", filepath.Join(m.RuntimeDir(), "coldfloor.sock"))})
}

// echoQuoted quotes words for an ExecStart= line.
func echoQuoted(words []string) []string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + w + "'"
	}
	return q
}

// coldFloorRows adds the cold floors' rows, from the medians of the
// interleaved rounds (coldFloorSteps).
func coldFloorRows(tab *benchTable) {
	tab.cmds = append(tab.cmds,
		[2]string{"hello, cold rounds", "a Go program that does nothing (timed in the cold rounds)"},
		[2]string{"mcpxd version", "`mcpxd version` (the daemon binary's start and package inits)"},
		[2]string{"cold floor", "`coldfloor 2 echo '{\"text\":\"x\"}' mcpxd demo-server` (scripts/coldfloor: CLI → daemon → server, zero work)"},
		[2]string{"cold floor, no hop", "`coldfloor 0 echo '{\"text\":\"x\"}' mcpxd demo-server` (the one-shot, raw JSON-RPC, from its own process)"})
	hello, oneShot := tab.byName["hello, cold rounds"], tab.byName["one-shot"]
	tab.byName["one-shot + 2 hello"] = oneShot + 2*hello
	tab.byName["one-shot + hello + mcpxd version"] = oneShot + hello + tab.byName["mcpxd version"]
	tab.ratio("`mcpxd version` vs hello (the daemon binary's own start)", "mcpxd version", "hello, cold rounds", "")
	tab.ratio("floor: cold, CLI → daemon → server, zero work (scripts/coldfloor 2)", "cold floor", "one-shot", "≤ 1.3× (the target's floor)")
	tab.ratio("floor: the one-shot from its own process (scripts/coldfloor 0)", "cold floor, no hop", "one-shot", "")
	tab.ratio("floor: one-shot + 2 hello starts (added)", "one-shot + 2 hello", "one-shot", "≤ 1.3× (the target's floor)")
	tab.ratio("floor: one-shot + hello + `mcpxd version` (added: the daemon is mcpxd)", "one-shot + hello + mcpxd version", "one-shot", "≤ 1.3× (the target's floor)")
	tab.ratio("cold first call, direct manager, vs the cold floor", "cold direct", "cold floor", "")
	if _, ok := tab.byName["cold floor, systemd"]; ok {
		tab.cmds = append(tab.cmds, [2]string{"cold floor, systemd", "`systemctl --user stop coldfloor.service`, then `coldfloor -connect SOCKET` (timed; the service is `coldfloor -activated …`, Type=simple)"})
		tab.ratio("floor: cold under systemd, zero work (coldfloor.socket → coldfloor -activated)", "cold floor, systemd", "one-shot", "≤ 1.5× (the target's floor)")
		tab.ratio("cold first call, systemd, vs its floor", "cold systemd", "cold floor, systemd", "")
	}
}

// throughputTarget is a server of the throughput rows: its namespace,
// echo's arguments (JSON for the daemon, a map for mcp-go) and its command.
type throughputTarget struct {
	ns, args string
	argMap   map[string]any
	argv     []string
}

// throughputRows measures the throughput of echo calls on tg's server at
// c = 1, 8 and 32 three ways: the load generator (c keep-alive clients)
// through the daemon on sock, the same through scripts/relayd (bin) in
// front of a server of its own, and one in-process mcp-go client (c
// goroutines). Every server is warm first. Each way runs 2 s in all, in
// four rounds of 0.5 s, each round in a new order, so a burst of load on
// the shared machine hits all three alike. CPU per call is utime + stime
// over a way's windows: the daemon's, relayd's, and this process's (the
// load generator's HTTP clients, or the in-process mcp-go client), which
// shares the two cores with them.
func throughputRows(t *testing.T, tab *benchTable, shuffle *rand.Rand, tg throughputTarget, sock string, daemonPID int, bin string) {
	relay := startRelayd(t, bin, tg.argv...)
	direct, closeDirect := inProcessClient(t, tg.argv, tg.argMap)
	defer closeDirect()
	ways := []struct {
		call func() error
		pid  int
	}{
		{func() error { return daemonCall(sock, tg.ns, "echo", tg.args) }, daemonPID},
		{func() error { return daemonCall(relay.sock, tg.ns, "echo", tg.args) }, relay.pid},
		{direct, 0},
	}
	for _, w := range ways { // warm: the daemon's server has served the bench already
		for range 1000 {
			if err := w.call(); err != nil {
				t.Fatal(err)
			}
		}
	}
	const rounds, window = 4, 500 * time.Millisecond
	for _, c := range []int{1, 8, 32} {
		var calls [3]float64
		var cpu, own [3]time.Duration
		for range rounds {
			for _, i := range shuffle.Perm(len(ways)) {
				before, _ := proc.CPUTime(ways[i].pid)
				ownBefore, _ := proc.CPUTime(os.Getpid())
				calls[i] += throughput(c, window, ways[i].call) * window.Seconds()
				after, _ := proc.CPUTime(ways[i].pid)
				ownAfter, _ := proc.CPUTime(os.Getpid())
				cpu[i] += after - before
				own[i] += ownAfter - ownBefore
			}
		}
		perCall := func(d time.Duration, i int) string {
			return fmt.Sprintf("%.0f µs", float64(d/time.Microsecond)/max(1, calls[i]))
		}
		secs := rounds * window.Seconds()
		daemon, floor, base := calls[0]/secs, calls[1]/secs, calls[2]/secs
		call := tg.ns + ".echo"
		tab.note(fmt.Sprintf("throughput, %s, c = %d", call, c), fmt.Sprintf("%.0f vs %.0f calls/s; daemon CPU %s per call; load generator %s, in-process client %s", daemon, base,
			perCall(cpu[0], 0), perCall(own[0], 0), perCall(own[2], 2)),
			fmt.Sprintf("**%.0f %%**", 100*daemon/base), "≥ 85 %")
		tab.note(fmt.Sprintf("floor: zero-work relay daemon (scripts/relayd), %s, c = %d", call, c),
			fmt.Sprintf("%.0f vs %.0f calls/s; relayd CPU %s per call, load generator %s; the daemon makes %.0f %% of the relay's calls", floor, base,
				perCall(cpu[1], 1), perCall(own[1], 1), 100*daemon/floor),
			fmt.Sprintf("**%.0f %%**", 100*floor/base), "≥ 85 % (the target's floor)")
	}
}
