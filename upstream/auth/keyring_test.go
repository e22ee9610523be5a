package auth

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// TestProbeWithoutBusIsQuick: with no session bus the auto store picks
// files at once and never starts a bus.
func TestProbeWithoutBusIsQuick(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var logged []string
	s, err := OpenStore(func(k string) string { return "" }, t.TempDir(), func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	if name := s.Name(); !strings.HasPrefix(name, "file ") {
		t.Fatalf("store %q, want the file store", name)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "no session bus") {
		t.Fatalf("log %q", logged)
	}
	if _, err := OpenStore(func(string) string { return "vault" }, t.TempDir(), nil); err == nil {
		t.Fatal("MCPX_TOKEN_STORE=vault accepted")
	}
}

// secretService is a minimal org.freedesktop.secrets provider (what
// gnome-keyring or KeePassXC offer) on a real dbus-daemon: one unlocked
// collection, plain sessions.
type secretService struct {
	conn  *dbus.Conn
	mu    sync.Mutex
	items map[dbus.ObjectPath]*ssItem
	next  int
}

type ssItem struct {
	svc    *secretService
	path   dbus.ObjectPath
	attrs  map[string]string
	secret []byte
}

type ssSecret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

type ssCollection struct{ svc *secretService }
type ssSession struct{}

func (s *secretService) OpenSession(algorithm string, _ dbus.Variant) (dbus.Variant, dbus.ObjectPath, *dbus.Error) {
	if algorithm != "plain" {
		return dbus.MakeVariant(""), "/", dbus.MakeFailedError(errors.New("only plain"))
	}
	return dbus.MakeVariant(""), "/org/freedesktop/secrets/session/1", nil
}

func (s *secretService) Unlock(objects []dbus.ObjectPath) ([]dbus.ObjectPath, dbus.ObjectPath, *dbus.Error) {
	return objects, "/", nil
}

func (ssSession) Close() *dbus.Error { return nil }

func (c ssCollection) SearchItems(attrs map[string]string) ([]dbus.ObjectPath, *dbus.Error) {
	c.svc.mu.Lock()
	defer c.svc.mu.Unlock()
	var out []dbus.ObjectPath
	for p, it := range c.svc.items {
		match := true
		for k, v := range attrs {
			match = match && it.attrs[k] == v
		}
		if match {
			out = append(out, p)
		}
	}
	return out, nil
}

func (c ssCollection) CreateItem(props map[string]dbus.Variant, secret ssSecret, replace bool) (dbus.ObjectPath, dbus.ObjectPath, *dbus.Error) {
	attrs, _ := props["org.freedesktop.Secret.Item.Attributes"].Value().(map[string]string)
	s := c.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.items {
		if replace && fmt.Sprint(it.attrs) == fmt.Sprint(attrs) {
			it.secret = secret.Value
			return it.path, "/", nil
		}
	}
	s.next++
	it := &ssItem{svc: s, path: dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/secrets/collection/login/%d", s.next)), attrs: attrs, secret: secret.Value}
	s.items[it.path] = it
	if err := s.conn.Export(it, it.path, "org.freedesktop.Secret.Item"); err != nil {
		return "/", "/", dbus.MakeFailedError(err)
	}
	return it.path, "/", nil
}

func (it *ssItem) GetSecret(session dbus.ObjectPath) (ssSecret, *dbus.Error) {
	it.svc.mu.Lock()
	defer it.svc.mu.Unlock()
	return ssSecret{Session: session, Parameters: []byte{}, Value: it.secret, ContentType: "text/plain"}, nil
}

func (it *ssItem) Delete() (dbus.ObjectPath, *dbus.Error) {
	it.svc.mu.Lock()
	delete(it.svc.items, it.path)
	it.svc.mu.Unlock()
	_ = it.svc.conn.Export(nil, it.path, "org.freedesktop.Secret.Item")
	return "/", nil
}

// startSecretService runs a dbus-daemon and the provider on it, and points
// this process's session bus at it.
func startSecretService(t *testing.T) *secretService {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	dir := t.TempDir()
	addr := "unix:path=" + filepath.Join(dir, "bus")
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--address="+addr, "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	addr = strings.TrimSpace(line)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &secretService{conn: conn, items: map[dbus.ObjectPath]*ssItem{}}
	for path, obj := range map[dbus.ObjectPath]struct {
		v     any
		iface string
	}{
		"/org/freedesktop/secrets":                  {s, "org.freedesktop.Secret.Service"},
		"/org/freedesktop/secrets/aliases/default":  {ssCollection{s}, "org.freedesktop.Secret.Collection"},
		"/org/freedesktop/secrets/session/1":        {ssSession{}, "org.freedesktop.Secret.Session"},
		"/org/freedesktop/secrets/collection/login": {ssCollection{s}, "org.freedesktop.Secret.Collection"},
	} {
		if err := conn.Export(obj.v, path, obj.iface); err != nil {
			t.Fatal(err)
		}
	}
	if reply, err := conn.RequestName("org.freedesktop.secrets", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("request name: %v %v", reply, err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return s
}

// TestKeyringStore keeps a login in a Secret Service found by the auto
// store, and uses it for calls and refreshes; no token file is written.
func TestKeyringStore(t *testing.T) {
	ss := startSecretService(t)
	e := newEnv(t, 5*time.Second)
	store, err := OpenStore(func(string) string { return "auto" }, e.store.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if store.Name() != "keyring" {
		t.Fatalf("auto store with a Secret Service: %q", store.Name())
	}
	e.m = New(Options{Store: store, Now: e.now})
	e.login()
	ss.mu.Lock()
	n := len(ss.items)
	ss.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d keyring items after login, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(e.store.Dir, string(e.s.Hash)+".json")); !os.IsNotExist(err) {
		t.Fatalf("a token file exists beside the keyring: %v", err)
	}
	e.advance(5 * time.Second)
	if code, err := e.initialize(); err != nil || code != 200 {
		t.Fatalf("call after expiry: %d %v", code, err)
	}
	rec, err := store.Load(e.s.Hash)
	if err != nil || rec == nil || rec.AccessToken != e.o.Stats().Tokens[2] {
		t.Fatalf("refreshed record in the keyring: %v %v", rec != nil, err)
	}
	if _, _, _, err := e.m.Logout(ctxT(t), e.s); err != nil {
		t.Fatal(err)
	}
	if rec, err := store.Load(e.s.Hash); rec != nil || err != nil {
		t.Fatalf("keyring after logout: %v %v", rec != nil, err)
	}
}
