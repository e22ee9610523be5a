package config

import (
	"io/fs"
	"os"
	"slices"
)

// A load (Discover, then Load) reads every source once and records what it
// consulted besides the sources' bytes, so that a snapshot (snapshot.go)
// can tell later, with a few lstat calls, that a new load would give the
// same result.

// loadCtx is the state of one load: the files read so far (each source is
// opened and parsed once, however many steps look at it) and, when a
// snapshot is being made, the inputs consulted. A nil *loadCtx reads
// without memo or record.
type loadCtx struct {
	getenv Getenv
	// reads keeps each file read by path (bytes and the opened file's
	// FileInfo, or the error).
	reads map[string]fileRead
	// docs keeps each mcpx-format file parsed by path (with the bytes it
	// was parsed from).
	docs map[string]parsedDoc

	// record turns recording on; the fields below it are what was seen.
	record bool
	env    []envInput // every variable looked up, first lookup order
	paths  []string   // every path looked at, present or not
	lists  []string   // directories whose entries were read
	procs  []procInput
}

type fileRead struct {
	b   []byte
	fi  fs.FileInfo
	err error
}

type parsedDoc struct {
	b []byte
	d *doc
}

// envInput is one variable lookup and what it answered.
type envInput struct{ name, value string }

// procInput is one process check: whether pid (started at start) was alive.
type procInput struct {
	pid   int
	start uint64
	alive bool
}

func newLoadCtx(getenv Getenv, record bool) *loadCtx {
	lc := &loadCtx{reads: map[string]fileRead{}, docs: map[string]parsedDoc{}, record: record}
	lc.getenv = getenv
	if record {
		lc.getenv = lc.lookup(getenv)
	}
	return lc
}

// lookup returns getenv recording every variable it is asked for.
func (lc *loadCtx) lookup(getenv Getenv) Getenv {
	return func(name string) string {
		v := getenv(name)
		if !slices.ContainsFunc(lc.env, func(e envInput) bool { return e.name == name }) {
			lc.env = append(lc.env, envInput{name, v})
		}
		return v
	}
}

// look records that the load looked at path (whatever it found there).
func (lc *loadCtx) look(path string) {
	if lc != nil && lc.record {
		lc.paths = append(lc.paths, path)
	}
}

// list records that the load read the entries of dir.
func (lc *loadCtx) list(dir string) {
	if lc != nil && lc.record {
		lc.lists = append(lc.lists, dir)
		lc.paths = append(lc.paths, dir)
	}
}

// proc records a process check.
func (lc *loadCtx) proc(pid int, start uint64, alive bool) {
	if lc != nil && lc.record {
		lc.procs = append(lc.procs, procInput{pid, start, alive})
	}
}

// read is readConfigIf, once per path per load: later reads of the same
// path (the user config, read for its "hosts" list and then as a source)
// get the same answer. Every caller of one path passes the same limit and
// check.
func (lc *loadCtx) read(path string, limit int64, check func(string, fs.FileInfo) error) ([]byte, fs.FileInfo, error) {
	lc.look(path)
	if lc == nil {
		return readConfigIf(path, limit, check)
	}
	if r, ok := lc.reads[path]; ok {
		return r.b, r.fi, r.err
	}
	b, fi, err := readConfigIf(path, limit, check)
	lc.reads[path] = fileRead{b, fi, err}
	return b, fi, err
}

// parse is parseJSONC, once per path and content per load.
func (lc *loadCtx) parse(path string, b []byte) (*doc, error) {
	if lc == nil {
		return parseJSONC(path, b)
	}
	if p, ok := lc.docs[path]; ok && string(p.b) == string(b) {
		return p.d, nil
	}
	d, err := parseJSONC(path, b)
	if err == nil {
		lc.docs[path] = parsedDoc{b, d}
	}
	return d, err
}

// readable is readableFile, recorded; a file this load has read already is
// not opened again.
func (lc *loadCtx) readable(p string) (string, bool) {
	lc.look(p)
	if lc != nil {
		if r, ok := lc.reads[p]; ok && r.err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				return p, true
			}
		}
	}
	return readableFile(p)
}
