package cache

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// watchRefs starts an inotify watch on the refs directory: every change
// of an entry (created, written, renamed over, removed, chmod'ed) or of
// the directory itself bumps c.gen, so Load re-stats its memo only after
// something changed. The watch ends (and Load stats every time again)
// when the directory goes away or inotify fails.
func (c *Schemas) watchRefs() error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("watch schema refs %s: %w", c.dir, err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("watch schema refs %s: %w", c.dir, err)
	}
	const mask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO |
		syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	if _, err := syscall.InotifyAddWatch(fd, c.dir, mask); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("watch schema refs %s: %w", c.dir, err)
	}
	c.watching.Store(true)
	go c.readEvents(fd)
	return nil
}

// readEvents bumps c.gen for every batch of events until the watch ends.
func (c *Schemas) readEvents(fd int) {
	defer syscall.Close(fd)
	defer c.watching.Store(false)
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		// Bumped before anything else: a Load after this sees the
		// change (a Load racing it re-stats next time, see LoadDigest).
		c.gen.Add(1)
		if err != nil || n < syscall.SizeofInotifyEvent {
			return
		}
		select {
		case c.changed <- struct{}{}:
		default: // a wake-up is already pending
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&(syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_UNMOUNT) != 0 {
				return // the directory is gone: stat every time again
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
