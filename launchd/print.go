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
	// State is launchd's word: "running", "not running", "waiting", ...
	State string
	PID   int
	// LastExitCode is the last exit status; -1 when it never exited or
	// launchd did not say.
	LastExitCode int
	// LastSignal is the last terminating signal ("Killed: 9"), if any.
	LastSignal string
	// Sockets are the socket names launchd holds for the job.
	Sockets []string
	// Fields are every top-level "key = value" line, verbatim.
	Fields map[string]string
}

// Running reports a live process.
func (s JobState) Running() bool { return s.State == "running" || s.PID > 0 }

// ParsePrint parses the output of `launchctl print gui/<uid>/<label>`.
// The format is not a stable interface, so the parser reads only what it
// recognises: top-level "key = value" lines and the names of the blocks
// inside "sockets = { ... }"; anything else is ignored, never an error.
func ParsePrint(out []byte) JobState {
	st := JobState{Loaded: true, LastExitCode: -1, Fields: map[string]string{}}
	depth := 0
	var block []string // names of the open blocks, outermost first
	for _, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case line == "}":
			if depth > 0 {
				depth--
				block = block[:len(block)-1]
			}
			continue
		case strings.HasSuffix(line, "{"):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(line, "{"), " ="))
			name = strings.TrimSpace(strings.TrimSuffix(name, "="))
			// depth 1 is inside the job's own block; a socket's block
			// sits at depth 2 under "sockets".
			if depth == 2 && block[1] == "sockets" {
				st.Sockets = append(st.Sockets, name)
			}
			depth++
			block = append(block, name)
			continue
		}
		if depth != 1 {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		st.Fields[k] = v
		switch k {
		case "state":
			st.State = v
		case "pid":
			st.PID, _ = strconv.Atoi(v)
		case "last exit code":
			if n, err := strconv.Atoi(v); err == nil {
				st.LastExitCode = n
			}
		case "last terminating signal":
			st.LastSignal = v
		}
	}
	return st
}
