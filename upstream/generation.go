package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// Protocol generations. A server speaks 2026-07-28 (stateless: no
// handshake, server/discover, protocol version and client capabilities in
// every request's _meta, input_required results instead of server→client
// requests, subscriptions/listen) or 2025-11-25 and older (the initialize
// handshake and a session). Which one is learned at a server's first start
// (server/discover, then initialize when that fails) and remembered by the
// caller (Spec.ProtocolVersion, kept in the schema snapshot), so a known
// server starts with exactly one request of the right kind. A server that
// changed generation fails that request and is asked the other way at once.

// probeWait bounds server/discover over stdio, where it may be a probe: a
// server of the older generation answers an unknown method with an error,
// but some ignore it, and nothing else would end the wait. It is half the
// start's time (at least minProbe): the probe is the first message, so the
// wait includes the server's own start, which a loaded machine slows. Over
// HTTP every request gets an answer; the start's time bounds it.
func probeWait(start time.Duration) time.Duration { return max(start/2, minProbe) }

const minProbe = 5 * time.Second

// errProbeBroke is a probe that left the connection unusable (a stdio
// server that read it and exited on the unknown method): the start is
// repeated on a fresh instance with the initialize handshake. A server
// that ended before reading anything fails its start as it is.
var errProbeBroke = errors.New("the server closed the connection on server/discover")

// wantsModern reports whether a start asking for version v tries
// server/discover first: v is a 2026-07-28 version, or unknown.
func wantsModern(v string) bool {
	return v == "" || !mcp.IsValidProtocolVersion(v) || mcp.IsModernProtocol(v)
}

// handshake settles the generation and version with the server: want is
// the version remembered for it ("" when never learned). HTTP+SSE is
// always the older generation (2026-07-28 removed that transport).
func (cn *conn) handshake(ctx context.Context, dp dialParams) error {
	want := dp.protocolVersion
	if cn.sse || !wantsModern(want) {
		err := cn.initialize(ctx, legacyVersion(want))
		var re *RPCError
		if err == nil || cn.sse || !errors.As(err, &re) {
			return err
		}
		// A server remembered as the older generation that refuses the
		// handshake may have moved on: ask it the new way.
		if _, derr := cn.discover(ctx, mcp.LATEST_PROTOCOL_VERSION); derr == nil {
			return nil
		}
		return err
	}
	v := want
	if !mcp.IsModernProtocol(v) {
		v = mcp.LATEST_PROTOCOL_VERSION
	}
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if cn.pipes != nil {
		pctx, cancel = context.WithTimeout(ctx, probeWait(dp.startTimeout))
	}
	res, err := cn.discover(pctx, v)
	cancel()
	if err == nil {
		if res.Capabilities.Tasks != nil && slices.ContainsFunc(res.SupportedVersions, isLegacy) {
			// Tasks as mcpx follows them (tasks/result) exist only
			// before 2026-07-28, which moved them to an extension: a
			// server that offers them and still speaks 2025-11-25 is
			// spoken to that way.
			modern := cn.protocolVersion
			ierr := cn.initialize(ctx, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
			if ierr == nil || ctx.Err() != nil {
				return ierr
			}
			cn.setVersion(modern)
			cn.discovered(res)
		}
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	var login *LoginRequiredError
	if errors.As(err, &login) {
		return err
	}
	var te *errTransport
	if cn.pipes != nil && errors.As(err, &te) {
		if te.notSent {
			return err // it ended before reading a byte: it cannot start
		}
		return errProbeBroke
	}
	// Not a 2026-07-28 server (an RPC error, no answer in time, an HTTP
	// error status): the handshake.
	return cn.initialize(ctx, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
}

// isLegacy reports whether v is a known version before 2026-07-28.
func isLegacy(v string) bool { return mcp.IsValidProtocolVersion(v) && !mcp.IsModernProtocol(v) }

// legacyVersion is the version an initialize handshake asks for: the one
// remembered when it is of the older generation, else the newest of it.
func legacyVersion(remembered string) string {
	if mcp.IsValidProtocolVersion(remembered) && !mcp.IsModernProtocol(remembered) {
		return remembered
	}
	return mcp.LATEST_LEGACY_PROTOCOL_VERSION
}

// initialize runs the 2025-11-25 (or older) handshake asking for version v.
func (cn *conn) initialize(ctx context.Context, v string) error {
	cn.setVersion("")
	params := struct {
		ProtocolVersion string             `json:"protocolVersion"`
		ClientInfo      mcp.Implementation `json:"clientInfo"`
		Capabilities    json.RawMessage    `json:"capabilities"`
	}{v, clientInfo(), cn.capabilities(true)}
	resp, err := cn.roundTrip(ctx, string(mcp.MethodInitialize), params, nil, false)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(resp, &res); err != nil {
		return fmt.Errorf("initialize: decode result: %w", err)
	}
	if !mcp.IsValidProtocolVersion(res.ProtocolVersion) || mcp.IsModernProtocol(res.ProtocolVersion) {
		return fmt.Errorf("initialize: %w", mcp.UnsupportedProtocolVersionError{Version: res.ProtocolVersion})
	}
	cn.setVersion(res.ProtocolVersion)
	cn.instructions = res.Instructions
	cn.caps = res.Capabilities
	if b, err := json.Marshal(res.ServerInfo); err == nil {
		cn.serverInfo = b
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: string(mcp.MethodNotificationInitialized)}}
	if err := cn.tr.SendNotification(ctx, n); err != nil {
		return fmt.Errorf("initialize: send initialized: %w", err)
	}
	return nil
}

// discover asks the server for its versions and capabilities at version v
// (2026-07-28 or later), and on success leaves the connection at that
// version. A server that names other 2026 versions it supports is asked
// once more at the newest both know.
func (cn *conn) discover(ctx context.Context, v string) (*mcp.DiscoverResult, error) {
	for attempt := 0; ; attempt++ {
		cn.setVersion(v)
		raw, err := cn.request(ctx, string(mcp.MethodServerDiscover), nil)
		var next string
		if err == nil {
			var res mcp.DiscoverResult
			if err := json.Unmarshal(raw, &res); err != nil {
				cn.setVersion("")
				return nil, fmt.Errorf("server/discover: decode result: %w", err)
			}
			if slices.Contains(res.SupportedVersions, v) {
				cn.discovered(&res)
				return &res, nil
			}
			// A result without supportedVersions (a server that answers
			// any method with {}) is no 2026-07-28 answer.
			next = mcp.NegotiateMutuallySupportedVersion(res.SupportedVersions)
			err = fmt.Errorf("the server speaks %v, not %s", res.SupportedVersions, v)
		}
		cn.setVersion("")
		var re *RPCError
		if errors.As(err, &re) && re.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION {
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(re.Data, &data)
			next = mcp.NegotiateMutuallySupportedVersion(data.Supported)
		}
		if attempt == 0 && mcp.IsModernProtocol(next) {
			// Once, at the newest version both know (the same one, if
			// the server named it: it may refuse a first request).
			v = next
			continue
		}
		return nil, fmt.Errorf("server/discover: %w", err)
	}
}

// discovered keeps what a server/discover result says about the server.
func (cn *conn) discovered(res *mcp.DiscoverResult) {
	cn.instructions = res.Instructions
	cn.caps = res.Capabilities
	if info := res.GetResultMeta().ServerInfo(); info != nil {
		if b, err := json.Marshal(info); err == nil {
			cn.serverInfo = b
		}
	}
}

// setVersion records the version in effect ("" while none is) and what
// follows from it: whether requests carry _meta, the _meta they carry, and
// the Mcp-Protocol-Version header of HTTP transports.
func (cn *conn) setVersion(v string) {
	cn.protocolVersion = v
	cn.modern = mcp.IsModernProtocol(v)
	cn.meta = nil
	if cn.modern {
		cn.meta = metaFields(v, cn.capabilities(false))
	}
	if h, ok := cn.tr.(transport.HTTPConnection); ok && !cn.sse {
		h.SetProtocolVersion(v)
	}
}

// clientInfo is how mcpx names itself to servers.
func clientInfo() mcp.Implementation {
	return mcp.Implementation{Name: "mcpx", Version: version.String()}
}

// capabilities is what mcpx declares as a client on this connection:
// elicitation (form and URL; a call's caller answers, or mcpx declines for
// it), and roots when the entry lists some. A 2025-11-25 session is also
// told sampling, since it is declared once for every call: a relay's host
// answers it, and mcpx refuses it for anyone else (a 2026-07-28 server is
// told per call, offered). Over HTTP+SSE nothing: that transport cannot
// carry a server's requests.
func (cn *conn) capabilities(session bool) json.RawMessage {
	if cn.sse {
		return json.RawMessage(`{}`)
	}
	return cn.offered(Offer{Elicitation: true, Sampling: session})
}

// offered is the client capabilities of o, with roots also when the entry
// lists some.
func (cn *conn) offered(o Offer) json.RawMessage {
	var parts []string
	if o.Elicitation {
		parts = append(parts, `"elicitation":{"form":{},"url":{}}`)
	}
	if o.Roots || len(cn.roots) > 0 {
		parts = append(parts, `"roots":{}`)
	}
	if o.Sampling {
		parts = append(parts, `"sampling":{}`)
	}
	return json.RawMessage("{" + strings.Join(parts, ",") + "}")
}

// metaFields are the members every 2026-07-28 request's _meta carries,
// encoded once per connection (without the braces, to splice).
func metaFields(v string, caps json.RawMessage) []byte {
	info, _ := json.Marshal(clientInfo())
	var b bytes.Buffer
	b.WriteString(`"` + mcp.MetaKeyProtocolVersion + `":`)
	b.WriteString(strconv.Quote(v))
	b.WriteString(`,"` + mcp.MetaKeyClientInfo + `":`)
	b.Write(info)
	b.WriteString(`,"` + mcp.MetaKeyClientCapabilities + `":`)
	b.Write(caps)
	return b.Bytes()
}

// withMeta returns params (encoded) with the connection's _meta members
// added to its _meta object: spliced in front when params has none, else
// merged (members of the caller's own _meta, a progressToken, stay).
func withMeta(params any, fields []byte) (json.RawMessage, error) {
	var b []byte
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		b = p
	default:
		var err error
		if b, err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return concat([]byte(`{"_meta":{`), fields, []byte(`}}`)), nil
	}
	if b[0] != '{' {
		return b, nil // not an object: nothing can carry _meta
	}
	if !bytes.Contains(b, []byte(`"_meta"`)) {
		rest := bytes.TrimSpace(b[1:])
		sep := []byte(",")
		if len(rest) > 0 && rest[0] == '}' {
			sep = nil
		}
		return concat([]byte(`{"_meta":{`), fields, []byte("}"), sep, rest), nil
	}
	return mergeFields(b, map[string]json.RawMessage{"_meta": concat([]byte("{"), fields, []byte("}"))})
}

// mergeFields sets top-level members of the object b; an object member
// that exists already (_meta) has the new one's members merged into it.
func mergeFields(b []byte, add map[string]json.RawMessage) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	if top == nil {
		top = map[string]json.RawMessage{}
	}
	for k, v := range add {
		old, ok := top[k]
		if ok && len(bytes.TrimSpace(old)) > 0 && bytes.TrimSpace(old)[0] == '{' {
			var into, from map[string]json.RawMessage
			if json.Unmarshal(old, &into) == nil && json.Unmarshal(v, &from) == nil && into != nil {
				for fk, fv := range from {
					into[fk] = fv
				}
				merged, err := json.Marshal(into)
				if err != nil {
					return nil, err
				}
				top[k] = merged
				continue
			}
		}
		top[k] = v
	}
	return json.Marshal(top)
}

func concat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// standardHeaders are the Mcp-Method and Mcp-Name headers a 2026-07-28
// request over streamable HTTP carries (name: the tool, prompt or resource
// the method names, "" for none).
func standardHeaders(method, name string) http.Header {
	h := http.Header{}
	h.Set(mcp.HeaderMethod, method)
	if mcp.MethodRequiresNameHeader(mcp.MCPMethod(method)) {
		if v, ok := mcp.EncodeHeaderValue(name); ok {
			h.Set(mcp.HeaderName, v)
		}
	}
	return h
}

// isHTTP reports whether the connection is streamable HTTP (where a
// 2026-07-28 request needs its standard headers).
func (cn *conn) isHTTP() bool { return cn.url != "" && !cn.sse }

// sseTransport reports whether s uses the HTTP+SSE transport.
func sseTransport(s *config.Server) bool { return s.Transport == config.TransportSSE }
