package owner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOwnerChecks(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(good, 10); err != nil || string(b) != "ok" {
		t.Fatalf("ReadFile(good) = %q, %v", b, err)
	}
	if _, err := ReadFile(good, 1); err == nil {
		t.Fatal("a file over the bound was read")
	}
	if err := CheckDir(dir); err != nil {
		t.Fatalf("CheckDir(own temp dir): %v", err)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}

	writable := filepath.Join(dir, "writable")
	os.WriteFile(writable, nil, 0o600)
	os.Chmod(writable, 0o622)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	openDir := filepath.Join(dir, "open")
	os.Mkdir(openDir, 0o777)
	os.Chmod(openDir, 0o777)
	for _, p := range []string{writable, link, fifo} {
		if _, err := OpenFile(p); !errors.Is(err, ErrUnsafe) {
			t.Errorf("OpenFile(%s) = %v, want ErrUnsafe", filepath.Base(p), err)
		}
		if err := CheckFile(p); !errors.Is(err, ErrUnsafe) {
			t.Errorf("CheckFile(%s) = %v, want ErrUnsafe", filepath.Base(p), err)
		}
	}
	if err := CheckDir(openDir); !errors.Is(err, ErrUnsafe) {
		t.Errorf("CheckDir(0777) = %v, want ErrUnsafe", err)
	}
	dirLink := filepath.Join(dir, "dirlink")
	os.Symlink(dir, dirLink)
	if err := CheckDir(dirLink); !errors.Is(err, ErrUnsafe) {
		t.Errorf("CheckDir(symlink) = %v, want ErrUnsafe", err)
	}
	if os.Getuid() == 0 {
		foreign := filepath.Join(dir, "foreign")
		os.WriteFile(foreign, nil, 0o600)
		os.Chown(foreign, 65534, 65534)
		if _, err := OpenFile(foreign); !errors.Is(err, ErrUnsafe) {
			t.Errorf("OpenFile(foreign) = %v, want ErrUnsafe", err)
		}
	}
}
