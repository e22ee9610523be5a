package config

import (
	"maps"
	"slices"
	"strconv"
)

// FieldsDigest identifies a list of strings (FNV-1a, 64 bits: it tells a record
// that holds what a command would write from one that does not; whoever
// could craft a collision could write the record itself).
func FieldsDigest(fields ...string) string {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, f := range fields {
		for i := 0; i < len(f); i++ {
			h = (h ^ uint64(f[i])) * prime
		}
		h *= prime // the NUL between fields
	}
	return strconv.FormatUint(h, 16)
}

// EnvDigest identifies a captured environment: the CLI records it beside
// the environment file it wrote, and sends it with every request
// (api.HeaderEnvDigest), so the daemon knows whether the values it read
// last are still those without a stat of the file per call.
func EnvDigest(env map[string]string) string {
	fields := make([]string, 0, 2*len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fields = append(fields, k, env[k])
	}
	return FieldsDigest(fields...)
}
