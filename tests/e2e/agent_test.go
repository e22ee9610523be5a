package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Arguments travel raw and the daemon types and checks them against the
// tool's schema (issue #10): the real npm servers' schemas.
func TestArgumentsCheckedByTheDaemon(t *testing.T) {
	e := NewEnv(t)
	shared := npmConfig(t, e)
	e.MustOK("refresh")
	greeting := filepath.Join(shared, "greeting.txt")

	// An unknown argument names the nearest parameter, exit 2, one line.
	r := e.Mcpx("call", "filesystem.read_text_file", "path="+greeting, "haed=1")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"haed"`) || !strings.Contains(r.Stderr, "did you mean head?") {
		t.Fatalf("unknown argument: want exit 2 suggesting head\n%s", r)
	}
	// A missing required argument is named.
	r = e.Mcpx("call", "everything.get-sum", "a=1")
	if r.Code != 2 || !strings.Contains(r.Stderr, `needs argument "b"`) {
		t.Fatalf("missing required: want exit 2 naming b\n%s", r)
	}
	// A wrong type is refused before the server sees it.
	r = e.Mcpx("call", "everything.get-sum", "a=one", "b=2")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"one" is not a number`) {
		t.Fatalf("wrong type: want exit 2\n%s", r)
	}
	r = e.Mcpx("call", "everything.get-sum", `{"a": "1", "b": 2}`)
	if r.Code != 2 || !strings.Contains(r.Stderr, "/a") {
		t.Fatalf("wrong type in a JSON object: want exit 2 naming /a\n%s", r)
	}
	// --no-validate sends as given: the server itself answers.
	r = e.Mcpx("call", "--no-validate", "filesystem.read_text_file", "path="+greeting, "haed=1")
	if r.Code != 0 || r.Stdout != "hello from the filesystem server\n" {
		t.Fatalf("--no-validate:\n%s", r)
	}

	// @FILE: the whole object from a file; key=@FILE: one value.
	args := e.WriteFile("args.json", `{"a": 20, "b": 22}`)
	if r := e.MustOK("call", "everything.get-sum", "@"+args); !strings.Contains(r.Stdout, "42") {
		t.Fatalf("@FILE:\n%s", r)
	}
	msg := e.WriteFile("message.txt", "from a file\nwith two lines\n")
	if r := e.MustOK("call", "everything.echo", "message=@"+msg); !strings.Contains(r.Stdout, "from a file\nwith two lines\n") {
		t.Fatalf("key=@FILE:\n%s", r)
	}
	// A repeated key builds an array where the schema says array.
	other := e.WriteFile(filepath.Join(shared, "other.txt"), "second file\n")
	r = e.MustOK("call", "filesystem.read_multiple_files", "paths="+greeting, "paths="+other)
	if !strings.Contains(r.Stdout, "hello from the filesystem server") || !strings.Contains(r.Stdout, "second file") {
		t.Fatalf("repeated key as array:\n%s", r)
	}
	var cr api.CallResponse
	e.JSON(&cr, "call", "memory.create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["o"]}]}`)
	if cr.IsError {
		t.Fatalf("create_entities: %s", cr.Result)
	}
}

// Text is written exactly as the server sent it; --raw keeps binary data.
func TestFaithfulOutput(t *testing.T) {
	e := NewEnv(t)
	shared := npmConfig(t, e)
	// A file without a final newline, and one with odd whitespace.
	for name, content := range map[string]string{
		"nonl.txt":  "no newline at the end",
		"odd.txt":   "\n\ttabs and\r\nCRLF  \n\n",
		"plain.txt": "one line\n",
	} {
		path := e.WriteFile(filepath.Join(shared, name), content)
		r := e.MustOK("call", "filesystem.read_text_file", "path="+path)
		got := filepath.Join(e.Root, "copy-"+name)
		if err := os.WriteFile(got, []byte(r.Stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(path)
		if !bytes.Equal([]byte(r.Stdout), want) {
			t.Errorf("%s through read_text_file differs: got %q, want %q", name, r.Stdout, want)
		}
	}

	// --raw: the result exactly as received, image data intact.
	r := e.MustOK("call", "--raw", "everything.get-tiny-image")
	var raw struct {
		Content []struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
		t.Fatalf("--raw is not JSON: %v\n%s", err, r)
	}
	var image []byte
	for _, c := range raw.Content {
		if c.Type == "image" {
			var err error
			if image, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
				t.Fatalf("--raw image data is not base64: %v", err)
			}
		}
	}
	if !bytes.HasPrefix(image, []byte("\x89PNG")) || strings.Contains(r.Stdout, "_mcpx") {
		t.Fatalf("--raw lost the image data:\n%s", r.Stdout)
	}
	// --raw --json: the same result, the stored path beside it.
	var withPaths api.CallResponse
	e.JSON(&withPaths, "call", "--output", "raw", "everything.get-tiny-image")
	if len(withPaths.Blobs) != 1 || !strings.Contains(string(withPaths.Result), `"data"`) {
		t.Fatalf("--raw --json: %+v", withPaths)
	}
	stored, err := os.ReadFile(withPaths.Blobs[0].Path)
	if err != nil || !bytes.Equal(stored, image) {
		t.Fatalf("stored blob differs from the inline image (%v)", err)
	}
	// Text mode prints the path instead of base64.
	r = e.MustOK("call", "everything.get-tiny-image")
	if !strings.Contains(r.Stdout, withPaths.Blobs[0].Path) || strings.Contains(r.Stdout, "iVBOR") {
		t.Fatalf("text mode:\n%s", r)
	}
}
