// Package lazy computes a package-level value on first use, with nothing
// run at package init.
package lazy

import "sync"

// Value is what New returns, computed once, by the first Get. A
// package-level Value whose New is a function is laid out by the compiler,
// where sync.OnceValue allocates its closures in the package's init: an
// init function, and the page faults of its code, in every process of a
// binary that links the package.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns New's value, calling New on the first Get. Concurrent Gets
// wait for the first.
func (l *Value[T]) Get() T {
	l.once.Do(l.compute)
	return l.v
}

func (l *Value[T]) compute() { l.v = l.New() }
