package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Every host's file, written the way that host writes it (its own keys,
// variables and oddities), is found without --config and its server is
// callable through a real npm server (server-memory).

type hostCase struct {
	name string
	// file is relative to HOME (user-level) or, when it starts with "work/",
	// to the Env root (project-level; written and trusted).
	file    string
	content func(mem, memFile string) string
	// want are the namespaces that must be callable; absent must not exist.
	want, absent []string
	// invalid are namespaces listed as unusable entries.
	invalid []string
}

func hostCases() []hostCase {
	return []hostCase{
		{name: "claude-code-user", file: ".claude.json", want: []string{"cc"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "numStartups": 12,
  "autoUpdates": false,
  "projects": {"/nowhere": {"allowedTools": [], "mcpServers": {}}},
  "mcpServers": {
    "cc": {"type": "stdio", "command": %s, "args": [], "env": {"MEMORY_FILE_PATH": "${MCPX_E2E_UNSET_MEM:-%s}"}}
  }
}`, jsonString(mem), f)
		}},
		{name: "claude-desktop", file: ".config/Claude/claude_desktop_config.json", want: []string{"desk"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "mcpServers": {
    "desk": {"command": %s, "args": [], "env": {"MEMORY_FILE_PATH": %s}}
  },
  "globalShortcut": "Ctrl+Space"
}`, jsonString(mem), jsonString(f))
		}},
		{name: "cursor", file: ".cursor/mcp.json", want: []string{"cur"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "mcpServers": {
    "cur": {"command": %s, "env": {"MEMORY_FILE_PATH": "${userHome}/cursor-mem.jsonl"}, "envFile": ".env"}
  }
}`, jsonString(mem))
		}},
		{name: "vscode-user", file: ".config/Code/User/mcp.json", want: []string{"vsc"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
	"inputs": [],
	"servers": {
		"vsc": {
			"type": "stdio",
			"command": %s,
			"args": [],
			"env": {"MEMORY_FILE_PATH": "${env:HOME}/vscode-mem.jsonl"},
			"dev": {"watch": "src/**/*.ts"}
		}
	}
}`, jsonString(mem))
		}},
		{name: "vscode-settings", file: ".config/Code/User/settings.json", want: []string{"vset"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
    "editor.fontSize": 14,
    // MCP servers in settings, the older place
    "mcp": {
        "servers": {
            "vset": {"type": "stdio", "command": %s, "env": {"MEMORY_FILE_PATH": %s}},
        },
    },
}`, jsonString(mem), jsonString(f))
		}},
		{name: "vscode-project", file: "work/.vscode/mcp.json", want: []string{"vproj"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "servers": {
    "vproj": {"type": "stdio", "command": %s, "env": {"MEMORY_FILE_PATH": "${workspaceFolder}${pathSeparator}vproj.jsonl"}}
  }
}`, jsonString(mem))
		}},
		{name: "windsurf", file: ".codeium/windsurf/mcp_config.json", want: []string{"wind"}, absent: []string{"off"}, invalid: []string{"remote"},
			content: func(mem, f string) string {
				return fmt.Sprintf(`{
  "mcpServers": {
    "wind": {"command": %s, "args": [], "env": {"MEMORY_FILE_PATH": %s}, "disabledTools": ["delete_entities"]},
    "remote": {"serverUrl": "ws://localhost:9/mcp", "headers": {"X": "y"}},
    "off": {"command": "false", "disabled": true}
  }
}`, jsonString(mem), jsonString(f))
			}},
		{name: "gemini", file: ".gemini/settings.json", want: []string{"gem"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "theme": "GitHub",
  "mcpServers": {
    "gem": {"command": %s, "env": {"MEMORY_FILE_PATH": "$HOME/gemini-mem.jsonl"}, "timeout": 30000, "trust": false,
            "includeTools": ["read_graph", "search_nodes"]}
  }
}`, jsonString(mem))
		}},
		{name: "codex", file: ".codex/config.toml", want: []string{"cdx"}, absent: []string{"codex_off"}, content: func(mem, f string) string {
			return fmt.Sprintf(`model = "gpt-5"

[mcp_servers.cdx]
command = %s
args = []
startup_timeout_sec = 20
env = { "MEMORY_FILE_PATH" = %s }

[mcp_servers.codex_off]
command = "false"
enabled = false
`, jsonString(mem), jsonString(f))
		}},
		{name: "opencode", file: ".config/opencode/opencode.json", want: []string{"oc"}, absent: []string{"ocoff"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "oc": {"type": "local", "command": [%s], "enabled": true, "environment": {"MEMORY_FILE_PATH": "{env:HOME}/oc-mem.jsonl"}},
    "ocoff": {"type": "local", "command": ["false"], "enabled": false}
  }
}`, jsonString(mem))
		}},
		// opencode's newer layout: servers under mcp.servers, "disabled",
		// the split timeout; in a project file, whose directory it runs in.
		{name: "opencode-v2", file: "work/opencode.jsonc", want: []string{"oc2"}, absent: []string{"oc2off", "servers"}, content: func(mem, f string) string {
			return fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "timeout": {"startup": 30000},
    "servers": {
      // server-memory, with its file in the project
      "oc2": {"type": "local", "command": [%s], "cwd": ".", "environment": {"MEMORY_FILE_PATH": "{env:HOME}/oc2-mem.jsonl"}, "timeout": {"request": 60000}},
      "oc2off": {"type": "local", "command": ["false"], "disabled": true},
    },
  },
}`, jsonString(mem))
		}},
		{name: "zed", file: ".config/zed/settings.json", want: []string{"zd"}, invalid: []string{"ext"}, content: func(mem, f string) string {
			return fmt.Sprintf(`// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "zd": {"source": "custom", "command": %s, "args": [], "env": {"MEMORY_FILE_PATH": %s}},
    "ext": {"source": "extension", "settings": {}}
  }
}`, jsonString(mem), jsonString(f))
		}},
		{name: "cline", file: ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
			want: []string{"cl"}, absent: []string{"cloff"}, content: func(mem, f string) string {
				return fmt.Sprintf(`{
  "mcpServers": {
    "cl": {"command": %s, "args": [], "env": {"MEMORY_FILE_PATH": %s}, "disabled": false, "autoApprove": []},
    "cloff": {"command": %s, "disabled": true, "autoApprove": []}
  }
}`, jsonString(mem), jsonString(f), jsonString(mem))
			}},
	}
}

func TestHostConfigs(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	for _, hc := range hostCases() {
		t.Run(hc.name, func(t *testing.T) {
			e := NewEnv(t)
			memFile := filepath.Join(e.Root, hc.name+".jsonl")
			if rest, ok := strings.CutPrefix(hc.file, "work/"); ok {
				e.WriteFile(filepath.Join(e.Work, rest), hc.content(mem, memFile))
			} else {
				e.WriteUntrusted(filepath.Join(e.Home, hc.file), hc.content(mem, memFile))
			}
			var ns api.NamespacesResponse
			e.JSON(&ns, "ls")
			got := map[string]api.Namespace{}
			for _, n := range ns.Namespaces {
				got[n.Name] = n
			}
			for _, name := range hc.want {
				if _, ok := got[name]; !ok {
					t.Fatalf("namespace %s not found: %+v\n%s", name, ns, e.Mcpx("config"))
				}
				r := e.MustOK("call", name+".read_graph")
				if !strings.Contains(r.Stdout, "entities") {
					t.Errorf("%s.read_graph: %s", name, r)
				}
			}
			for _, name := range hc.absent {
				if _, ok := got[name]; ok {
					t.Errorf("disabled server %s is listed", name)
				}
			}
			for _, name := range hc.invalid {
				if n, ok := got[name]; !ok || n.State != api.StateInvalid || n.Error == "" {
					t.Errorf("unusable entry %s: %+v", name, n)
				}
				r := e.Mcpx("call", name+".x")
				if r.Code != 2 {
					t.Errorf("call on an unusable entry: %s", r)
				}
			}
			// config --path names the file and its host.
			var doc struct {
				Files   []struct{ Path, Host, Level string } `json:"files"`
				Servers map[string]struct {
					Env  map[string]string `json:"env"`
					Mcpx struct {
						CallTimeout, StartTimeout string
					} `json:"mcpx"`
				} `json:"servers"`
			}
			e.JSON(&doc, "config")
			if hc.name == "opencode-v2" {
				if got := doc.Servers["oc2"].Mcpx; got.StartTimeout != "30s" || got.CallTimeout != "1m0s" {
					t.Errorf("opencode V2 timeouts: %+v, want startTimeout 30s (mcp.timeout.startup), callTimeout 1m0s (its timeout.request)", got)
				}
			}
			if hc.name == "vscode-project" {
				// ${workspaceFolder} is the directory holding .vscode.
				if got := doc.Servers["vproj"].Env["MEMORY_FILE_PATH"]; got != filepath.Join(e.Work, "vproj.jsonl") {
					t.Errorf("${workspaceFolder}${pathSeparator}vproj.jsonl became %q", got)
				}
			}
			found := false
			for _, f := range doc.Files {
				if strings.HasSuffix(f.Path, strings.TrimPrefix(hc.file, "work/")) && f.Host != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("config --json files %+v lack %s", doc.Files, hc.file)
			}
		})
	}
}

// Tool filters of a host are mcpx's tools/excludeTools.
func TestHostToolFilters(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	e := NewEnv(t)
	for _, hc := range hostCases() {
		if hc.name == "gemini" || hc.name == "windsurf" {
			e.WriteUntrusted(filepath.Join(e.Home, hc.file), hc.content(mem, filepath.Join(e.Root, hc.name+".jsonl")))
		}
	}
	e.MustOK("refresh", "gem")
	e.MustOK("refresh", "wind")
	var tools api.ToolsResponse
	e.JSON(&tools, "ls", "gem")
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "read_graph,search_nodes" {
		t.Errorf("gemini includeTools: tools %v", names)
	}
	e.JSON(&tools, "ls", "wind")
	for _, tl := range tools.Tools {
		if tl.Name == "delete_entities" {
			t.Error("windsurf disabledTools: delete_entities listed")
		}
	}
	if len(tools.Tools) < 3 {
		t.Errorf("windsurf tools %+v", tools.Tools)
	}

	// A hidden tool is not "unknown; did you mean …": the answer names
	// the filter and its file, and is a refusal (exit 4), for call,
	// schema and call --help alike.
	windFile := filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json")
	gemFile := filepath.Join(e.Home, ".gemini", "settings.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "wind.delete_entities", `entityNames=["x"]`}, `wind.delete_entities is hidden by "disabledTools" in ` + windFile},
		{[]string{"schema", "wind.delete_entities"}, `wind.delete_entities is hidden by "disabledTools" in ` + windFile},
		{[]string{"call", "wind.delete_entities", "--help"}, `wind.delete_entities is hidden by "disabledTools" in ` + windFile},
		{[]string{"call", "gem.create_entities"}, `gem.create_entities is hidden: "includeTools" in ` + gemFile + " does not list it"},
	} {
		r := e.Mcpx(c.args...)
		if r.Code != 4 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "did you mean") {
			t.Errorf("want exit 4 saying %q:\n%s", c.want, r)
		}
		var doc struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		r = e.Mcpx(append([]string{"--json"}, c.args...)...)
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 4 || doc.Error.Code != api.CodeToolHidden || !strings.Contains(doc.Error.Message, c.want) {
			t.Errorf("--json: want tool_hidden saying %q:\n%s", c.want, r)
		}
	}
	// A tool the server does not have is still unknown, with a suggestion.
	if r := e.Mcpx("call", "wind.read_grph"); r.Code != 2 || !strings.Contains(r.Stderr, "did you mean wind.read_graph?") {
		t.Errorf("a misspelt tool: %s", r)
	}
}

// Claude Code's local scope (projects[<dir>].mcpServers in ~/.claude.json)
// applies in that directory and below, not elsewhere.
func TestClaudeLocalScope(t *testing.T) {
	mem := npmBin(t, "mcp-server-memory")
	e := NewEnv(t)
	proj := filepath.Join(e.Work, "proj")
	sub := filepath.Join(proj, "sub")
	other := filepath.Join(e.Work, "other")
	for _, d := range []string{sub, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.WriteUntrusted(filepath.Join(e.Home, ".claude.json"), fmt.Sprintf(`{
  "projects": {
    %s: {"allowedTools": [], "mcpServers": {"local": {"type": "stdio", "command": %s, "env": {"MEMORY_FILE_PATH": %s}}}}
  },
  "mcpServers": {}
}`, jsonString(proj), jsonString(mem), jsonString(filepath.Join(e.Root, "local.jsonl"))))
	for _, dir := range []string{proj, sub} {
		if r := e.McpxIn(dir, "call", "local.read_graph"); r.Code != 0 {
			t.Fatalf("local scope in %s: %s", dir, r)
		}
	}
	if r := e.McpxIn(other, "call", "local.read_graph"); r.Code != 2 {
		t.Fatalf("local scope outside its project: %s", r)
	}
}

// A Codex TOML syntax error is reported with file:line:col, and the rest
// of the configuration still loads.
func TestCodexSyntaxError(t *testing.T) {
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Home, ".codex", "config.toml"), "model = \"x\"\n[mcp_servers.a\ncommand = \"y\"\n")
	r := e.Mcpx("config", "--path")
	if r.Code != 0 || !strings.Contains(r.Stderr, ".codex/config.toml:2:") {
		t.Fatalf("toml syntax error: %s", r)
	}
}

// A VS Code ${input:ID} without a terminal to ask on is a clear error
// naming the input; it is never sent literally.
func TestVSCodeInputWithoutTerminal(t *testing.T) {
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "Code", "User", "mcp.json"), `{
  "inputs": [{"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true}],
  "servers": {"gh": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${input:gh-token}"}}}
}`)
	r := e.Mcpx("call", "gh.anything")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"gh-token"`) || !strings.Contains(r.Stderr, "terminal") {
		t.Fatalf("input without a terminal: %s", r)
	}
}

// startRemoteFixture runs the fixture server on streamable HTTP ("http")
// or HTTP+SSE ("sse") and returns its URL.
func startRemoteFixture(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.Command(fixtureBin, "--"+mode, "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("fixture --%s: %v", mode, err)
	}
	return strings.TrimSpace(line)
}

// Remote entries mean what their host says: Gemini's url is SSE and its
// httpUrl streamable HTTP, Windsurf's serverUrl is a remote URL, Codex's
// bearer_token_env_var becomes an Authorization header.
func TestHostRemoteTransports(t *testing.T) {
	sse := startRemoteFixture(t, "sse")
	streamable := startRemoteFixture(t, "http")
	e := NewEnv(t)
	e.WriteUntrusted(filepath.Join(e.Home, ".gemini", "settings.json"), fmt.Sprintf(`{
  "mcpServers": {
    "gsse": {"url": %s, "timeout": 10000},
    "ghttp": {"httpUrl": %s, "headers": {"X-Test": "$HOME"}}
  }
}`, jsonString(sse), jsonString(streamable)))
	e.WriteUntrusted(filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json"), fmt.Sprintf(`{
  "mcpServers": {"wremote": {"serverUrl": %s}}
}`, jsonString(streamable)))
	e.Set("CODEX_GH_TOKEN", "tok")
	e.WriteUntrusted(filepath.Join(e.Home, ".codex", "config.toml"), fmt.Sprintf(`[mcp_servers.cremote]
url = %s
bearer_token_env_var = "CODEX_GH_TOKEN"
`, jsonString(streamable)))
	var doc struct {
		Servers map[string]struct {
			Transport string            `json:"transport"`
			Headers   map[string]string `json:"headers"`
		} `json:"servers"`
	}
	e.JSON(&doc, "config")
	if doc.Servers["gsse"].Transport != "sse" || doc.Servers["ghttp"].Transport != "http" ||
		doc.Servers["ghttp"].Headers["X-Test"] != "${HOME}" || doc.Servers["cremote"].Headers["Authorization"] != "Bearer ${CODEX_GH_TOKEN}" {
		t.Fatalf("transports: %+v", doc.Servers)
	}
	for _, ns := range []string{"gsse", "ghttp", "wremote", "cremote"} {
		if r := e.MustOK("call", ns+".echo", "text="+ns); r.Stdout != ns {
			t.Errorf("%s: %s", ns, r)
		}
	}
}
