package rpc

import (
	"encoding/json"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestDecodeParams(t *testing.T) {
	type optional struct {
		TaskID string `json:"taskId,omitempty"`
		Limit  int    `json:"limit,omitempty"`
	}
	for _, tc := range []struct {
		name, raw string
		wantErr   bool
		want      optional
	}{
		{name: "absent params are no params", raw: ""},
		{name: "null params are no params", raw: "null"},
		{name: "an empty array is no params (Neovim sends [] for {})", raw: "[]"},
		{name: "an empty array with spaces is no params", raw: " [ \n ] "},
		{name: "an object is decoded", raw: `{"taskId":"t1","limit":3}`, want: optional{TaskID: "t1", Limit: 3}},
		{name: "a non-empty array is refused", raw: `["t1"]`, wantErr: true},
		{name: "a lone bracket is refused, not a panic", raw: "[", wantErr: true},
		{name: "a wrong type names the field", raw: `{"limit":"x"}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got optional
			err := DecodeParams(json.RawMessage(tc.raw), &got)
			if tc.wantErr {
				e := AsError(err)
				if err == nil || e.Code != api.CodeInvalidParams {
					t.Fatalf("DecodeParams(%q) = %v, want -32602", tc.raw, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeParams(%q) = %v", tc.raw, err)
			}
			if got != tc.want {
				t.Fatalf("DecodeParams(%q) decoded %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}
