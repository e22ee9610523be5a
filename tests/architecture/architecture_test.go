// Package architecture holds docs/architecture.md to the tree: the page is
// where a maintainer learns which package does what, so a package or a
// daemon file it does not mention, or one it names that is gone, fails here.
package architecture

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const page = "docs/architecture.md"

// root is the module's directory: the nearest parent holding go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func readPage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), page))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text under the heading "## title", up to the next "## ".
func section(t *testing.T, doc, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s: no section %q", page, title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

var code = regexp.MustCompile("`([^`]+)`")

// firstColumn returns every `quoted` name in the first cell of the table
// rows of text (a row may name several: "`index.go`, `snapindex.go`").
func firstColumn(text string) []string {
	var names []string
	for line := range strings.Lines(text) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// packages lists the module's package directories, relative and
// slash-separated: every directory holding a .go file, outside testdata,
// node_modules and hidden directories.
func packages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(seen, ".") // the module root holds no package
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestPackagesTable: every package of the module has a row in the
// Packages table, and every row names a package that exists.
func TestPackagesTable(t *testing.T) {
	dir := root(t)
	tree := packages(t, dir)
	named := firstColumn(section(t, readPage(t), "Packages"))
	if len(tree) == 0 || len(named) == 0 {
		t.Fatalf("found %d packages and %d rows: the walk or the table's format changed", len(tree), len(named))
	}
	for _, p := range tree {
		if !slices.Contains(named, p) {
			t.Errorf("%s: package %s has no row in the Packages table; add one saying its job", page, p)
		}
	}
	for _, n := range named {
		if !slices.Contains(tree, n) {
			t.Errorf("%s: the Packages table names %s, which is not a package of the module", page, n)
		}
	}
}

// TestDaemonFilesTable: every non-test file of package daemon has a row in
// the daemon's file table, and every name (or pattern) there matches one.
func TestDaemonFilesTable(t *testing.T) {
	dir := root(t)
	files, err := filepath.Glob(filepath.Join(dir, "daemon", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var tree []string
	for _, f := range files {
		if name := filepath.Base(f); !strings.HasSuffix(name, "_test.go") {
			tree = append(tree, name)
		}
	}
	named := firstColumn(section(t, readPage(t), "The daemon"))
	if len(tree) == 0 || len(named) == 0 {
		t.Fatalf("found %d files and %d rows: the layout or the table's format changed", len(tree), len(named))
	}
	matches := func(pattern, name string) bool {
		ok, err := filepath.Match(pattern, name)
		if err != nil {
			t.Fatalf("%s: bad name %q in the daemon's file table: %v", page, pattern, err)
		}
		return ok
	}
	for _, f := range tree {
		if !slices.ContainsFunc(named, func(n string) bool { return matches(n, f) }) {
			t.Errorf("%s: daemon/%s has no row in the daemon's file table; add one saying its concern", page, f)
		}
	}
	for _, n := range named {
		if !slices.ContainsFunc(tree, func(f string) bool { return matches(n, f) }) {
			t.Errorf("%s: the daemon's file table names %s, which matches no file of daemon/", page, n)
		}
	}
}

// TestNamedFilesExist: a Go file the page names by its path (`dir/file.go`)
// exists, so the prose cannot point at a file that was moved or removed.
func TestNamedFilesExist(t *testing.T) {
	dir := root(t)
	n := 0
	for _, m := range code.FindAllStringSubmatch(readPage(t), -1) {
		name := m[1]
		if !strings.HasSuffix(name, ".go") || !strings.Contains(name, "/") || strings.ContainsAny(name, " <>") {
			continue
		}
		n++
		found, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || len(found) == 0 {
			t.Errorf("%s names %s, which does not exist", page, name)
		}
	}
	if n == 0 {
		t.Fatalf("%s names no Go file by its path: the check would prove nothing", page)
	}
}
