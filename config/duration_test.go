package config

import (
	"regexp"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30s": 30 * time.Second, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour, "1d12h": 36 * time.Hour, "0d": 0,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "2", "2d-1h", "2dx", "1d\n2h", "-1d", "99999999999999999999d", "200000d"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v; want an error", in, got)
		}
	}
}

// splitDays is the regexp ^([0-9]+)d(.*)$ it replaced (compiling it was
// the only use of regexp on its path).
func TestSplitDaysMatchesItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^([0-9]+)d(.*)$`)
	for _, s := range []string{"", "d", "2d", "12d3h", "1d\n", "1d2h\n", "\n1d", "x1d", "1dd", "01d", "1 d", "1d\xff", "١d"} {
		days, rest, ok := splitDays(s)
		m := re.FindStringSubmatch(s)
		if ok != (m != nil) || ok && (days != m[1] || rest != m[2]) {
			t.Errorf("splitDays(%q) = %q, %q, %v; regexp: %q", s, days, rest, ok, m)
		}
	}
}
