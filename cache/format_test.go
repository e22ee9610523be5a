package cache

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type shapeA struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

// shapeA2 has shapeA's shape under another name.
type shapeA2 struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

type shapeMoreField struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
	X    bool   `json:"x"`
}

type shapeRenamed struct {
	Label string `json:"name"`
	N     int    `json:"n,omitempty"`
}

type shapeRetagged struct {
	Name string `json:"title"`
	N    int    `json:"n,omitempty"`
}

type shapeOmitempty struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type shapeKind struct {
	Name string `json:"name"`
	N    int64  `json:"n,omitempty"`
}

type shapeUnexported struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
	//lint:ignore U1000 the unexported field is the point: the shape must not see it
	mu int
}

type outerA struct {
	Inner shapeA            `json:"inner"`
	List  []shapeA          `json:"list"`
	Map   map[string]shapeA `json:"map"`
}

type outerB struct {
	Inner shapeMoreField    `json:"inner"`
	List  []shapeA          `json:"list"`
	Map   map[string]shapeA `json:"map"`
}

type outerC struct {
	Inner shapeA                    `json:"inner"`
	List  []shapeA                  `json:"list"`
	Map   map[string]shapeMoreField `json:"map"`
}

type outerD struct {
	Inner shapeA            `json:"inner"`
	List  []shapeMoreField  `json:"list"`
	Map   map[string]shapeA `json:"map"`
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children"`
}

type node2 struct {
	Name     string   `json:"name"`
	Children []*node2 `json:"children"`
}

type nodeTagged struct {
	Name     string        `json:"name"`
	Children []*nodeTagged `json:"kids"`
}

type mutualA struct {
	B *mutualB `json:"b"`
}
type mutualB struct {
	A []mutualA `json:"a"`
}

type withTime struct {
	At time.Time `json:"at"`
}
type withTimeStruct struct {
	At struct{} `json:"at"`
}
type withRaw struct {
	R json.RawMessage `json:"r"`
}
type withBytes struct {
	R []byte `json:"r"`
}

func TestFormatOf(t *testing.T) {
	of := func(v any) string { return FormatOf(reflect.TypeOf(v)) }
	base := of(shapeA{})
	if len(base) != 16 {
		t.Fatalf("format %q is not 16 hex digits", base)
	}
	equal := []struct {
		name string
		a, b any
	}{
		{"same shape, other type name", shapeA{}, shapeA2{}},
		{"unexported field is not shape", shapeA{}, shapeUnexported{}},
		{"recursive, other type name", node{}, node2{}},
		{"pointer and value of equal shapes", &shapeA{}, &shapeA2{}},
	}
	for _, c := range equal {
		if of(c.a) != of(c.b) {
			t.Errorf("%s: %T and %T differ", c.name, c.a, c.b)
		}
	}
	differ := []struct {
		name string
		a, b any
	}{
		{"one more field", shapeA{}, shapeMoreField{}},
		{"renamed field", shapeA{}, shapeRenamed{}},
		{"retagged field", shapeA{}, shapeRetagged{}},
		{"tag options", shapeA{}, shapeOmitempty{}},
		{"changed kind", shapeA{}, shapeKind{}},
		{"nested struct change", outerA{}, outerB{}},
		{"map element change", outerA{}, outerC{}},
		{"slice element change", outerA{}, outerD{}},
		{"recursive type retagged", node{}, nodeTagged{}},
		{"pointer vs value", shapeA{}, &shapeA{}},
		{"slice vs array", []int{}, [2]int{}},
		{"array length", [2]int{}, [3]int{}},
		{"map key kind", map[string]int{}, map[int]int{}},
		{"custom decoder is not its fields", withTime{}, withTimeStruct{}},
		{"raw JSON is not bytes", withRaw{}, withBytes{}},
	}
	for _, c := range differ {
		if of(c.a) == of(c.b) {
			t.Errorf("%s: %T and %T have the same format %s", c.name, c.a, c.b, of(c.a))
		}
	}
	// Mutual recursion terminates and is stable.
	first, again := of(mutualA{}), of(mutualA{})
	if first != again || first == of(mutualB{}) {
		t.Errorf("mutual recursion: unstable or confused formats")
	}
}

func TestSnapshotFormatIsDerived(t *testing.T) {
	if SnapshotFormat() != FormatOf(reflect.TypeFor[Snapshot]()) {
		t.Fatalf("SnapshotFormat() = %s, want FormatOf(Snapshot)", SnapshotFormat())
	}
}
