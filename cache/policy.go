package cache

import (
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Policy bounds the store. A negative bound means no limit; zero is a real
// bound (MaxBytes 0 evicts every unprotected, unreferenced entry; MaxAge 0
// removes every unprotected entry), so build policies with PolicyFrom.
type Policy struct {
	// MaxBytes: least-recently-used entries that are neither protected
	// (leased, or used within the store's Grace) nor referenced by a root
	// are evicted until the total size is at most MaxBytes.
	MaxBytes int64 `json:"maxBytes"`
	// MaxAge: entries last used more than MaxAge ago are removed even when
	// referenced (a ref is not a reason to keep data nobody used for a
	// month), but never while protected.
	MaxAge time.Duration `json:"maxAge"`
}

// NoLimit disables a bound.
const NoLimit = -1

// DefaultPolicy is 1 GiB and 30 days.
func DefaultPolicy() Policy {
	return Policy{MaxBytes: config.DefaultCacheBytes, MaxAge: config.DefaultCacheAge}
}

// PolicyFrom reads the `cache` settings, with the defaults for unset
// (zero) values.
func PolicyFrom(s config.CacheSettings) Policy {
	p := DefaultPolicy()
	if s.MaxBytes != 0 {
		p.MaxBytes = s.MaxBytes
	}
	if s.MaxAge != 0 {
		p.MaxAge = time.Duration(s.MaxAge)
	}
	return p
}
