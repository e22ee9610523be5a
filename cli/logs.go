package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/service"
)

// logs shows the daemon's log: the journal under systemd, else the log file
// the direct manager (or the launchd agent) writes.
//
// --json prints JSON Lines: journalctl's own `-o json` objects under
// systemd, else one {"message": "<line>"} object per log line.
func logsCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "logs",
		Usage: "show the daemon's log (journalctl under systemd, else its log file)",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines"},
			&ucli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: 100, Usage: "show the last `N` lines"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("logs takes no arguments")
			}
			l, err := a.local()
			if err != nil {
				return err
			}
			t, err := a.target(cmd, l)
			if err != nil {
				return err
			}
			m, err := a.detect(ctx, l)
			if err != nil {
				return err
			}
			n := max(int(cmd.Int("lines")), 0)
			follow := cmd.Bool("follow")
			if m.Name() == service.NameSystemd {
				if jc, err := exec.LookPath("journalctl"); err == nil {
					args := []string{"--user", "-u", "mcpx@" + string(t.key) + ".service", "-n", fmt.Sprint(n), "--no-pager"}
					if follow {
						args = append(args, "-f")
					}
					if jsonOut(cmd) {
						args = append(args, "-o", "json")
					}
					c := exec.CommandContext(ctx, jc, args...)
					c.Stdout, c.Stderr = a.Stdout, a.Stderr
					if err := c.Run(); err != nil && ctx.Err() == nil {
						return fmt.Errorf("journalctl %v: %w", args, err)
					}
					return nil
				}
			}
			path := l.paths.Log(t.key)
			var out io.Writer = a.Stdout
			if jsonOut(cmd) {
				jl := &jsonLines{w: a.Stdout}
				defer jl.flush()
				out = jl
			}
			err = tailFile(ctx, out, path, n, follow, 200*time.Millisecond)
			if errors.Is(err, fs.ErrNotExist) {
				return &exitError{code: ExitUnavailable, kind: codeUnavailable, msg: fmt.Sprintf("no log yet for daemon %s (%s). It is written once the daemon has started.", t.key, path)}
			}
			return err
		},
	}
}

// tailFile writes the last n lines of path to w and, with follow, keeps
// copying what is appended (starting over when the file is truncated or
// replaced) until ctx is done.
func tailFile(ctx context.Context, w io.Writer, path string, n int, follow bool, poll time.Duration) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	offset, err := lastLinesOffset(f, n)
	if err != nil {
		return fmt.Errorf("read log %s: %w", path, err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("read log %s: %w", path, err)
	}
	pos := offset
	for {
		copied, err := io.Copy(w, f)
		pos += copied
		if err != nil {
			return fmt.Errorf("read log %s: %w", path, err)
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
		// Truncated (size below our position) or replaced (another inode):
		// reopen and start from the beginning.
		cur, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && (!os.SameFile(cur, now) || now.Size() < pos) {
			nf, err := os.Open(path)
			if err != nil {
				continue
			}
			f.Close()
			f, pos = nf, 0
		}
	}
}

// lastLinesOffset is where the last n lines of f begin.
func lastLinesOffset(f *os.File, n int) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if n == 0 {
		return size, nil
	}
	// Count newlines backwards; a final newline ends the last line rather
	// than starting an empty one.
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	lines := 0
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != '\n' || start+int64(i) == size-1 {
				continue
			}
			lines++
			if lines == n {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// jsonLines turns the text written to it into one {"message": line} JSON
// object per line.
type jsonLines struct {
	w       io.Writer
	pending []byte
}

func (j *jsonLines) Write(p []byte) (int, error) {
	j.pending = append(j.pending, p...)
	for {
		i := bytes.IndexByte(j.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := j.emit(j.pending[:i]); err != nil {
			return 0, err
		}
		j.pending = j.pending[i+1:]
	}
}

// flush writes a last line that had no newline.
func (j *jsonLines) flush() {
	if len(j.pending) > 0 {
		_ = j.emit(j.pending)
		j.pending = nil
	}
}

func (j *jsonLines) emit(line []byte) error {
	b, err := json.Marshal(map[string]string{"message": string(line)})
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}
