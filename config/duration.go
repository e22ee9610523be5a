package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// D returns the duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String is the Go duration form ("5m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the Go duration string ("1h30m0s").
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string ("30s", "5m", "1h30m"), the same
// with a leading number of days ("30d", "1d12h"), or a JSON number of
// seconds (fractions allowed).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		if math.IsInf(f*float64(time.Second), 0) || math.Abs(f*float64(time.Second)) > math.MaxInt64 {
			return fmt.Errorf("duration %s: out of range", b)
		}
		*d = Duration(f * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\" or a number of seconds, not %s", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// splitDays splits "<digits>d<rest>" into its digits and rest; ok is
// false for any other s (and for a rest with a newline in it).
func splitDays(s string) (days, rest string, ok bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != 'd' || strings.Contains(s[i+1:], "\n") {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// ParseDuration is time.ParseDuration plus an optional leading whole number
// of days ("2d", "1d12h").
func ParseDuration(s string) (time.Duration, error) {
	digits, rest, ok := splitDays(s)
	if !ok {
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("duration %q: want a form like \"30s\", \"5m\", \"1h30m\" or \"2d\"", s)
		}
		return v, nil
	}
	days, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || days > math.MaxInt64/int64(24*time.Hour) {
		return 0, fmt.Errorf("duration %q: out of range", s)
	}
	v := time.Duration(days) * 24 * time.Hour
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, fmt.Errorf("duration %q: want a form like \"30s\", \"5m\", \"1h30m\" or \"2d\"", s)
		}
		v += r
	}
	return v, nil
}
