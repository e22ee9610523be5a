package daemon

import "net"

// activateLaunchd takes the socket launchd holds for the agent (Sockets →
// "mcpx"); nil when the daemon was not started by launchd.
//
// TODO(launchd): package launchd (not in the tree yet) provides
// `func ActivateSocket(name string) ([]net.Listener, error)`, returning an
// error wrapping launchd.ErrNotActivated when not started by launchd. Wire
// it here:
//
//	lns, err := launchd.ActivateSocket("mcpx")
//	if errors.Is(err, launchd.ErrNotActivated) { return nil, nil }
//	if err != nil { return nil, fmt.Errorf("take launchd socket: %w", err) }
//	for _, extra := range lns[1:] { extra.Close() }
//	return lns[0], nil
func activateLaunchd() (net.Listener, error) { return nil, nil }
