package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// authServer is the remote server ns as the token manager knows it,
// variables expanded from the captured environment.
func (d *daemon) authServer(st *state, ns string) (auth.Server, error) {
	s, err := st.server(ns)
	if err != nil {
		return auth.Server{}, err
	}
	if s.Transport != config.TransportHTTP && s.Transport != config.TransportSSE {
		e := apiErr(http.StatusBadRequest, api.CodeBadRequest, "server %s runs a command, not a URL: OAuth logins are for remote servers", ns)
		e.body.Namespace = ns
		return auth.Server{}, e
	}
	spec, err := d.spec(context.Background(), st, s, nil)
	if err != nil {
		return auth.Server{}, err
	}
	exp := spec.Server
	return auth.Server{Hash: spec.Hash, Name: ns, URL: exp.URL, Headers: exp.Headers, Auth: exp.Options.Auth}, nil
}

// serveLogin answers POST /v1/login: discover the server's authorization
// server, register, and start listening for the redirect (or polling, for
// the device grant). The CLI opens the URL and waits on /v1/login/wait.
func (d *daemon) serveLogin(w http.ResponseWriter, r *http.Request) error {
	var req api.LoginRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Namespace == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a login needs a namespace")
	}
	srv, err := d.authServer(d.state.Load(), req.Namespace)
	if err != nil {
		return err
	}
	p, err := d.auth.BeginLogin(r.Context(), srv, req.Device)
	if err != nil {
		e := apiErr(http.StatusBadGateway, api.CodeLoginFailed, "%v", err)
		e.body.Namespace = req.Namespace
		return e
	}
	d.log.Printf("auth: login to %s started", req.Namespace)
	return writeJSON(w, api.LoginStart{Namespace: req.Namespace, ID: p.ID, URL: p.URL, UserCode: p.UserCode, ExpiresAt: p.ExpiresAt})
}

// serveLoginWait answers POST /v1/login/wait: block until the login the
// request names finishes (the browser's redirect arrived and the code was
// exchanged), times out, or the caller goes away (which abandons it).
func (d *daemon) serveLoginWait(w http.ResponseWriter, r *http.Request) error {
	var req api.LoginWaitRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	info, err := d.auth.WaitLogin(r.Context(), req.ID)
	if err != nil {
		if r.Context().Err() != nil { // the CLI went away: nobody to answer
			d.log.Printf("auth: login abandoned")
			return apiErr(http.StatusBadRequest, api.CodeBadRequest, "login abandoned")
		}
		return apiErr(http.StatusBadGateway, api.CodeLoginFailed, "%v", err)
	}
	// A listing that failed before this login (it needed the login, or a
	// scope the login now has) says something no longer true: drop it,
	// so the server shows unread until its tools are read again and `ls
	// NS` reads them (joining the fetch started here) instead of
	// answering the old error. A good listing stays until the refetch.
	st := d.state.Load()
	if _, err := st.server(info.Server); err == nil {
		if snap := d.snapshot(st, info.Server); snap != nil && !usable(snap) {
			if err := d.schemas.Invalidate(st.hashes[info.Server]); err != nil {
				d.log.Printf("auth: %s: drop the listing made before the login: %v", info.Server, err)
			}
		}
		d.fetchLater(st, info.Server)
	}
	return writeJSON(w, authStatus(info.Server, info))
}

// serveLogout answers POST /v1/logout: revoke where offered, forget, and
// stop the server's instances (their sessions were made with the tokens).
func (d *daemon) serveLogout(w http.ResponseWriter, r *http.Request) error {
	var req api.LogoutRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	srv, err := d.authServer(d.state.Load(), req.Namespace)
	if err != nil {
		return err
	}
	had, revoked, warn, err := d.auth.Logout(r.Context(), srv)
	if err != nil {
		return apiErr(http.StatusInternalServerError, api.CodeInternal, "log out of %s: %v", req.Namespace, err)
	}
	d.pools.Restart(r.Context(), srv.Hash)
	if snap := d.snapshot(d.state.Load(), req.Namespace); snap != nil && snap.CacheScope == "private" {
		// Lists a server marked private belong to the login that read
		// them.
		if err := d.schemas.Invalidate(srv.Hash); err != nil {
			d.log.Printf("invalidate schemas of %s: %v", req.Namespace, err)
		}
	}
	resp := api.LogoutResponse{Namespace: req.Namespace, HadLogin: had, Revoked: revoked}
	if warn != nil {
		resp.Warning = warn.Error()
	}
	if had {
		d.log.Printf("auth: logged out of %s (revoked %v)", req.Namespace, revoked)
	}
	return writeJSON(w, resp)
}

// serveAuth answers GET /v1/auth: the login state of every remote server,
// never a token.
func (d *daemon) serveAuth(w http.ResponseWriter, r *http.Request) error {
	st := d.state.Load()
	resp := api.AuthResponse{Store: d.auth.StoreName(), Servers: []api.AuthStatus{}}
	for _, name := range st.names {
		s := st.cfg.Servers[name]
		if s.Transport != config.TransportHTTP && s.Transport != config.TransportSSE {
			continue
		}
		srv, err := d.authServer(st, name)
		if err != nil {
			resp.Servers = append(resp.Servers, api.AuthStatus{Namespace: name, ServerHash: string(st.hashes[name]), Error: mapError(err).body.Error})
			continue
		}
		info, err := d.auth.Status(srv)
		if err != nil {
			resp.Servers = append(resp.Servers, api.AuthStatus{Namespace: name, ServerHash: string(srv.Hash), Error: err.Error()})
			continue
		}
		as := authStatus(name, info)
		as.ServerHash = string(srv.Hash)
		resp.Servers = append(resp.Servers, as)
	}
	return writeJSON(w, resp)
}

func authStatus(ns string, info *auth.Info) api.AuthStatus {
	if info == nil {
		return api.AuthStatus{Namespace: ns}
	}
	as := api.AuthStatus{Namespace: ns, ServerHash: string(info.ServerHash), LoggedIn: true, Issuer: info.Issuer,
		ClientID: info.ClientID, Scope: info.Scopes, Refreshable: info.Refresh, NeedsScope: info.NeedsScope}
	if !info.ExpiresAt.IsZero() {
		t := info.ExpiresAt.UTC().Truncate(time.Second)
		as.ExpiresAt = &t
	}
	if !info.ObtainedAt.IsZero() {
		t := info.ObtainedAt.UTC().Truncate(time.Second)
		as.ObtainedAt = &t
	}
	return as
}
