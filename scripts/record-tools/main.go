// Command record-tools records the tools/list answers of real MCP servers
// for the search quality benchmark (search/testdata). It is run by hand,
// never by the tests, which read what it wrote:
//
//	(cd search/testdata/servers && npm ci --ignore-scripts)
//	go run ./scripts/record-tools [-only NAME,NAME]
//
// The servers, their arguments and the dummy credentials they need to
// start are listed in search/testdata/servers/servers.json; each is run
// from search/testdata/servers/node_modules/.bin (versions pinned by
// package-lock.json there) with stdin/stdout speaking newline-delimited
// JSON-RPC: initialize, notifications/initialized, then tools/list until
// no nextCursor is left. Each server's answer is written to
// search/testdata/tools/NAME.json: the package and version, serverInfo,
// the instructions, and every tool exactly as the server sent it.
//
// Nothing but the servers' own start-up runs; no token is real, so a
// server that needs the network or a live backend to list its tools is
// reported and skipped.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// server is one entry of servers.json.
type server struct {
	Name    string            `json:"name"`    // the namespace and the output file's name
	Package string            `json:"package"` // the npm package, for the record
	Bin     string            `json:"bin"`     // in node_modules/.bin
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"` // dummy credentials the server checks at start; "{servers}" is the servers directory
}

// record is what one NAME.json holds.
type record struct {
	Namespace       string            `json:"namespace"`
	Package         string            `json:"package"`
	Version         string            `json:"version"`
	ProtocolVersion string            `json:"protocolVersion"`
	ServerInfo      json.RawMessage   `json:"serverInfo"`
	Instructions    string            `json:"instructions,omitempty"`
	Tools           []json.RawMessage `json:"tools"`
}

func main() {
	only := flag.String("only", "", "record only these servers (comma-separated names)")
	dir := flag.String("dir", "search/testdata", "the benchmark's directory")
	flag.Parse()
	if err := run(*dir, *only); err != nil {
		fmt.Fprintln(os.Stderr, "record-tools:", err)
		os.Exit(1)
	}
}

func run(dir, only string) error {
	b, err := os.ReadFile(filepath.Join(dir, "servers", "servers.json"))
	if err != nil {
		return err
	}
	var servers []server
	if err := json.Unmarshal(b, &servers); err != nil {
		return fmt.Errorf("read servers.json: %w", err)
	}
	var want []string
	if only != "" {
		want = strings.Split(only, ",")
	}
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		return err
	}
	failed := 0
	for _, s := range servers {
		if want != nil && !slices.Contains(want, s.Name) {
			continue
		}
		rec, err := recordServer(dir, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
			failed++
			continue
		}
		out, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return fmt.Errorf("encode %s: %w", s.Name, err)
		}
		path := filepath.Join(dir, "tools", s.Name+".json")
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%-22s %3d tools  %s@%s\n", s.Name, len(rec.Tools), s.Package, rec.Version)
	}
	if failed > 0 {
		return fmt.Errorf("%d server(s) not recorded", failed)
	}
	return nil
}

// recordServer starts s, lists its tools and stops it.
func recordServer(dir string, s server) (*record, error) {
	version, err := packageVersion(dir, s.Package)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bin, err := filepath.Abs(filepath.Join(dir, "servers", "node_modules", ".bin", s.Bin))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, s.Args...)
	// A small, fixed environment: nothing of the caller's reaches a server.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LANG=C.UTF-8"}
	serversDir := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, "{servers}", serversDir))
	}
	cmd.Dir = os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	c := &conn{w: in, r: bufio.NewReaderSize(out, 1<<20)}
	rec := &record{Namespace: s.Name, Package: s.Package, Version: version}
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	err = c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpx-record-tools", "version": "1"},
	}, &init)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w\n%s", err, tail(stderr.String()))
	}
	rec.ProtocolVersion, rec.ServerInfo, rec.Instructions = init.ProtocolVersion, init.ServerInfo, init.Instructions
	if err := c.notify("notifications/initialized"); err != nil {
		return nil, err
	}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := c.call("tools/list", params, &page); err != nil {
			return nil, fmt.Errorf("tools/list: %w\n%s", err, tail(stderr.String()))
		}
		rec.Tools = append(rec.Tools, page.Tools...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(rec.Tools) == 0 {
		return nil, errors.New("no tools listed")
	}
	return rec, nil
}

// packageVersion reads the installed version of pkg.
func packageVersion(dir, pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "servers", "node_modules", pkg, "package.json"))
	if err != nil {
		return "", fmt.Errorf("%s is not installed (cd %s/servers && npm ci --ignore-scripts): %w", pkg, dir, err)
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("read %s's package.json: %w", pkg, err)
	}
	return p.Version, nil
}

// conn is a newline-delimited JSON-RPC connection to a server's stdio.
type conn struct {
	w    io.Writer
	r    *bufio.Reader
	next int
}

func (c *conn) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *conn) notify(method string) error {
	return c.send(map[string]any{"method": method})
}

// call sends a request and reads lines until its answer, skipping the
// server's notifications and log lines that are not JSON-RPC.
func (c *conn) call(method string, params any, result any) error {
	c.next++
	id := c.next
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("read the answer: %w", err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return fmt.Errorf("error %d: %s", msg.Error.Code, msg.Error.Message)
		}
		return json.Unmarshal(msg.Result, result)
	}
}

// tail is the last lines of a server's stderr.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}
