package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v3"
)

// flagError is the usage error for a command line urfave/cli could not
// parse; an undefined flag is named as the user wrote it, with the nearest
// defined one when it is a likely typo of it (nearestFlag). On call and
// prompt an unknown --NAME is more likely a tool's (or prompt's) argument
// written as a flag: the hint says how to write it (NAME=VALUE, with the
// value args gave it). args is the command line (nil: not known).
func flagError(cmd *ucli.Command, err error, args []string) error {
	if _, name, ok := strings.Cut(err.Error(), "flag provided but not defined: "); ok {
		name = strings.TrimLeft(strings.TrimSpace(name), "-")
		dashes := writtenDashes(name, args)
		ue := &usageError{err: fmt.Errorf("unknown flag %s%s", dashes, name), cmd: cmd.FullName(), suggest: nearestFlag(cmd, name)}
		if ue.suggest == "" && (cmd.Name == "call" || cmd.Name == "prompt") {
			what := "tool arguments"
			if cmd.Name == "prompt" {
				what = "prompt arguments"
			}
			ue.hint = fmt.Sprintf("%s are written NAME=VALUE, not as flags: %s", what, argumentForm(name, args))
		}
		return ue
	}
	if val, name, ok := invalidFlagValue(err.Error()); ok {
		if takes, long := flagTakes(cmd, name); takes != "" {
			what := writtenDashes(name, args) + name
			if long != name {
				what += " (--" + long + ")"
			}
			return &usageError{err: fmt.Errorf("%s takes %s, not %q", what, takes, val), cmd: cmd.FullName()}
		}
	}
	return &usageError{err: err, cmd: cmd.FullName()}
}

// invalidFlagValue reads urfave/cli's `invalid value "V" for flag -N: …`
// (its parse errors carry no type to test for): the value and the flag's
// name as written.
func invalidFlagValue(msg string) (val, name string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	if !ok {
		return "", "", false
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", "", false
	}
	if val, err = strconv.Unquote(quoted); err != nil {
		return "", "", false
	}
	rest, ok = strings.CutPrefix(rest[len(quoted):], " for flag -")
	if !ok {
		return "", "", false
	}
	name, _, ok = strings.Cut(rest, ":")
	return val, name, ok
}

// flagTakes says what kind of value flag name of cmd (or of an ancestor)
// takes, and its long name; "" when mcpx has nothing clearer to say than
// the parser.
func flagTakes(cmd *ucli.Command, name string) (takes, long string) {
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			names := f.Names()
			if !slices.Contains(names, name) {
				continue
			}
			switch f.(type) {
			case *ucli.IntFlag, *ucli.Int64Flag, *ucli.UintFlag, *ucli.Uint64Flag:
				return "a whole number", names[0]
			case *ucli.FloatFlag:
				return "a number", names[0]
			case *ucli.DurationFlag:
				return `a duration such as "30s" or "5m"`, names[0]
			case *ucli.BoolFlag:
				return "true or false", names[0]
			}
			return "", names[0]
		}
	}
	return "", name
}

// writtenDashes are the dashes the user wrote before flag name in args
// ("--" when args does not say: "-" for a one-letter name).
func writtenDashes(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		flag, _, _ := strings.Cut(a, "=")
		if rest := strings.TrimLeft(flag, "-"); rest == name && rest != flag {
			return flag[:len(flag)-len(rest)]
		}
	}
	if utf8.RuneCountInString(name) == 1 {
		return "-"
	}
	return "--"
}

// argumentForm is how the unknown flag name, as written in args ("--a 2",
// "--a=2"), reads as a NAME=VALUE argument ("a=2"; "a=VALUE" when args
// gives it no value).
func argumentForm(name string, args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		flag, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || flag != name {
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.Contains(args[i+1], "=") {
			value, hasValue = args[i+1], true
		}
		if hasValue {
			return name + "=" + value
		}
		break
	}
	return name + "=VALUE"
}

// neverSuggested reports the flags a mistyped one is never steered to: they
// confirm or force what mcpx would otherwise ask about or refuse. A user
// who means them writes them.
func neverSuggested(name string) bool {
	switch name {
	case "yes", "y", "force", "no-key":
		return true
	}
	return false
}

// nearestFlag suggests the flag of cmd (and of its ancestors, whose flags
// it inherits) that name is a likely typo of: one edit away (an adjacent
// swap counts as one), two for names of nine letters or more. Names of
// one or two letters get no suggestion (every letter is one edit from
// every other), nor are one-letter flags or those that change what is
// safe (neverSuggested) ever suggested.
func nearestFlag(cmd *ucli.Command, name string) string {
	n := utf8.RuneCountInString(name)
	if n < 3 {
		return ""
	}
	limit := 1
	if n >= 9 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			for _, cand := range f.Names() {
				if utf8.RuneCountInString(cand) < 2 || neverSuggested(cand) {
					continue
				}
				if d := typoDistance(strings.ToLower(name), strings.ToLower(cand)); d < bestD {
					best, bestD = cand, d
				}
			}
		}
	}
	if best == "" {
		return ""
	}
	return "--" + best
}

// typoDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of adjacent letters each cost one.
func typoDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
