package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// everythingConfig writes a config with server-everything alone.
func everythingConfig(t *testing.T, e *Env) {
	t.Helper()
	everything := npmBin(t, "mcp-server-everything")
	e.WriteFile(e.Work+"/.mcp.json", `{"mcpServers": {"everything": {"command": `+jsonString(everything)+`, "args": ["stdio"]}}}`)
}

func TestResourcesAndPromptsOfEverything(t *testing.T) {
	e := NewEnv(t)
	everythingConfig(t, e)

	// Never read: listing answers from the cache, starts nothing, and says so.
	var rr api.ResourcesResponse
	e.JSON(&rr, "resources")
	if len(rr.Resources) != 0 || len(rr.Namespaces) != 1 || rr.Namespaces[0].State != api.StateUnread {
		t.Fatalf("before refresh: %+v", rr)
	}
	if procs := serverProcesses(e); len(procs) != 0 {
		t.Fatalf("listing resources started servers: %v", procs)
	}

	e.MustOK("refresh")
	e.JSON(&rr, "resources", "everything")
	var doc string
	for _, r := range rr.Resources {
		if strings.HasPrefix(r.URI, "demo://") && strings.HasSuffix(r.URI, ".md") {
			doc = r.URI
		}
		if r.Namespace != "everything" || len(r.Definition) == 0 {
			t.Errorf("resource %+v", r)
		}
	}
	if doc == "" {
		t.Fatalf("no demo:// document in %+v", rr.Resources)
	}
	if len(rr.Templates) == 0 {
		t.Errorf("no resource templates: %+v", rr)
	}
	if r := e.MustOK("resources"); !strings.Contains(r.Stdout, doc) {
		t.Errorf("text listing lacks %s:\n%s", doc, r.Stdout)
	}

	// Text is printed byte for byte: what --json carries, nothing added.
	var read api.ReadResponse
	e.JSON(&read, "read", "everything", doc)
	var result struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(read.Result, &result); err != nil || len(result.Contents) != 1 || result.Contents[0].Text == "" {
		t.Fatalf("read %s: %s (%v)", doc, read.Result, err)
	}
	if r := e.MustOK("read", "everything", doc); r.Stdout != result.Contents[0].Text {
		t.Errorf("read printed %q, want the text exactly %q", r.Stdout, result.Contents[0].Text)
	}

	// Binary contents go to the store; the path is printed.
	r := e.MustOK("read", "everything", "demo://resource/dynamic/blob/1")
	path, _, _ := strings.Cut(strings.TrimSpace(r.Stdout), " ")
	if !strings.Contains(path, "/cas/sha256/") {
		t.Fatalf("blob read printed %q", r.Stdout)
	}
	if data, err := os.ReadFile(path); err != nil || len(data) == 0 {
		t.Errorf("blob %s: %v (%d bytes)", path, err, len(data))
	}
	save := e.Root + "/saved"
	if r := e.MustOK("read", "--save", save, "everything", "demo://resource/dynamic/blob/2"); !strings.Contains(r.Stdout, save) {
		t.Errorf("--save printed %q", r.Stdout)
	}

	var pr api.PromptsResponse
	e.JSON(&pr, "prompts")
	found := false
	for _, p := range pr.Prompts {
		if p.Name == "args-prompt" {
			found = len(p.Arguments) > 0 && p.Arguments[0].Name == "city" && p.Arguments[0].Required
		}
	}
	if !found {
		t.Fatalf("prompts lack args-prompt with its required city: %+v", pr.Prompts)
	}
	if r := e.MustOK("prompt", "everything.args-prompt", "city=Paris"); !strings.Contains(r.Stdout, "Paris") {
		t.Errorf("prompt printed %q, want a message naming Paris", r.Stdout)
	}
	var got api.PromptResponse
	e.JSON(&got, "prompt", "everything.args-prompt", "city=Paris")
	if !strings.Contains(string(got.Result), `"messages"`) || !strings.Contains(string(got.Result), "Paris") {
		t.Errorf("prompt --json: %s", got.Result)
	}

	// Bad input: exit 2 with a way out.
	if r := e.Mcpx("prompt", "everything.args-promt"); r.Code != 2 || !strings.Contains(r.Stderr, "args-prompt") {
		t.Errorf("misspelt prompt: %s", r)
	}
	if r := e.Mcpx("prompt", "everything.args-prompt", "city"); r.Code != 2 {
		t.Errorf("argument without =: %s", r)
	}
	if r := e.Mcpx("read", "everything"); r.Code != 2 {
		t.Errorf("read without URI: %s", r)
	}
	if r := e.Mcpx("read", "everything", "demo://nothing/here"); r.Code != 1 {
		t.Errorf("read of an unknown URI: %s", r)
	}
}
