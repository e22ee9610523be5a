package filestamp

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStampChangesWithEveryRewrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if st, err := Of(p); err != nil || st.Exists {
		t.Fatalf("missing file: %+v, %v", st, err)
	}
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := Of(p)
	if b, _ := Of(p); !a.Exists || a != b {
		t.Fatalf("unchanged file, two stamps: %+v %+v", a, b)
	}
	// Same size, same second, replaced by rename: the inode tells.
	tmp := filepath.Join(dir, "tmp")
	if err := os.WriteFile(tmp, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, a.MTime, a.MTime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if c, _ := Of(p); c == a {
		t.Fatalf("a renamed-over file kept its stamp %+v", c)
	}
}
