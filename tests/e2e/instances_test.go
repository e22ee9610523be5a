package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// pyServer is a minimal stdio MCP server in Python, the way many are
// written: one request at a time (most Node and Python servers), unless
// PY_THREADED=1 runs each tools/call on its own thread. Its tools:
//
//	echo     readOnlyHint: answers its text
//	hang     no annotations: never answers (sleeps an hour, blocking the
//	         server, which then answers nothing else either)
//	slow_ro  readOnlyHint: sleeps `seconds`, answers "slept"
//	slow     no annotations: the same
//
// PY_EXIT_AFTER_CALL=1 makes it exit right after writing the answer to a
// tools/call; PY_STARTED=path gets a line "started TOOL" as a slow tool
// begins.
const pyServer = `import json, os, sys, threading, time
exit_after = os.environ.get("PY_EXIT_AFTER_CALL") == "1"
threaded = os.environ.get("PY_THREADED") == "1"
started = os.environ.get("PY_STARTED")
lock = threading.Lock()
def send(m):
    with lock:
        sys.stdout.write(json.dumps(m) + "\n")
        sys.stdout.flush()
def tool(name, ro):
    t = {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}}}}
    if ro:
        t["annotations"] = {"readOnlyHint": True}
    return t
def call(mid, p):
    name, args = p["name"], p.get("arguments") or {}
    if name == "hang":
        time.sleep(3600)
    if name in ("slow", "slow_ro"):
        if started:
            with open(started, "a") as f:
                f.write("started " + name + "\n")
        time.sleep(float(args.get("seconds", 1)))
        text = "slept"
    else:
        text = args.get("text", "")
    send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    if exit_after:
        os._exit(0)
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    mid, method = m.get("id"), m.get("method")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool("echo", True), tool("hang", False), tool("slow_ro", True), tool("slow", False)]}})
    elif method == "tools/call":
        if threaded:
            threading.Thread(target=call, args=(mid, m["params"]), daemon=True).start()
        else:
            call(mid, m["params"])
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no method " + method}})
`

// writePyServer writes pyServer into e and returns the entry of a server
// running it with env (and the mcpx block, when not empty), as JSON. Like
// the npm servers, a missing python3 skips the test, except under CI.
func writePyServer(t *testing.T, e *Env, env map[string]string, mcpx string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 is not installed: %v", err)
		}
		t.Skip("python3 is not installed")
	}
	script := e.WriteUntrusted("py/server.py", pyServer)
	envJSON, _ := json.Marshal(env)
	entry := fmt.Sprintf(`{"command": %s, "args": [%s], "env": %s`, jsonString(py), jsonString(script), envJSON)
	if mcpx != "" {
		entry += `, "mcpx": ` + mcpx
	}
	return entry + "}"
}

// lsNamespace is one namespace of `mcpx ls --json`.
func lsNamespace(t *testing.T, e *Env, name string) map[string]any {
	t.Helper()
	var doc struct {
		Namespaces []map[string]any `json:"namespaces"`
	}
	e.JSON(&doc, "ls")
	for _, ns := range doc.Namespaces {
		if ns["name"] == name {
			return ns
		}
	}
	t.Fatalf("ls --json has no namespace %s: %+v", name, doc.Namespaces)
	return nil
}

// Row 4: a call that times out on a single-threaded server leaves it stuck
// in the tool; that instance is replaced, so the calls after it succeed,
// and ls counts the replacement.
func TestHungInstanceIsReplaced(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {"s": `+
		writePyServer(t, e, nil, `{"callTimeout": "6s"}`)+`}}`)
	if r := e.Mcpx("call", "s.hang"); r.Code != 3 || !strings.Contains(r.Stderr, "callTimeout") {
		t.Fatalf("the hanging call:\n%s", r)
	}
	for i := range 5 {
		want := fmt.Sprint("after-", i)
		if r := e.Mcpx("call", "s.echo", "text="+want); r.Code != 0 || r.Stdout != want {
			t.Fatalf("call %d after the hung one:\n%s", i+1, r)
		}
	}
	// The verdict on the hung instance comes a grace after its call
	// timed out, whether or not the calls above needed to wait for it.
	testkit.Eventually(t, 60*time.Second, "ls --json to count one replaced instance", func() bool {
		return lsNamespace(t, e, "s")["replaced"] == float64(1)
	})
	if r := e.MustOK("ls"); !strings.Contains(r.Stderr, "s: 1 hung instance replaced") {
		t.Errorf("ls does not count the replacement:\n%s", r)
	}
}

// callsLost runs n calls of ns.echo, par at a time, each from its own mcpx
// process, and returns the failures.
func callsLost(e *Env, ns string, n, par int) []string {
	var (
		mu     sync.Mutex
		failed []string
		wg     sync.WaitGroup
	)
	next := make(chan int)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				want := fmt.Sprint(ns, "-", i)
				if r := e.Mcpx("call", ns+".echo", "text="+want); r.Code != 0 || r.Stdout != want {
					mu.Lock()
					failed = append(failed, r.String())
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return failed
}

// Row 5: servers that exit right after each answer (the Go fixture, and a
// Python server) lose no call, one at a time or eight at a time; they are
// then given one instance per call, which ls and doctor say.
func TestNoCallLostToServersExitingAfterAnswer(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "d": {"command": %s, "env": {"FIXTURE_EXIT_AFTER_CALL": "1"}},
  "p": %s
}}`, jsonString(fixtureBin), writePyServer(t, e, map[string]string{"PY_EXIT_AFTER_CALL": "1"}, "")))
	for _, ns := range []string{"d", "p"} {
		for _, par := range []int{1, 8} {
			if failed := callsLost(e, ns, 60, par); len(failed) > 0 {
				t.Errorf("%s, %d at a time: %d of 60 calls lost; first:\n%s", ns, par, len(failed), failed[0])
			}
		}
		if ns := lsNamespace(t, e, ns); ns["exitsAfterAnswer"] != true {
			t.Errorf("ls --json does not say %s exits after each answer: %v", ns["name"], ns)
		}
	}
	r := e.MustOK("ls")
	for _, ns := range []string{"d", "p"} {
		if !strings.Contains(r.Stderr, ns+" exits after each answer, so each of its calls gets its own instance") {
			t.Errorf("ls does not say %s exits after each answer:\n%s", ns, r)
		}
	}
	if r := e.Mcpx("doctor"); !strings.Contains(r.Stdout, "d exits after each answer") {
		t.Errorf("doctor does not say d exits after each answer:\n%s", r)
	}
}

// Row 5, the rule both ways: a request a server read but did not answer
// before it exited is sent again when its tool is annotated readOnlyHint,
// and otherwise fails saying why it was not.
func TestResendOnlyWhatIsSafeToRepeat(t *testing.T) {
	e := NewEnv(t)
	started := filepath.Join(e.Root, "started.log")
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {"t": `+
		writePyServer(t, e, map[string]string{"PY_EXIT_AFTER_CALL": "1", "PY_THREADED": "1", "PY_STARTED": started}, "")+`}}`)

	// slowWhileExit runs TOOL, and while it runs in the server another
	// call that the same instance answers before exiting.
	slowWhileExit := func(tool string) Result {
		t.Helper()
		os.Remove(started)
		cmd := exec.Command(mcpxBin, "call", "t."+tool, "seconds=2")
		cmd.Dir, cmd.Env = e.Work, e.Environ()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 60*time.Second, tool+" to start in the server", func() bool {
			b, _ := os.ReadFile(started)
			return strings.Contains(string(b), "started "+tool)
		})
		if r := e.Mcpx("call", "t.echo", "text=bye"); r.Code != 0 || r.Stdout != "bye" {
			t.Fatalf("the call the server exits after:\n%s", r)
		}
		err := cmd.Wait()
		res := Result{Args: []string{"call", "t." + tool}, Stdout: out.String(), Stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			res.Code = ee.ExitCode()
		}
		return res
	}
	r := slowWhileExit("slow")
	if r.Code != 3 || !strings.Contains(r.Stderr, "was not sent again") || !strings.Contains(r.Stderr, "annotated neither readOnlyHint nor idempotentHint") {
		t.Errorf("an unannotated call the server may have read must fail saying why it was not sent again:\n%s", r)
	}
	// The server is now known to exit after each answer: forget it, so
	// the next calls share an instance again.
	e.MustOK("restart", "t")
	if r := slowWhileExit("slow_ro"); r.Code != 0 || r.Stdout != "slept" {
		t.Errorf("a readOnlyHint call the server may have read must be sent again:\n%s", r)
	}
}
