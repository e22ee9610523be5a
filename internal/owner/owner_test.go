package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// Every refusal is one *Error: errors.Is finds ErrUnsafe and the caller's
// kind, errors.As the path, the owner and the mode, and the message names
// the path and what is wrong with it.
func TestRuleRefusals(t *testing.T) {
	dir := t.TempDir()
	me := os.Getuid()
	errKind := errors.New("the caller's kind")
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		rule    Rule
		path    string
		problem Problem // 0: accepted
		msg     []string
	}{
		{"own 0600", Mine(), mk("a", 0o600), 0, nil},
		{"group-writable", Mine(), mk("b", 0o620), OpenToOthers, []string{"is writable by group or others", "mode 0620", "chmod go-w"}},
		{"readable where others may not read", Rule{User: me, Deny: 0o077}, mk("c", 0o640), OpenToOthers, []string{"open to group or others", "mode 0640"}},
		{"exact mode", Rule{User: me, Exact: 0o700}, mk("d", 0o600), WrongMode, []string{"has mode 0600, not 0700", "chmod 700"}},
		{"exact mode held", Rule{User: me, Exact: 0o600}, mk("e", 0o600), 0, nil},
		{"another owner", Rule{User: me + 1, Deny: 0o022, What: "trust record", Kind: errKind}, mk("f", 0o600), WrongOwner,
			[]string{"trust record " + filepath.Join(dir, "f"), fmt.Sprintf("owned by uid %d, not by you (uid %d)", me, me+1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, err := os.Lstat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.rule.Check(tt.path, fi)
			if tt.problem == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrUnsafe) || e.Problem != tt.problem || e.Path != tt.path || e.Mode != fi.Mode() {
				t.Fatalf("Check = %#v (%v), want an *Error with problem %d for %s", e, err, tt.problem, tt.path)
			}
			if errors.Is(err, errKind) != (tt.rule.Kind != nil) {
				t.Errorf("errors.Is(err, kind) = %v with Kind %v", errors.Is(err, errKind), tt.rule.Kind)
			}
			if tt.problem == WrongOwner && (e.Owner != me || e.User != me+1) {
				t.Errorf("Owner, User = %d, %d; want %d, %d", e.Owner, e.User, me, me+1)
			}
			if !strings.HasPrefix(err.Error(), tt.rule.What) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("message %q does not name %q", err, tt.path)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q lacks %q", err, m)
				}
			}
		})
	}
}

// Root as the owner is accepted only where the rule says so.
func TestRuleRoot(t *testing.T) {
	fi, err := os.Lstat("/")
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := UID(fi); !ok || uid != 0 {
		t.Skipf("/ is not root's here (%d, %v)", uid, ok)
	}
	me := 4321
	if err := (Rule{User: me}).Check("/", fi); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "owned by uid 0, not by you (uid 4321)") {
		t.Errorf("root's / for uid %d: %v", me, err)
	}
	if err := (Rule{User: me, Root: true}).Check("/", fi); err != nil {
		t.Errorf("root's / with Root: %v", err)
	}
}

// The type checks name what was wanted and what was found.
func TestTypeRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(dir, "l")
	os.Symlink(file, link)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{CheckDir(file), file + " is not a directory (a regular file)"},
		{CheckFile(dir), dir + " is not a regular file (a directory)"},
		{CheckFile(link), link + " is not a regular file (a symbolic link)"},
		{func() error { _, err := OpenFile(link); return err }(), link + " is not a regular file (a symbolic link)"},
	} {
		var e *Error
		if !errors.As(tc.err, &e) || e.Problem != WrongType || tc.err.Error() != tc.want {
			t.Errorf("err = %v, want %q", tc.err, tc.want)
		}
	}
}
