package daemon

import (
	"encoding/json"
	"testing"
)

func TestResendable(t *testing.T) {
	for raw, want := range map[string]bool{
		``:                        false,
		`null`:                    false,
		`{}`:                      false,
		`{"readOnlyHint":true}`:   true,
		`{"idempotentHint":true}`: true,
		`{"readOnlyHint":false,"idempotentHint":true}`:  true,
		`{"readOnlyHint":false}`:                        false,
		`{"idempotentHint":false}`:                      false,
		`{"idempotentHint":"yes"}`:                      false,
		`{"IdempotentHint":true}`:                       false,
		`{"idempotentHint":true,"idempotenthint":true}`: false,
		`{"idempotentHint":true,"idempotentHint":true}`: false,
		`{"readOnlyHint":"true"}`:                       false,
		`[true]`:                                        false,
	} {
		if got := resendable(json.RawMessage(raw)); got != want {
			t.Errorf("resendable(%s) = %v, want %v", raw, got, want)
		}
	}
}
