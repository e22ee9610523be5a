package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Outputs of `conformance list`, as the pinned suites print them.
const plainList = `Server scenarios (test against a server):
  - server-initialize [2025-06-18,2025-11-25]
  - tools-list [2025-06-18,2025-11-25]

Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - auth/metadata-default [2025-11-25]
  - auth/client-credentials-jwt [extension]
`

const requirementsList = `Required for 2026-07-28 (3 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - tools-list

Client scenarios (test against a client):
  - tools_call

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  pending (1):
    - json-schema-2020-12 [server]
`

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		name, out      string
		server, client []string
	}{
		{"plain", plainList,
			[]string{"server-initialize", "tools-list"},
			[]string{"initialize", "auth/metadata-default", "auth/client-credentials-jwt"}},
		{"requirements", requirementsList,
			[]string{"server-stateless", "tools-list", "tasks-lifecycle", "json-schema-2020-12"},
			[]string{"tools_call", "auth/dpop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := parseList([]byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(set.Server, tc.server) || !reflect.DeepEqual(set.Client, tc.client) {
				t.Errorf("parseList = %+v, want server %v client %v", set, tc.server, tc.client)
			}
		})
	}
	if _, err := parseList([]byte("Usage: conformance list\n")); err == nil {
		t.Error("an output without scenarios parsed without error")
	}
}

func TestParseExpected(t *testing.T) {
	exp, err := parseExpected("f", []byte("# header\n\nping  the reason, with  spaces\nauth/x  another\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := expectedFailures{"ping": "the reason, with  spaces", "auth/x": "another"}
	if !reflect.DeepEqual(exp, want) {
		t.Errorf("parseExpected = %v, want %v", exp, want)
	}
	for _, bad := range []string{"ping\n", "ping  a\nping  b\n"} {
		if _, err := parseExpected("f", []byte(bad)); !errors.Is(err, errExpectedFile) {
			t.Errorf("parseExpected(%q) = %v, want errExpectedFile", bad, err)
		}
	}
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		checks  []check
		problem string
		passed  bool
		why     string
	}{
		{[]check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "INFO"}, {ID: "c", Status: "SKIPPED"}}, "", true, ""},
		{[]check{{ID: "a", Status: "WARNING", ErrorMessage: "a SHOULD"}}, "", false, "failed a: a SHOULD"},
		{[]check{{ID: "a", Status: "FAILURE"}, {ID: "a", Status: "FAILURE", ErrorMessage: "x"}, {ID: "b", Status: "FAILURE"}}, "", false, "failed a, b: x"},
		{nil, "no result", false, "no result"},
	} {
		o := judge("s", tc.checks, tc.problem)
		if o.Passed != tc.passed || o.Why != tc.why {
			t.Errorf("judge(%v, %q) = %+v, want passed %v why %q", tc.checks, tc.problem, o, tc.passed, tc.why)
		}
	}
}

func TestCompareAndUpdate(t *testing.T) {
	exp := expectedFailures{"still-fails": "known", "now-passes": "was broken", "gone": "renamed away"}
	outcomes := []outcome{
		{Scenario: "still-fails", Why: "failed x"},
		{Scenario: "now-passes", Passed: true},
		{Scenario: "new-failure", Why: "failed y: why"},
		{Scenario: "fine", Passed: true},
	}
	v := compare(outcomes, exp, true)
	if v.Passed != 2 || v.Failed != 2 || v.ExpectedFail != 1 ||
		len(v.UnexpectedFail) != 1 || v.UnexpectedFail[0].Scenario != "new-failure" ||
		len(v.UnexpectedPass) != 1 || v.UnexpectedPass[0].Scenario != "now-passes" ||
		!reflect.DeepEqual(v.Stale, []string{"gone"}) || v.ok() {
		t.Errorf("compare (complete) = %+v", v)
	}
	if v := compare(outcomes[:1], exp, false); !v.ok() || len(v.Stale) != 0 {
		t.Errorf("compare of a filtered run = %+v, want ok without stale entries", v)
	}

	want := expectedFailures{"still-fails": "known", "new-failure": "failed y: why"}
	if got := updated(exp, outcomes, true); !reflect.DeepEqual(got, want) {
		t.Errorf("updated (complete) = %v, want %v", got, want)
	}
	// A filtered run leaves the entries of scenarios it did not run.
	want = expectedFailures{"still-fails": "known", "gone": "renamed away"}
	if got := updated(exp, outcomes[:2], false); !reflect.DeepEqual(got, want) {
		t.Errorf("updated (filtered) = %v, want %v", got, want)
	}

	path := filepath.Join(t.TempDir(), "x.txt")
	if err := writeExpected(path, "line one\nline two", want); err != nil {
		t.Fatal(err)
	}
	back, err := readExpected(path)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("read back %v, %v; want %v", back, err, want)
	}
}

func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, checks []check) {
		p := filepath.Join(dir, rel, "checks.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(checks)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("server-tools-list-2026-12-01T11-27-11-254Z", []check{{ID: "tools-list", Status: "SUCCESS"}})
	write("auth/metadata-default-2026-12-01T11-36-30-414Z", []check{{ID: "prm", Status: "FAILURE"}})
	got, err := readResults(dir, "server-")
	if err != nil {
		t.Fatal(err)
	}
	if len(got["tools-list"]) != 1 || len(got["auth/metadata-default"]) != 1 || len(got) != 2 {
		t.Errorf("readResults = %v", got)
	}
}

func TestArgumentsFor(t *testing.T) {
	schema := `{"type":"object","required":["a","b","s","e","d","o","flag"],"properties":{
		"a":{"type":"number"},"b":{"type":"integer"},"s":{"type":"string"},
		"e":{"type":"string","enum":["x","y"]},"d":{"type":"string","default":"dflt"},
		"o":{"type":"object","required":["n"],"properties":{"n":{"type":["string","null"]}}},
		"flag":{"type":"boolean"},"optional":{"type":"string"}}}`
	got, _ := json.Marshal(argumentsFor(json.RawMessage(schema)))
	want := `{"a":1,"b":1,"d":"dflt","e":"x","flag":true,"o":{"n":"test"},"s":"test"}`
	if string(got) != want {
		t.Errorf("argumentsFor = %s, want %s", got, want)
	}
	if got, _ := json.Marshal(argumentsFor(nil)); string(got) != "{}" {
		t.Errorf("argumentsFor(no schema) = %s, want {}", got)
	}
}

// TestScenarioCallsGiven: the calls a scenario hands over in its context
// are made as given, their arguments byte for byte (the values whose
// headers need base64 must reach mcpx unchanged); other scenarios ask
// for nothing in particular.
func TestScenarioCallsGiven(t *testing.T) {
	args := `{"region":"us-west1","non_ascii_val":"Hello, \u4e16\u754c","control_char_val":"line1\nline2","tab_val":"\tindented"}`
	ctx := `{"name":"http-custom-headers","toolCalls":[` +
		`{"name":"test_custom_headers","arguments":` + args + `},` +
		`{"name":"test_custom_headers_null","arguments":{"region":"us-east1","verbose":null}}]}`
	var sc scenarioContext
	if err := json.Unmarshal([]byte(ctx), &sc); err != nil {
		t.Fatal(err)
	}
	calls, err := scenarioCalls("http-custom-headers", sc, cliUser{})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].Name != "test_custom_headers" || calls[1].Name != "test_custom_headers_null" {
		t.Fatalf("scenarioCalls = %+v", calls)
	}
	if string(calls[0].Arguments) != args || !calls[0].given || !calls[1].given {
		t.Errorf("scenarioCalls arguments = %s (given %v), want %s as given", calls[0].Arguments, calls[0].given, args)
	}
	if string(calls[1].Arguments) != `{"region":"us-east1","verbose":null}` {
		t.Errorf("the null call's arguments = %s", calls[1].Arguments)
	}

	calls, err = scenarioCalls("tools_call", scenarioContext{}, cliUser{})
	if err != nil || calls != nil {
		t.Errorf("scenarioCalls(tools_call) = %v, %v; want nil, nil", calls, err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine(strings.Repeat("x", 20), 5); got != "xxxx…" {
		t.Errorf("oneLine cut = %q", got)
	}
}
