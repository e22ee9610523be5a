package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

var callAnswers = []string{
	`{"result":{"content":[{"type":"text","text":"hi"}]},"isError":false}`,
	`{"result":{"content":[{"type":"text","text":"a\nb \u00e9 \"q\""},{"type":"resource","resource":{"uri":"file:///x","text":"body"}},{"type":"resource_link","uri":"u","name":"n"}],"structuredContent":{"n":1}},"isError":true}`,
	`{"result":{"content":[{"type":"image","data":"","mimeType":"image/png","_mcpx":{"blob":0}}]},"isError":false,"blobs":[{"index":0,"digest":"d","mimeType":"image/png","size":3}]}`,
	`{"task":{"taskId":"t1","status":"working"},"isError":false}`,
	` { "result" : null , "isError" : false } `,
	`{"Result":{"content":[]},"ISERROR":true}`,             // keys matched case-insensitively
	`{"result":{},"result":{"content":[]},"isError":true}`, // the last of a repeated key
	`{"result":{"content":[{"type":"text","text":"x","resource":{"text":"a"},"resource":{"uri":"b"}}]}}`,
	`{"result":{"content":null,"structuredContent":null}}`,
	`{"result":{"content":[{"type":1}]}}`, // a number where a string goes: encoding/json's error
	`{"isError":"yes"}`,
	`{"result":{"content":[{"text":"\ud800"}]},"isError":false}`, // a lone surrogate
	`{"result":1}x`,
	`[]`,
	`null`,
	`{"other":[1,{"a":"}"}],"result":{"content":[{"type":"text","text":"]}"}]}}`,
}

// The reader of known shapes answers what encoding/json answers, for
// every document, valid or not.
func FuzzDecodeCall(f *testing.F) {
	for _, a := range callAnswers {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := DecodeCallResponse(data)
		var want CallResponse
		wantErr := json.Unmarshal(data, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(*got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, *got, want)
		}
		if gotErr != nil || len(want.Result) == 0 {
			return
		}
		res, resErr := DecodeCallResult(want.Result)
		var wantRes CallResult
		wantResErr := json.Unmarshal(want.Result, &wantRes)
		if (resErr != nil) != (wantResErr != nil) {
			t.Fatalf("result %q: error %v, encoding/json %v", want.Result, resErr, wantResErr)
		}
		if resErr == nil && !reflect.DeepEqual(*res, wantRes) {
			t.Fatalf("result %q:\n got %+v\nwant %+v", want.Result, *res, wantRes)
		}
	})
}

// The common answers are read without encoding/json.
func TestDecodeCallKnownShapes(t *testing.T) {
	for _, a := range callAnswers[:5] {
		r, known, err := decodeKnown([]byte(a), readCallResponse)
		if err != nil || !known {
			t.Fatalf("%s: known %v, %v", a, known, err)
		}
		if len(r.Result) == 0 || string(r.Result) == "null" {
			continue
		}
		res, known, err := decodeKnown(r.Result, readCallResult)
		if err != nil || !known || len(res.Content) == 0 {
			t.Fatalf("%s: result %+v, known %v, %v", a, res, known, err)
		}
	}
	// A key in another case is encoding/json's to match.
	if _, known, err := decodeKnown([]byte(callAnswers[5]), readCallResponse); err != nil || known {
		t.Errorf("%s: known %v, %v", callAnswers[5], known, err)
	}
}
