package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
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
		"Returns the sum, quick": {"Returns", "the", "sum", "quick"},
	} {
		if got := words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
	if got := terms("remember a fact about the files"); !reflect.DeepEqual(got, []string{"rememb", "fact", "file"}) {
		t.Errorf("terms drop stop words and stem: %q", got)
	}
}

// searchTools ranks tools as serveSearch does, without a daemon.
func searchTools(tools []api.Tool, q string, limit int) []string {
	var ptrs []*api.Tool
	var docs []*searchDoc
	for i := range tools {
		ptrs = append(ptrs, &tools[i])
		docs = append(docs, newSearchDoc(tools[i]))
	}
	var out []string
	for _, h := range rank([]*searchIndex{newSearchIndex(ptrs, docs)}, terms(q), limit) {
		out = append(out, h.Namespace+"."+h.Name)
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	tools := []api.Tool{
		{Namespace: "b", Name: "image", Description: "Draws a picture."},
		{Namespace: "a", Name: "paint", Description: "An image tool with many other words in its description."},
		{Namespace: "a", Name: "resizeImage", Description: "Make smaller."},
		{Namespace: "c", Name: "other", Description: "Nothing at all."},
		{Namespace: "a", Name: "picture", Description: "Unrelated."},
		{Namespace: "d", Name: "image", Description: "Draws a picture."},
	}
	// A word in the name ranks over one in the description; equal scores
	// sort by namespace.tool; camelCase names are split.
	got := searchTools(tools, "Images", 0)
	want := []string{"b.image", "d.image", "a.resizeImage", "a.paint"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("search images = %v, want %v", got, want)
	}
	// Stop words match nothing: "a" alone finds no tool.
	if got := searchTools(tools, "a the of", 0); len(got) != 0 {
		t.Errorf("stop words matched %v", got)
	}
	// Matching two words beats matching one.
	if got := searchTools(tools, "image picture", 0); got[0] != "b.image" || got[1] != "d.image" {
		t.Errorf("search image picture = %v", got)
	}
	if got := searchTools(tools, "image", 2); len(got) != 2 {
		t.Errorf("limit 2 gave %v", got)
	}
	// Parameter names and titles count.
	withParams := []api.Tool{
		{Namespace: "x", Name: "one", Description: "Does one thing.", Definition: json.RawMessage(`{"name":"one","title":"Weather Forecast","inputSchema":{"properties":{"city":{}}}}`)},
		{Namespace: "x", Name: "two", Description: "Does another thing.", Definition: json.RawMessage(`{"name":"two"}`)},
	}
	if got := searchTools(withParams, "city", 0); !reflect.DeepEqual(got, []string{"x.one"}) {
		t.Errorf("parameter name: %v", got)
	}
	if got := searchTools(withParams, "forecasts", 0); !reflect.DeepEqual(got, []string{"x.one"}) {
		t.Errorf("title: %v", got)
	}
}

func TestSearchRoute(t *testing.T) {
	_, d, _ := startFixture(t)
	q := func(s string) string { return strings.ReplaceAll(s, " ", "+") }
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)
	var sr api.SearchResponse
	d.mustOK(http.MethodGet, api.PathSearch+"?q="+q("deleting notes"), nil, &sr)
	if len(sr.Results) == 0 || sr.Results[0].Namespace != "fx" || sr.Results[0].Name != "delete_note" || sr.Results[0].Definition != nil {
		t.Fatalf("search: %+v", sr.Results)
	}
	// NS: prefix and ?ns= filter; an unknown namespace is 404.
	d.mustOK(http.MethodGet, api.PathSearch+"?q="+q("fx: note")+"&limit=1", nil, &sr)
	if len(sr.Results) != 1 || sr.Results[0].Namespace != "fx" {
		t.Fatalf("fx: note limit 1: %+v", sr.Results)
	}
	if code, e := d.do(http.MethodGet, api.PathSearch+"?q=note&ns=nosuch", nil, nil); code != http.StatusNotFound || e.Code != api.CodeUnknownNamespace {
		t.Errorf("unknown ns: %d %+v", code, e)
	}
	// Namespaces never read are named, not silently empty.
	d.mustOK(http.MethodGet, api.PathSearch+"?q=note", nil, &sr)
	if len(sr.Unread) == 0 {
		t.Errorf("unread namespaces not reported: %+v", sr)
	}
	if code, e := d.do(http.MethodGet, api.PathSearch+"?q=", nil, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
		t.Errorf("empty search: %d %+v", code, e)
	}
}

// A limit keeps the best hits of the whole ranking, in its order, also
// when scores tie across namespaces whose names are prefixes of each other.
func TestSearchLimitIsTopOfRanking(t *testing.T) {
	var tools []api.Tool
	for i := range 60 {
		ns := []string{"a", "a-", "ab", "b"}[i%4]
		desc := strings.Repeat("filler ", i%7) + "image"
		if i%5 == 0 {
			desc = "picture"
		}
		tools = append(tools, api.Tool{Namespace: ns, Name: fmt.Sprintf("t%02d", i%9), Description: desc})
	}
	all := searchTools(tools, "image picture", 0)
	if len(all) != len(tools) {
		t.Fatalf("every tool matches one of the words: %d of %d", len(all), len(tools))
	}
	for _, limit := range []int{1, 2, 7, 10, 59, 60, 100} {
		got := searchTools(tools, "image picture", limit)
		want := all[:min(limit, len(all))]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d = %v, want %v", limit, got, want)
		}
	}
	// Ties sort by namespace.tool as a string: "a-.t00" before "a.t00".
	if got := compareQualified(&api.Tool{Namespace: "a-", Name: "t"}, &api.Tool{Namespace: "a", Name: "t"}); got >= 0 {
		t.Errorf("a-.t sorts after a.t: %d", got)
	}
}
