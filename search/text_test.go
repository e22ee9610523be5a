package search

import (
	"reflect"
	"testing"
)

func TestStem(t *testing.T) {
	for w, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "cats": "cat", "feed": "feed", "agreed": "agre",
		"plastered": "plaster", "motoring": "motor", "sing": "sing", "conflated": "conflat", "hopping": "hop",
		"filing": "file", "happy": "happi", "relational": "relat", "conditional": "condit",
		"generalization": "gener", "creating": "creat", "create": "creat", "entities": "entiti",
		"entity": "entiti", "observations": "observ", "files": "file", "reading": "read", "searching": "search",
		"directories": "directori", "directory": "directori", "x": "x", "mcp2": "mcp2",
	} {
		if got := stem(w); got != want {
			t.Errorf("stem(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"read_text_file":         {"read", "text", "file"},
		"get-tiny-image":         {"get", "tiny", "image"},
		"readTextFile":           {"read", "Text", "File"},
		"HTTPServer v2":          {"HTTP", "Server", "v", "2"},
		"open PRs, pageIDs":      {"open", "PRs", "page", "IDs"}, // an acronym's plural is one word
		"Returns the sum, quick": {"Returns", "the", "sum", "quick"},
	} {
		if got := words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		// Stop words and single letters go; the rest is stemmed.
		"remember a fact about the files": {"rememb", "fact", "file"},
		// A word written in parts is also kept whole: "gitlab" and "k8s"
		// find it; the digits of a word with letters only as its part.
		"GitLab project":  {"git", "lab", "gitlab", "project"},
		"k8s and v2 API":  {"k8s", "v2", "api"},
		"base64 encoding": {"base", "base64", "encod"},
		"tool_0042":       {"tool", "0042"},
		// Porter's "new" and "access" are other words.
		"news accessibility": {"news", "accessibility"},
	} {
		if got := terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTool(t *testing.T) {
	tool, err := ParseTool([]byte(`{"name":"t","annotations":{"title":"The T"},"description":"d",
		"inputSchema":{"type":"object","properties":{
			"state":{"type":"string","description":"Filter by state","enum":["open","closed"]},
			"files":{"type":"array","items":{"type":"object","properties":{"path":{"description":"where"}}}},
			"mode":{"anyOf":[{"const":"fast"},{"const":"slow"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Tool{Name: "t", Title: "The T", Description: "d", Params: []Param{
		{Name: "files"}, {Name: "path", Description: "where"},
		{Name: "mode", Enum: []string{"fast", "slow"}},
		{Name: "state", Description: "Filter by state", Enum: []string{"open", "closed"}},
	}}
	if !reflect.DeepEqual(tool, want) {
		t.Errorf("ParseTool = %+v, want %+v", tool, want)
	}
	if _, err := ParseTool([]byte(`{"name":`)); err == nil {
		t.Error("a broken definition parsed")
	}
}

// Irregular forms reduce to their base word's term, in documents and
// queries alike.
func TestTermIrregular(t *testing.T) {
	for w, base := range map[string]string{"sent": "send", "written": "writes", "overwritten": "overwrite", "children": "child", "shown": "showing"} {
		got, _ := term(w)
		want, _ := term(base)
		if got != want {
			t.Errorf("term(%q) = %q, want %q (term(%q))", w, got, want, base)
		}
	}
}

func TestIsPlural(t *testing.T) {
	for w, want := range map[string]bool{
		"requests": true, "pods": true, "entities": true, "issues": true, "details": true, "prs": true,
		"request": false, "status": false, "bus": false, "access": false, "analysis": false, "news": false, "is": false, "pod": false,
	} {
		if got := isPlural(w); got != want {
			t.Errorf("isPlural(%q) = %v, want %v", w, got, want)
		}
	}
}
