package api

// PENDING: declared signatures, implemented by the daemon helper in
// daemon/api/files.go (this file is then deleted).

// WriteJSONAtomic writes v as indented JSON to path with the given mode:
// temp file in the same directory, fsync, rename.
func WriteJSONAtomic(path string, v any, mode uint32) error { panic("pending") }

// ReadInfo reads an info file.
func ReadInfo(path string) (*InfoFile, error) { panic("pending") }

// ReadKeyRecord reads a key record.
func ReadKeyRecord(path string) (*KeyRecord, error) { panic("pending") }
