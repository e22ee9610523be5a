// Command unitgen writes the systemd user unit templates a package
// installs into /usr/lib/systemd/user: mcpx@.socket and mcpx@.service,
// rendered by package units (the same templates mcpx writes for itself)
// for the packaged mcpxd and marked as the package's. mcpx then uses them
// and writes no copy of its own (units/packaged.go).
//
//	go run ./units/unitgen -bin /usr/bin/mcpxd -version v1.2.3 -out build/units
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/units"
)

func main() {
	bin := flag.String("bin", "/usr/bin/mcpxd", "the mcpxd the package installs (ExecStart)")
	ver := flag.String("version", "", "the version named in the units' header (default: this build's)")
	out := flag.String("out", "", "the directory to write both templates into (required)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: unitgen [-bin PATH] [-version V] -out DIR")
		os.Exit(2)
	}
	if *ver != "" {
		version.Version = *ver
	}
	if err := write(*bin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "unitgen:", err)
		os.Exit(1)
	}
}

func write(bin, dir string) error {
	s := &units.Systemd{Bin: bin, ForPackage: true}
	socket, service, err := s.Render()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, units.SocketTemplate), socket, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, units.ServiceTemplate), service, 0o644)
}
