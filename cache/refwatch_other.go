//go:build !linux

package cache

import "errors"

// watchRefs has no notification to use here: Load stats the ref every
// time.
func (c *Schemas) watchRefs() error {
	return errors.New("watch schema refs: not supported on this system")
}
