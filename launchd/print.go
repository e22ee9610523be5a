package launchd

import (
	"strconv"
	"strings"
)

// JobState is what `launchctl print` says about one agent.
type JobState struct {
	Label string
	// Loaded: launchd has the job (and so holds its sockets).
	Loaded bool
	// State is launchd's word: "running", "not running", "waiting",
	// "spawn scheduled", ...
	State string
	PID   int
	// Program is the executable launchd runs for the job ("program = …"),
	// "" when it did not say.
	Program string
	// LastExitCode is the last exit status; -1 when it never exited or
	// launchd did not say.
	LastExitCode int
	// LastSignal is the last terminating signal ("Killed: 9"), if any.
	LastSignal string
	// Sockets are the socket names launchd holds for the job.
	Sockets []string
	// SocketPaths are the paths of those sockets, where launchd names them.
	SocketPaths []string
	// Fields are every top-level "key = value" line, verbatim.
	Fields map[string]string
}

// Running reports a live process.
func (s JobState) Running() bool { return s.State == "running" || s.PID > 0 }

// ParsePrint parses the output of `launchctl print gui/<uid>/<label>`.
// The format is not a stable interface (Apple says so in launchctl(1)), so
// the parser reads only what it recognises and never fails: top-level
// "key = value" lines of the job's block, the names of the blocks inside
// "sockets = { ... }" (quoted or not) and the "path = …" lines inside them.
// Anything else (environment blocks with "=>", endpoints, event triggers,
// lines it does not know) is ignored.
func ParsePrint(out []byte) JobState {
	st := JobState{Loaded: true, LastExitCode: -1, Fields: map[string]string{}}
	var block []string // names of the open blocks, outermost first
	for _, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case line == "}" || line == "},":
			if len(block) > 0 {
				block = block[:len(block)-1]
			}
			continue
		case strings.HasSuffix(line, "{"):
			name := strings.TrimSpace(strings.TrimSuffix(line, "{"))
			name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(name, "=>"), "="))
			name = strings.Trim(name, `"`)
			// block[0] is the job's own block; a socket's block sits
			// under "sockets" inside it.
			if len(block) == 2 && block[1] == "sockets" {
				st.Sockets = append(st.Sockets, name)
			}
			block = append(block, name)
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(block) == 3 && block[1] == "sockets" && k == "path" {
			st.SocketPaths = append(st.SocketPaths, v)
			continue
		}
		if len(block) != 1 {
			continue
		}
		st.Fields[k] = v
		switch k {
		case "state":
			st.State = v
		case "pid":
			st.PID, _ = strconv.Atoi(v)
		case "program":
			st.Program = v
		case "last exit code":
			// "0", "2", "78: Function not implemented", "(never exited)".
			if n, err := strconv.Atoi(leadingInt(v)); err == nil {
				st.LastExitCode = n
			}
		case "last terminating signal":
			st.LastSignal = v
		}
	}
	return st
}

// leadingInt is the optionally signed run of digits v starts with.
func leadingInt(v string) string {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return v[:i]
}
