package daemon

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestSearchRoute(t *testing.T) {
	_, d, _ := startFixture(t)
	q := func(s string) string { return strings.ReplaceAll(s, " ", "+") }
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)
	var sr api.SearchResponse
	d.mustOK(http.MethodGet, api.PathSearch+"?q="+q("deleting notes"), nil, &sr)
	if len(sr.Results) == 0 || sr.Results[0].Namespace != "fx" || sr.Results[0].Name != "delete_note" || sr.Results[0].Definition != nil {
		t.Fatalf("search: %+v", sr.Results)
	}
	// Each hit says which query words it matched, and where.
	if why := sr.Results[0].Why; !slices.ContainsFunc(why, func(m api.SearchMatch) bool {
		return m.Word == "deleting" && slices.Contains(m.Fields, "name")
	}) {
		t.Errorf("why: %+v", why)
	}
	// An address is a word of the query, not a namespace filter.
	d.mustOK(http.MethodGet, api.PathSearch+"?q="+q("note at localhost:3000"), nil, &sr)
	if len(sr.Results) == 0 {
		t.Errorf("note at localhost:3000 found nothing")
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
	if len(sr.Unread) <= api.UnreadNamed || sr.UnreadMore != 0 {
		t.Fatalf("unread namespaces not all reported: %+v", sr)
	}
	// A brief answer names the first few and counts the rest.
	var brief api.SearchResponse
	d.mustOK(http.MethodGet, api.PathSearch+"?q=note&brief=1", nil, &brief)
	if !slices.Equal(brief.Unread, sr.Unread[:api.UnreadNamed]) || brief.UnreadMore != len(sr.Unread)-api.UnreadNamed ||
		len(brief.Results) != len(sr.Results) {
		t.Errorf("brief answer %+v, full %+v", brief, sr)
	}
	if code, e := d.do(http.MethodGet, api.PathSearch+"?q=", nil, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
		t.Errorf("empty search: %d %+v", code, e)
	}
}

// Ties sort by namespace.tool as a string: "a-.t00" before "a.t00".
func TestCompareQualified(t *testing.T) {
	if got := compareQualified(&api.Tool{Namespace: "a-", Name: "t"}, &api.Tool{Namespace: "a", Name: "t"}); got >= 0 {
		t.Errorf("a-.t sorts after a.t: %d", got)
	}
}
