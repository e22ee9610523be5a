package config

import (
	"encoding/json"
	"testing"
	"time"
)

func TestToolAllowed(t *testing.T) {
	tests := []struct {
		name           string
		tools, exclude []string
		allowed        []string
		denied         []string
	}{
		{"empty allows all", nil, nil, []string{"a", "delete_note"}, nil},
		{"names", []string{"echo", "add"}, nil, []string{"echo", "add"}, []string{"time", "ech"}},
		{"glob", []string{"get_*", "l?st"}, nil, []string{"get_x", "list", "lost"}, []string{"xget_x", "lists"}},
		{"regexp", []string{"/^(read|list)_/"}, nil, []string{"read_file", "list_dir"}, []string{"write_file", "xread_"}},
		{"exclude wins", []string{"*"}, []string{"delete_*", "/drop/"}, []string{"echo"}, []string{"delete_note", "table_drop"}},
		{"exclude only", nil, []string{"slow"}, []string{"echo"}, []string{"slow"}},
	}
	for _, tt := range tests {
		o := Options{Tools: tt.tools, ExcludeTools: tt.exclude}
		for _, n := range tt.allowed {
			if !o.ToolAllowed(n) {
				t.Errorf("%s: %q denied", tt.name, n)
			}
		}
		for _, n := range tt.denied {
			if o.ToolAllowed(n) {
				t.Errorf("%s: %q allowed", tt.name, n)
			}
		}
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"30s"`, 30 * time.Second},
		{`"5m"`, 5 * time.Minute},
		{`"1h30m"`, 90 * time.Minute},
		{`"2d"`, 48 * time.Hour},
		{`"1d12h"`, 36 * time.Hour},
		{`90`, 90 * time.Second},
		{`0.5`, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil || d.D() != tt.want {
			t.Errorf("%s → %v, %v; want %v", tt.in, d.D(), err, tt.want)
		}
	}
	for _, bad := range []string{`"soon"`, `"2x"`, `true`, `"d"`, `"1d-1h"`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s accepted as %v", bad, d.D())
		}
	}
	b, err := json.Marshal(Options{CallTimeout: Duration(90 * time.Second)})
	if err != nil || string(b) != `{"callTimeout":"1m30s","policy":{}}` {
		t.Errorf("marshal = %s, %v", b, err)
	}
}
