package daemonkey

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// Valid is the regexp ^[A-Za-z0-9_-]{1,64}$ it replaced.
func TestValidMatchesItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, k := range []string{"", "k1", "a-b_C9", "a b", "a.b", "a/b", "../x", "ü", "k\n", strings.Repeat("x", 64), strings.Repeat("x", 65)} {
		if got, want := Valid(k), re.MatchString(k); got != want {
			t.Errorf("Valid(%q) = %v; regexp: %v", k, got, want)
		}
		if err := Check(k); (err == nil) != re.MatchString(k) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("Check(%q) = %v", k, err)
		}
	}
}

func FuzzValid(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	f.Add("6865f8e13e13")
	f.Add("a/b")
	f.Fuzz(func(t *testing.T, k string) {
		if Valid(k) != re.MatchString(k) {
			t.Fatalf("Valid(%q) = %v", k, Valid(k))
		}
	})
}
