package peercred

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestUIDIsOurs(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			var b [1]byte
			c.Read(b[:])
		}
	}()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uid, err := UID(c)
	if err != nil || uid != os.Getuid() {
		t.Fatalf("UID = %d, %v; want %d", uid, err, os.Getuid())
	}
}
