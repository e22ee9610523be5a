package cache

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// FormatOf derives a format identifier from the shape of t: 16 hex digits of
// SHA-256 over a canonical description of how encoding/json sees the type —
// for structs every exported field's name, full `json` tag and shape, in
// order; element, key and value shapes of slices, arrays, maps and pointers;
// the kind of everything else; recursively, with recursive types described
// by their depth on the stack. The name of a type is not part of its shape:
// two types with the same fields, tags and kinds have the same format, so
// renaming Snapshot moves no cache. The one exception is a type that decodes
// itself (json.Unmarshaler or encoding.TextUnmarshaler, e.g. time.Time): its
// package path and name stand for its shape, since its own code decides
// what it accepts.
//
// Why derived, not a hand-bumped number: once a version constant was not
// bumped when tools gained `annotations`, an old cache parsed cleanly with
// the field absent, and the destructive-call policy never fired. A derived
// format changes whenever the shape does, and a snapshot of another format
// is not used (fail closed).
func FormatOf(t reflect.Type) string {
	var b strings.Builder
	describe(&b, t, nil)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessage      = reflect.TypeFor[json.RawMessage]()
)

func describe(b *strings.Builder, t reflect.Type, stack []reflect.Type) {
	if t == nil {
		b.WriteString("nil")
		return
	}
	for i, s := range stack {
		if s == t {
			b.WriteString("^" + strconv.Itoa(len(stack)-i))
			return
		}
	}
	// json.RawMessage implements Unmarshaler but is just bytes kept as
	// written; describe it by what it is, not by its name.
	if t == rawMessage {
		b.WriteString("raw")
		return
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
			t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		b.WriteString("custom(" + t.PkgPath() + "." + t.Name() + ")")
		return
	}
	stack = append(stack, t)
	switch t.Kind() {
	case reflect.Pointer:
		b.WriteString("*")
		describe(b, t.Elem(), stack)
	case reflect.Slice:
		b.WriteString("[]")
		describe(b, t.Elem(), stack)
	case reflect.Array:
		b.WriteString("[" + strconv.Itoa(t.Len()) + "]")
		describe(b, t.Elem(), stack)
	case reflect.Map:
		b.WriteString("map[")
		describe(b, t.Key(), stack)
		b.WriteString("]")
		describe(b, t.Elem(), stack)
	case reflect.Struct:
		b.WriteString("struct{")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue // encoding/json ignores it
			}
			if f.Anonymous {
				b.WriteString("embed ")
			}
			b.WriteString(strconv.Quote(f.Name))
			b.WriteString(" ")
			b.WriteString(strconv.Quote(f.Tag.Get("json")))
			b.WriteString(" ")
			describe(b, f.Type, stack)
			b.WriteString(";")
		}
		b.WriteString("}")
	default:
		b.WriteString(t.Kind().String())
	}
}

// snapshotFormat is the format of the current Snapshot type, computed on
// first use (nothing runs at package init).
var snapshotFormat = lazy.Value[string]{New: func() string { return FormatOf(reflect.TypeFor[Snapshot]()) }}

// SnapshotFormat is the format Save writes and Load accepts.
func SnapshotFormat() string { return snapshotFormat.Get() }
