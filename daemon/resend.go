package daemon

import (
	"bytes"
	"encoding/json"
	"strings"
)

// resendable reports whether a tool's annotations say running it twice is
// harmless: readOnlyHint or idempotentHint true. A call to such a tool may
// be sent again to a fresh instance after a server that may have read it
// exited (upstream.Caller.Idempotent). The keys are read exactly, as the
// policy reads its hints (decodeHints): annotations that do not decode, a
// case variant or a duplicate of a key, or a hint that is not a boolean say
// nothing, and the call is not sent twice.
func resendable(raw json.RawMessage) bool {
	h, ok := decodeHints(raw)
	if !ok {
		return false
	}
	if h.ReadOnly != nil && *h.ReadOnly {
		return true
	}
	return exactTrue(raw, "idempotentHint")
}

// exactTrue reports whether the JSON object raw has key, spelled exactly
// and only once with no case variant, set to true.
func exactTrue(raw json.RawMessage, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	found, value := false, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return false
		}
		switch {
		case k == key:
			if found || json.Unmarshal(val, &value) != nil {
				return false
			}
			found = true
		case strings.EqualFold(k, key):
			return false
		}
	}
	return found && value
}
