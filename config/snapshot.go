package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/mcpx-dev/mcpx/internal/proc"
)

// Snapshots keep the result of loading a directory's configuration with
// the stamps of everything the load consulted, so that the next command in
// that directory checks a few lstat stamps instead of discovering, reading
// and parsing every source: its cost no longer grows with the number of
// servers.
//
// What is stamped: every path the load looked at (a source, a candidate
// that was missing, a trust record, ~/.claude.json, the serve records) is
// covered by the lstat of itself and of every directory on its way (and of
// every symlink, with its target followed the way the kernel would); a
// missing candidate is covered by the directory where its first missing
// name would appear. Every variable the load looked up is kept with its
// value; every process it checked (a serve record's pid) with whether it
// was alive. The mcpx executable and the user are part of the snapshot.
//
// Timestamps have a granularity (a kernel tick, a second on some
// filesystems), so a change right after a stamp was taken can leave it
// unchanged. A stamp is therefore only believed when the object's last
// change (ctime, which no one can set back) lies more than settleTime
// before the load that took it began: every later change moves it. A file
// or symlink changed more recently is not snapshotted at all; a directory
// changed more recently (the project directory, $HOME, /tmp) is kept with
// its missing names, which are then looked up again one by one, as they
// are when a directory's stamp changed (a file of no interest was added).
//
// A snapshot is a cache: one that is missing, unreadable, not the user's
// own 0600 regular file, of another format, or whose stamps do not all
// hold is ignored and the configuration loaded from its sources.

// settleTime is how old a stamp must be to be believed (see above): more
// than the coarsest timestamp granularity of a filesystem mcpx may read
// (FAT: 2 s).
var settleTime = 2 * time.Second

// snapshotFormat names the encoding below; any change to it or to what is
// kept changes this string.
const snapshotFormat = "mcpx config snapshot 1\n"

// maxSnapshot bounds a snapshot file.
const maxSnapshot = 8 << 20

// keepSnapshots is how many snapshot files a store keeps; saving one more
// removes the least recently saved.
const keepSnapshots = 256

// Snapshots is the store of snapshots in Dir (Paths.Snapshots()).
type Snapshots struct{ Dir string }

// Snapshot is a directory's configuration: its Brief always, the whole
// Config when the sources were read by this process (Config reads them
// otherwise). It also keeps the stamps of files a client wrote and checked
// (Unchanged, Remember).
type Snapshot struct {
	Brief *Brief

	cfg    *Config
	dir    string // the directory as given to Load
	self   string
	getenv Getenv

	start time.Time // when Load began: the reference for settled stamps
	file  string    // where the snapshot is kept ("" when not kept)
	data  snapshotData
	// save says that data should be written: it was built now, or a
	// directory's stamp or a record settled since it was written.
	save bool
	// why says why the snapshot cannot be kept, or "".
	why         string
	fromSources bool
}

// snapshotData is what a snapshot file holds.
type snapshotData struct {
	exe     string
	exeSt   stamp
	uid     int
	dir     string // the absolute directory
	self    string
	env     []envInput
	entries []stampEntry
	procs   []procInput
	brief   Brief
	records []record
}

// stamp is what lstat says about one version of an object.
type stamp struct {
	dev, ino     uint64
	mode, uid    uint32
	size         int64
	mtime, ctime int64 // ns
}

func stampOf(st *syscall.Stat_t) stamp {
	mtime, ctime := statTimes(st)
	return stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), uid: st.Uid, size: st.Size,
		mtime: timespecNs(mtime), ctime: timespecNs(ctime)}
}

func timespecNs(ts syscall.Timespec) int64 { return ts.Sec*1e9 + ts.Nsec }

func (s stamp) isDir() bool  { return s.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (s stamp) isLink() bool { return s.mode&syscall.S_IFMT == syscall.S_IFLNK }

// settled reports whether s was last changed more than settleTime before
// start.
func (s stamp) settled(start time.Time) bool {
	limit := start.Add(-settleTime).UnixNano()
	return s.ctime < limit && s.mtime < limit
}

// sameObject reports whether a and b are the same object with the same
// owner and mode (a directory whose entries changed).
func (s stamp) sameObject(o stamp) bool {
	return s.dev == o.dev && s.ino == o.ino && s.mode == o.mode && s.uid == o.uid
}

// lstatStamp lstats path.
func lstatStamp(path string) (stamp, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return stamp{}, err
		}
		return stampOf(&st), nil
	}
}

// missing reports whether err says a name does not exist (or a component
// on its way is not a directory).
func missing(err error) bool { return err == syscall.ENOENT || err == syscall.ENOTDIR }

// stampEntry is one stamped path.
type stampEntry struct {
	path string
	st   stamp
	// settled: st may be believed (see settleTime). Always true for
	// anything but a directory.
	settled bool
	// absent are names that were missing in this directory.
	absent []string
	// listed: the directory's entries were read; it must not change.
	listed bool
}

// record is the stamp of a file a client checked or wrote, with the digest
// of what it then held.
type record struct {
	path   string
	st     stamp
	digest string
}

// Load returns the configuration of dir (as LoadDir does) with its Brief,
// from the snapshot kept for dir when every stamp in it still holds, else
// by loading the sources; in that case the snapshot is updated by Save.
// Errors are LoadDir's.
func (s Snapshots) Load(dir string, getenv Getenv, self string) (*Snapshot, error) {
	start := time.Now()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("discover config for %s: %w", dir, err)
	}
	sn := &Snapshot{dir: dir, self: self, getenv: getenv, start: start}
	exe, exeSt, err := executable()
	switch {
	case s.Dir == "":
		sn.why = "no snapshot store"
	case err != nil:
		sn.why = err.Error()
	default:
		sn.file = filepath.Join(s.Dir, snapshotName(abs, self, exe, getenv))
		if d, ok := readSnapshot(sn.file); ok && d.exe == exe && d.exeSt == exeSt && d.uid == os.Getuid() && d.dir == abs && d.self == self {
			if save, ok := d.valid(getenv, start); ok {
				sn.data, sn.save = d, save
				sn.Brief = &sn.data.brief
				return sn, nil
			}
		}
	}
	if sn.why == "" {
		// The store's directory exists before the load looks around:
		// making it later would change a directory the load stamped
		// (the runtime directory holds the serve records).
		if err := ensurePrivateDir(s.Dir); err != nil {
			sn.why = err.Error()
		}
	}
	lc := newLoadCtx(getenv, true)
	cfg, err := loadDir(dir, self, lc)
	if err != nil {
		return nil, err
	}
	sn.cfg, sn.Brief, sn.fromSources = cfg, BriefOf(cfg), true
	if sn.why == "" && !exeSt.settled(start) {
		sn.why = exe + " changed too recently"
	}
	if sn.why == "" {
		sn.data, sn.why = stampLoad(lc, start)
		sn.data.exe, sn.data.exeSt, sn.data.uid, sn.data.dir, sn.data.self = exe, exeSt, os.Getuid(), abs, self
		sn.data.brief = *sn.Brief
		sn.save = sn.why == ""
	}
	return sn, nil
}

// Config is the whole configuration, read from the sources now if the
// snapshot served only its Brief.
func (sn *Snapshot) Config() (*Config, error) {
	if sn.cfg == nil {
		cfg, err := LoadDir(sn.dir, sn.getenv, sn.self)
		if err != nil {
			return nil, err
		}
		sn.cfg = cfg
	}
	return sn.cfg, nil
}

// FromSources reports whether Load read the sources (the snapshot was
// missing or no longer held).
func (sn *Snapshot) FromSources() bool { return sn.fromSources }

// Unchanged reports whether the file at path is as the client last saw it
// when it held what digest describes: its stamp is the one remembered (and
// settled), and so is digest. A client skips reading such a file.
func (sn *Snapshot) Unchanged(path, digest string) bool {
	i := slices.IndexFunc(sn.data.records, func(r record) bool { return r.path == path })
	if i < 0 || sn.data.records[i].digest != digest {
		return false
	}
	st, err := lstatStamp(path)
	return err == nil && st == sn.data.records[i].st
}

// Remember notes that the file at path holds what digest describes, as
// the client has just checked or written it (after Load began). Its stamp
// is kept when it has settled (see settleTime); a file changed since is
// read again by the next command.
func (sn *Snapshot) Remember(path, digest string) {
	i := slices.IndexFunc(sn.data.records, func(r record) bool { return r.path == path })
	st, err := lstatStamp(path)
	if err != nil || !st.settled(sn.start) {
		if i >= 0 {
			sn.data.records = slices.Delete(sn.data.records, i, i+1)
			sn.save = true
		}
		return
	}
	r := record{path: path, st: st, digest: digest}
	switch {
	case i < 0:
		sn.data.records = append(sn.data.records, r)
	case sn.data.records[i] != r:
		sn.data.records[i] = r
	default:
		return
	}
	sn.save = true
}

// Save writes the snapshot when it changed and can be kept: a 0600 file,
// written through a temporary file and a rename, in the store's directory
// (created 0700 and checked to be the user's own).
func (sn *Snapshot) Save() error {
	if !sn.save || sn.why != "" || sn.file == "" {
		return nil
	}
	b, ok := sn.data.encode()
	if !ok {
		return nil // a value a snapshot cannot hold (a NUL): load every time
	}
	dir := filepath.Dir(sn.file)
	if err := ensurePrivateDir(dir); err != nil {
		return fmt.Errorf("save config snapshot: %w", err)
	}
	f, err := os.CreateTemp(dir, ".snap-*")
	if err != nil {
		return fmt.Errorf("save config snapshot: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, sn.file)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save config snapshot: %w", err)
	}
	sn.save = false
	prune(dir)
	return nil
}

// prune keeps the newest keepSnapshots snapshots of dir.
func prune(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= keepSnapshots {
		return
	}
	type aged struct {
		name string
		at   time.Time
	}
	var all []aged
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			all = append(all, aged{e.Name(), fi.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.After(all[j].at) })
	for _, a := range all[min(keepSnapshots, len(all)):] {
		os.Remove(filepath.Join(dir, a.name))
	}
}

// executable is the running binary's path and stamp: a snapshot made by
// another build is not used.
func executable() (string, stamp, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", stamp{}, err
	}
	st, err := lstatStamp(exe)
	if err != nil {
		return "", stamp{}, err
	}
	if st.isLink() {
		return "", stamp{}, fmt.Errorf("%s is a symlink", exe)
	}
	return exe, st, nil
}

// snapshotName names the snapshot of dir for an environment: the variables
// that choose the files are part of the name, so two environments in one
// directory keep a snapshot each.
func snapshotName(abs, self, exe string, getenv Getenv) string {
	h := sha256.New()
	for _, s := range []string{strconv.Itoa(os.Getuid()), abs, self, exe, getenv("MCPX_CONFIG"), getenv("HOME"), getenv("XDG_CONFIG_HOME"), getenv("XDG_STATE_HOME")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// stampLoad stamps what the load lc consulted. why says why it cannot be
// snapshotted, or "".
func stampLoad(lc *loadCtx, start time.Time) (d snapshotData, why string) {
	if home := lc.getenv("HOME"); !filepath.IsAbs(home) {
		return d, "HOME is not an absolute path"
	}
	c := &coverer{entries: map[string]*stampEntry{}, start: start}
	for _, p := range lc.paths {
		if err := c.cover(p); err != nil {
			return d, err.Error()
		}
	}
	for _, dir := range lc.lists {
		e := c.entries[filepath.Clean(dir)]
		if e == nil {
			continue // missing: its absence is covered
		}
		if !e.settled {
			return d, dir + " changed too recently"
		}
		e.listed = true
	}
	for _, e := range c.entries {
		if !e.settled && !e.st.isDir() {
			return d, e.path + " changed too recently"
		}
		slices.Sort(e.absent)
		e.absent = slices.Compact(e.absent)
	}
	for _, p := range slices.Sorted(mapKeys(c.entries)) {
		d.entries = append(d.entries, *c.entries[p])
	}
	d.env = lc.env
	d.procs = lc.procs
	return d, ""
}

func mapKeys(m map[string]*stampEntry) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// coverer stamps paths the way a lookup resolves them.
type coverer struct {
	entries map[string]*stampEntry
	start   time.Time
}

// maxLinks bounds the symlinks followed in one path (the kernel's limit).
const maxLinks = 40

// cover stamps what a lookup of p depends on: the lstat of every name on
// its way from /, with symlinks followed as the kernel follows them, up to
// p itself or to the first name that is missing (kept as absent in the
// directory that would hold it).
func (c *coverer) cover(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s is not absolute", p)
	}
	if _, err := c.stamp("/"); err != nil {
		return err
	}
	cur, rest, links := "/", filepath.Clean(p)[1:], 0
	for rest != "" {
		name, tail, _ := strings.Cut(rest, "/")
		rest = tail
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		st, err := c.stamp(next)
		if missing(err) {
			c.entries[cur].absent = append(c.entries[cur].absent, name)
			return nil
		}
		if err != nil {
			return err
		}
		if !st.isLink() {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return fmt.Errorf("%s: too many symlinks", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = strings.TrimPrefix(target, "/") + "/" + rest
	}
	return nil
}

// stamp lstats path once per snapshot.
func (c *coverer) stamp(path string) (stamp, error) {
	if e, ok := c.entries[path]; ok {
		return e.st, nil
	}
	st, err := lstatStamp(path)
	if err != nil {
		return st, err
	}
	c.entries[path] = &stampEntry{path: path, st: st, settled: st.settled(c.start)}
	return st, nil
}

// valid checks every stamp of d. save says that a directory's stamp
// changed or settled since d was written, so writing it again spares the
// next command the lookups of its missing names.
func (d *snapshotData) valid(getenv Getenv, start time.Time) (save, ok bool) {
	for _, e := range d.env {
		if getenv(e.name) != e.value {
			return false, false
		}
	}
	for i := range d.entries {
		e := &d.entries[i]
		st, err := lstatStamp(e.path)
		if err != nil {
			return false, false
		}
		if e.settled && st == e.st {
			continue
		}
		// Changed, or changed too recently to tell: only a directory
		// whose missing names are still missing may pass.
		if e.listed || !e.st.isDir() || !st.sameObject(e.st) {
			return false, false
		}
		for _, name := range e.absent {
			if _, err := lstatStamp(filepath.Join(e.path, name)); !missing(err) {
				return false, false
			}
		}
		if st.settled(start) {
			e.st, e.settled, save = st, true, true
		}
	}
	for _, p := range d.procs {
		if proc.Is(p.pid, p.start) != p.alive {
			return false, false
		}
	}
	return save, true
}

// readSnapshot reads and decodes a snapshot file, which must be a regular
// file (not a symlink) of this user, mode 0600.
func readSnapshot(path string) (snapshotData, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return snapshotData{}, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Getuid() ||
		st.Mode&0o777 != 0o600 || st.Size <= 0 || st.Size > maxSnapshot {
		return snapshotData{}, false
	}
	buf := make([]byte, st.Size+1)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return snapshotData{}, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) != st.Size {
		return snapshotData{}, false
	}
	return decodeSnapshot(buf[:n])
}

// The encoding: the format line, then fields each ended by a NUL (decimal
// numbers, or strings, which therefore hold no NUL), counts before lists.

type snapWriter struct {
	b   []byte
	bad bool
}

func (w *snapWriter) str(s string) {
	if strings.IndexByte(s, 0) >= 0 {
		w.bad = true
	}
	w.b = append(append(w.b, s...), 0)
}

func (w *snapWriter) num(n int64) { w.b = append(strconv.AppendInt(w.b, n, 10), 0) }

func (w *snapWriter) flag(b bool) {
	if b {
		w.num(1)
	} else {
		w.num(0)
	}
}

func (w *snapWriter) stamp(s stamp) {
	w.num(int64(s.dev))
	w.num(int64(s.ino))
	w.num(int64(s.mode))
	w.num(int64(s.uid))
	w.num(s.size)
	w.num(s.mtime)
	w.num(s.ctime)
}

func (w *snapWriter) strs(ss []string) {
	w.num(int64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

type snapReader struct {
	b   []byte
	bad bool
}

// str reads a string: a view of the buffer, which is never written again
// (a snapshot is read once and decoded in place).
func (r *snapReader) str() string {
	i := bytes.IndexByte(r.b, 0)
	if i < 0 {
		r.bad = true
		return ""
	}
	s := unsafe.String(unsafe.SliceData(r.b), i)
	r.b = r.b[i+1:]
	return s
}

// num reads a decimal number (what strconv.AppendInt wrote).
func (r *snapReader) num() int64 {
	b, neg := r.b, false
	if len(b) > 0 && b[0] == '-' {
		b, neg = b[1:], true
	}
	var n uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i == 19 { // more digits than an int64 holds
			r.bad = true
			return 0
		}
		n = n*10 + uint64(b[i]-'0')
	}
	if i == 0 || i >= len(b) || b[i] != 0 || n > 1<<63 || (n == 1<<63 && !neg) {
		r.bad = true
		return 0
	}
	r.b = b[i+1:]
	if neg {
		return -int64(n)
	}
	return int64(n)
}

func (r *snapReader) flag() bool { return r.num() != 0 }

// count reads a list's length: never more than fields left.
func (r *snapReader) count() int {
	n := r.num()
	if n < 0 || n > int64(len(r.b)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *snapReader) stamp() stamp {
	return stamp{dev: uint64(r.num()), ino: uint64(r.num()), mode: uint32(r.num()), uid: uint32(r.num()),
		size: r.num(), mtime: r.num(), ctime: r.num()}
}

func (r *snapReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (d *snapshotData) encode() ([]byte, bool) {
	w := &snapWriter{b: make([]byte, 0, 4096)}
	w.b = append(w.b, snapshotFormat...)
	w.str(d.exe)
	w.stamp(d.exeSt)
	w.num(int64(d.uid))
	w.str(d.dir)
	w.str(d.self)
	w.num(int64(len(d.env)))
	for _, e := range d.env {
		w.str(e.name)
		w.str(e.value)
	}
	w.num(int64(len(d.entries)))
	for _, e := range d.entries {
		w.str(e.path)
		w.stamp(e.st)
		w.flag(e.settled)
		w.flag(e.listed)
		w.strs(e.absent)
	}
	w.num(int64(len(d.procs)))
	for _, p := range d.procs {
		w.num(int64(p.pid))
		w.num(int64(p.start))
		w.flag(p.alive)
	}
	b := &d.brief
	w.strs(b.Sources)
	w.str(b.Stamp)
	w.strs(b.Vars)
	w.num(int64(len(b.Inputs)))
	for _, in := range b.Inputs {
		w.str(in.Server)
		w.str(in.Var)
		w.str(in.Input.ID)
		w.str(in.Input.Description)
		w.flag(in.Input.Password)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range b.Timeouts {
			if !yield(k) {
				return
			}
		}
	})
	w.num(int64(len(names)))
	for _, name := range names {
		w.str(name)
		w.num(int64(b.Timeouts[name].Call))
		w.num(int64(b.Timeouts[name].Start))
	}
	w.num(int64(len(d.records)))
	for _, r := range d.records {
		w.str(r.path)
		w.stamp(r.st)
		w.str(r.digest)
	}
	w.str("end")
	return w.b, !w.bad
}

func decodeSnapshot(data []byte) (snapshotData, bool) {
	var d snapshotData
	rest, ok := bytes.CutPrefix(data, []byte(snapshotFormat))
	if !ok {
		return d, false
	}
	r := &snapReader{b: rest}
	d.exe = r.str()
	d.exeSt = r.stamp()
	d.uid = int(r.num())
	d.dir = r.str()
	d.self = r.str()
	if n := r.count(); n > 0 {
		d.env = make([]envInput, n)
		for i := range d.env {
			d.env[i] = envInput{r.str(), r.str()}
		}
	}
	if n := r.count(); n > 0 {
		d.entries = make([]stampEntry, n)
		for i := range d.entries {
			e := &d.entries[i]
			e.path = r.str()
			e.st = r.stamp()
			e.settled = r.flag()
			e.listed = r.flag()
			e.absent = r.strs()
		}
	}
	if n := r.count(); n > 0 {
		d.procs = make([]procInput, n)
		for i := range d.procs {
			d.procs[i] = procInput{int(r.num()), uint64(r.num()), r.flag()}
		}
	}
	b := &d.brief
	b.Sources = r.strs()
	b.Stamp = r.str()
	b.Vars = r.strs()
	if n := r.count(); n > 0 {
		b.Inputs = make([]InputUse, n)
		for i := range b.Inputs {
			b.Inputs[i] = InputUse{Server: r.str(), Var: r.str(), Input: Input{ID: r.str(), Description: r.str(), Password: r.flag()}}
		}
	}
	if n := r.count(); n > 0 {
		b.Timeouts = make(map[string]Timeouts, n)
		for range n {
			name := r.str()
			b.Timeouts[name] = Timeouts{time.Duration(r.num()), time.Duration(r.num())}
		}
	}
	if n := r.count(); n > 0 {
		d.records = make([]record, n)
		for i := range d.records {
			d.records[i] = record{path: r.str(), st: r.stamp(), digest: r.str()}
		}
	}
	if r.str() != "end" || r.bad || len(r.b) != 0 {
		return snapshotData{}, false
	}
	return d, true
}
