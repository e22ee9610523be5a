package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/fixture"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// Resource subscriptions through `mcpx serve`: a host subscribes, the
// server's update reaches it under the URI the host knows, and
// unsubscribing stops the updates.

// goHost is an mcp-go client of serve --http that records the
// notifications/resources/updated it receives.
type goHost struct {
	c  *client.Client
	mu sync.Mutex
	// updates are the URIs of the updates received; methods every
	// notification's method.
	updates []string
	methods []string
}

func newGoHost(t *testing.T, url string, headers map[string]string, version string) *goHost {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers)}
	if !mcp.IsModernProtocol(version) {
		// A 2025-11-25 session hears what belongs to no request on the GET
		// stream (2026-07-28 on subscriptions/listen).
		//lint:ignore SA1019 deprecated only from 2026-07-28; this is the 2025-11-25 host
		opts = append(opts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := &goHost{c: client.NewClient(tr, client.WithProtocolVersion(version))}
	h.c.OnNotification(func(n mcp.JSONRPCNotification) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.methods = append(h.methods, n.Method)
		if n.Method == mcp.MethodNotificationResourceUpdated {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			h.updates = append(h.updates, uri)
		}
	})
	// The transport's GET stream lives as long as Start's context.
	if err := h.c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "subscribe-host", Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize %s at %s: %v", version, url, err)
	}
	if res.Capabilities.Resources == nil || !res.Capabilities.Resources.Subscribe {
		t.Errorf("%s declares no resources.subscribe: %+v", url, res.Capabilities.Resources)
	}
	t.Cleanup(func() { h.c.Close() })
	return h
}

func (h *goHost) count(uri string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, u := range h.updates {
		if u == uri {
			n++
		}
	}
	return n
}

// bump calls the fixture's bump tool through h and returns "N subscribers
// told" (how many subscriptions the server holds).
func (h *goHost) bump(t *testing.T, name string) string {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = map[string]any{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content", name)
	}
	tc, _ := res.Content[0].(mcp.TextContent)
	if res.IsError {
		t.Fatalf("%s: %s", name, tc.Text)
	}
	_, told, _ := strings.Cut(tc.Text, ", ")
	return told
}

// A 2025-11-25 host at /mcp/fx subscribes with resources/subscribe and a
// 2026-07-28 host at the aggregate /mcp in its subscriptions/listen
// stream, both to the counter of a fixture that speaks only 2026-07-28
// (then one that speaks only 2025-11-25): each hears the updates under the
// URI it knows, the server holds one subscription for both, and a host
// that leaves stops hearing them; once both left, the server holds none.
func TestServeSubscribeGoHosts(t *testing.T) {
	for _, upstream := range []string{fixture.GenerationModern, fixture.GenerationLegacy} {
		t.Run(upstream, func(t *testing.T) { serveSubscribeGoHosts(t, upstream) })
	}
}

func serveSubscribeGoHosts(t *testing.T, upstream string) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FIXTURE_PROTOCOL": %q}}
}}`, jsonString(fixtureBin), upstream))
	e.MustOK("refresh")
	base := serveHTTP(t, e)

	legacy := newGoHost(t, base+"/fx", keyHeader(t, e), mcp.ProtocolVersion20251125)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub := mcp.SubscribeRequest{}
	sub.Params.URI = fixture.CounterURI
	//lint:ignore SA1019 deprecated only from 2026-07-28; a 2025-11-25 host subscribes this way
	if err := legacy.c.Subscribe(ctx, sub); err != nil {
		t.Fatalf("resources/subscribe at /mcp/fx: %v", err)
	}
	if told := legacy.bump(t, "bump"); told != "1 subscribers told" {
		t.Errorf("bump: %q, want the server to hold the subscription", told)
	}
	testkit.Eventually(t, 30*time.Second, "the 2025-11-25 host to hear the update", func() bool { return legacy.count(fixture.CounterURI) == 1 })

	modern := newGoHost(t, base, keyHeader(t, e), mcp.ProtocolVersion20260728)
	aggURI := "mcpx://fx/" + fixture.CounterURI
	stop, err := modern.c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{aggURI}}, func(err error) { t.Errorf("listen: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	// Until the listen stream holds it, a bump reaches only the first host.
	testkit.Eventually(t, 30*time.Second, "the 2026-07-28 host to hear an update", func() bool {
		if told := modern.bump(t, "fx.bump"); told != "1 subscribers told" {
			t.Errorf("bump with two hosts: %q, want one subscription with the server", told)
		}
		time.Sleep(100 * time.Millisecond)
		return modern.count(aggURI) > 0
	})
	testkit.Eventually(t, 30*time.Second, "the 2025-11-25 host to hear them too", func() bool {
		return legacy.count(fixture.CounterURI) > 1
	})

	// The 2025-11-25 host unsubscribes: an update the other host hears
	// after that does not reach it.
	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = fixture.CounterURI
	//lint:ignore SA1019 deprecated only from 2026-07-28; a 2025-11-25 host unsubscribes this way
	if err := legacy.c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatalf("resources/unsubscribe: %v", err)
	}
	left := legacy.count(fixture.CounterURI)
	before := modern.count(aggURI)
	if told := modern.bump(t, "fx.bump"); told != "1 subscribers told" {
		t.Errorf("bump after one host left: %q, want the subscription kept", told)
	}
	testkit.Eventually(t, 30*time.Second, "the 2026-07-28 host to hear the next update", func() bool { return modern.count(aggURI) > before })
	if n := legacy.count(fixture.CounterURI); n != left {
		t.Errorf("the host that unsubscribed heard %d more updates", n-left)
	}

	// The listen stream ends: nobody is subscribed, and the server is
	// told.
	stop()
	testkit.Eventually(t, 30*time.Second, "the server to drop the subscription", func() bool {
		return modern.bump(t, "fx.bump") == "0 subscribers told"
	})
	modern.mu.Lock()
	defer modern.mu.Unlock()
	for _, m := range modern.methods {
		if m == mcp.MethodNotificationResourceUpdated || m == mcp.MethodNotificationSubscriptionsAcknowledged {
			continue
		}
		t.Logf("the 2026-07-28 host also heard %s", m)
	}
}

// The official TypeScript SDK as a host of serve on stdio, in front of
// server-everything (2025-11-25), which sends updates of the resources its
// client subscribed to every five seconds once toggle-subscriber-updates
// is called: the update comes under the mcpx://NS/ URI, and none after
// resources/unsubscribe.
func TestServeSubscribeTypeScriptHost(t *testing.T) {
	e := NewEnv(t)
	serveConfig(t, e)
	var rr api.ResourcesResponse
	e.JSON(&rr, "resources", "everything")
	var a, b string
	for _, r := range rr.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/") {
			if a == "" {
				a = r.URI
			} else if b == "" {
				b = r.URI
			}
		}
	}
	if a == "" || b == "" {
		t.Fatalf("server-everything lists no two static resources: %+v", rr.Resources)
	}
	ua, ub := "mcpx://everything/"+a, "mcpx://everything/"+b
	r := sdkClient(t, e, map[string]any{"args": []string{"serve"}, "steps": []map[string]any{
		{"op": "serverCapabilities"},
		{"op": "request", "method": "resources/subscribe", "params": map[string]any{"uri": ua}},
		{"op": "request", "method": "resources/subscribe", "params": map[string]any{"uri": ub}},
		{"op": "call", "name": "everything.toggle-subscriber-updates"},
		{"op": "waitUpdates", "uri": ua, "count": 1, "timeoutMs": 30000},
		{"op": "request", "method": "resources/unsubscribe", "params": map[string]any{"uri": ua}},
		{"op": "countUpdates", "uri": ua},
		// Two more rounds of updates of b (five seconds apart): a is not
		// among them.
		{"op": "countUpdates", "uri": ub},
		{"op": "waitUpdates", "uri": ub, "count": 3, "timeoutMs": 30000},
		{"op": "countUpdates", "uri": ua},
		{"op": "request", "method": "resources/subscribe", "params": map[string]any{"uri": "demo://not-served"}},
	}})
	var caps struct {
		Resources struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(r.step(t, 0), &caps); err != nil || !caps.Resources.Subscribe {
		t.Errorf("serve declares %s, want resources.subscribe", r.step(t, 0))
	}
	for i := 1; i <= 5; i++ {
		r.step(t, i)
	}
	count := func(i int) int { return decodeAs[struct{ Count int }](t, r.step(t, i)).Count }
	if before := count(7); before < 1 {
		t.Errorf("%s: no update before unsubscribing", ub)
	}
	r.step(t, 8)
	if left, later := count(6), count(9); later != left {
		t.Errorf("%s: %d updates after unsubscribing", ua, later-left)
	}
	if s := r.Steps[10]; s.Error == nil || !strings.Contains(s.Error.Message, "mcpx://NS/URI") {
		t.Errorf("subscribe to a URI not served: %+v", s)
	}
}

// The official TypeScript SDK v2 as a 2026-07-28 host names two resources
// in its subscriptions/listen stream at /mcp, one served and one not, in
// front of a fixture that speaks only 2025-11-25: the acknowledgement names
// the served one alone, and its update comes on the stream under the
// mcpx://NS/ URI.
func TestServeSubscribeTypeScript2026Host(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	npmBin(t, "mcp-server-everything") // the SDK is installed with the servers
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FIXTURE_PROTOCOL": "legacy"}}
}}`, jsonString(fixtureBin)))
	e.MustOK("refresh")
	mcpURL := serveHTTP(t, e)
	served := "mcpx://fx/" + fixture.CounterURI
	plan, _ := json.Marshal(map[string]any{"url": mcpURL, "headers": keyHeader(t, e),
		"uris": []string{served, "mcpx://nope/x"}, "bump": "fx.bump"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(repoRoot, "tests", "serve", "listen2026.mjs"), string(plan))
	cmd.Env = e.Environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("listen2026.mjs: %v\n%s", err, out)
	}
	var r struct {
		Acks []struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"acks"`
		Updates []struct {
			URI string `json:"uri"`
		} `json:"updates"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	if r.Error != "" {
		t.Fatalf("listen2026.mjs: %s", r.Error)
	}
	if len(r.Acks) != 1 || !slices.Equal(r.Acks[0].Notifications.ResourceSubscriptions, []string{served}) {
		t.Errorf("acknowledged %+v, want only %s", r.Acks, served)
	}
	if len(r.Updates) == 0 || r.Updates[0].URI != served {
		t.Errorf("updates %+v, want %s", r.Updates, served)
	}
}
