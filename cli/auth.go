package cli

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// login logs in to a remote server that needs OAuth: the daemon gives the
// authorization URL and receives the loopback redirect; the CLI opens the
// browser ($BROWSER, else xdg-open/open) or prints the URL.
//
// --json: api.AuthStatus once logged in.
func loginCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "login",
		Usage:     "log in to a remote server that needs OAuth (opens your browser)",
		ArgsUsage: "NS",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "no-browser", Usage: "print the URL to open instead of opening a browser"},
			&ucli.BoolFlag{Name: "device", Usage: "use the device authorization grant: open the URL on any device and enter the code"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 1 {
				return usagef("login takes one namespace")
			}
			ns := cmd.Args().First()
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			st, err := a.login(ctx, c, ns, cmd.Bool("device"), !cmd.Bool("no-browser"))
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, st)
			}
			_, err = fmt.Fprintf(a.Stdout, "logged in to %s%s\n", ns, describeLogin(*st))
			return err
		},
	}
}

// login runs a login to ns: the daemon gives the URL and receives the
// redirect (or polls, for the device grant). The URL is opened in a
// browser when browse is set and one can be started; what the user must do
// goes to stderr either way.
func (a *App) login(ctx context.Context, c *client.Client, ns string, device, browse bool) (*api.AuthStatus, error) {
	start, err := c.Login(ctx, ns, device)
	if err != nil {
		return nil, err
	}
	opened := false
	if browse {
		opened = a.openBrowser(start.URL)
	}
	switch {
	case start.UserCode != "":
		fmt.Fprintf(a.Stderr, "To log in to %s, open\n\n    %s\n\nand enter the code %s. Waiting…\n", ns, start.URL, start.UserCode)
	case opened:
		fmt.Fprintf(a.Stderr, "Opened your browser to log in to %s. If it did not open, visit\n\n    %s\n\nWaiting…\n", ns, start.URL)
	default:
		fmt.Fprintf(a.Stderr, "To log in to %s, open this URL in a browser on this machine:\n\n    %s\n\nWaiting…\n", ns, start.URL)
	}
	return c.LoginWait(ctx, start.ID)
}

// describeLogin is " (scope …, token expires …)" for a login.
func describeLogin(st api.AuthStatus) string {
	var parts []string
	if st.Scope != "" {
		parts = append(parts, "scope "+st.Scope)
	}
	if st.ExpiresAt != nil {
		exp := "token expires " + st.ExpiresAt.Local().Format(time.DateTime)
		if st.Refreshable {
			exp += ", refreshed automatically"
		}
		parts = append(parts, exp)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// openBrowser starts the browser command (browserCommand) on url. It does
// not wait for the browser; false means nothing was started.
func (a *App) openBrowser(url string) bool {
	argv := a.browserCommand(url)
	if len(argv) == 0 {
		return false
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// The browser's own output is not mcpx's, and it runs in a session of
	// its own: mcpx often exits right after (a URL elicitation's call goes
	// on without waiting), and the terminal's hang-up would kill a browser
	// still in mcpx's process group before it opened the page.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	go func() { _ = cmd.Wait() }()
	return true
}

// canOpenBrowser reports whether this machine has a browser mcpx can open:
// a browser command whose program exists.
func (a *App) canOpenBrowser() bool {
	argv := a.browserCommand("about:blank")
	if len(argv) == 0 {
		return false
	}
	_, err := exec.LookPath(argv[0])
	return err == nil
}

// browserCommand is how to open url: $BROWSER (a command, "%s" standing for
// the URL, else the URL appended), else xdg-open or open where a display
// is available; nil when there is none.
func (a *App) browserCommand(url string) []string {
	var argv []string
	if b := strings.TrimSpace(a.Getenv("BROWSER")); b != "" {
		first, _, _ := strings.Cut(b, ":") // BROWSER may list several
		argv = strings.Fields(first)
		replaced := false
		for i, f := range argv {
			if strings.Contains(f, "%s") {
				argv[i] = strings.ReplaceAll(f, "%s", url)
				replaced = true
			}
		}
		if !replaced {
			argv = append(argv, url)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		default:
			if a.Getenv("DISPLAY") == "" && a.Getenv("WAYLAND_DISPLAY") == "" {
				return nil // no display: print the URL
			}
			argv = []string{"xdg-open", url}
		}
	}
	return argv
}

// logout revokes a server's tokens where it offers revocation and forgets
// them.
//
// --json: api.LogoutResponse.
func logoutCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "logout",
		Usage:     "revoke and forget the OAuth tokens of a remote server",
		ArgsUsage: "NS",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 1 {
				return usagef("logout takes one namespace")
			}
			ns := cmd.Args().First()
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Logout(ctx, ns)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			switch {
			case !r.HadLogin:
				_, err = fmt.Fprintf(a.Stdout, "not logged in to %s\n", ns)
			case r.Revoked:
				_, err = fmt.Fprintf(a.Stdout, "logged out of %s (tokens revoked and forgotten)\n", ns)
			case r.Warning != "":
				_, err = fmt.Fprintf(a.Stdout, "logged out of %s (tokens forgotten; revoking them failed: %s)\n", ns, r.Warning)
			default:
				_, err = fmt.Fprintf(a.Stdout, "logged out of %s (tokens forgotten; the server offers no revocation)\n", ns)
			}
			return err
		},
	}
}

// auth lists the remote servers and their logins: scopes and expiry, never
// a token.
//
// --json: api.AuthResponse.
func authCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "auth",
		Usage: "list remote servers and their OAuth logins (scopes, expiry; never the tokens)",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 0 {
				return usagef("auth takes no arguments")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Auth(ctx)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			if len(r.Servers) == 0 {
				_, err = fmt.Fprintln(a.Stdout, "no remote servers configured")
				return err
			}
			rows := make([][]string, 0, len(r.Servers))
			for _, s := range r.Servers {
				login, expires := "no", ""
				switch {
				case s.Error != "":
					login = "error: " + s.Error
				case s.LoggedIn:
					login = "yes"
				}
				if s.ExpiresAt != nil {
					expires = s.ExpiresAt.Local().Format(time.DateTime)
					if s.Refreshable {
						expires += " (refreshable)"
					}
				}
				scope := s.Scope
				if s.NeedsScope != "" {
					scope += " (mcpx login asks for " + s.NeedsScope + ")"
				}
				rows = append(rows, []string{s.Namespace, login, strings.TrimSpace(scope), expires, s.Issuer})
			}
			if err := table(a.Stdout, []string{"NAMESPACE", "LOGGED IN", "SCOPE", "EXPIRES", "ISSUER"}, rows); err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.Stdout, "tokens: %s\n", r.Store)
			return err
		},
	}
}
