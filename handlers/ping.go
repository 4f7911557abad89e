package handlers

import (
	"context"
	"encoding/json"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

// ping answers agent/ping {data?} with {data}: the same JSON value, byte for
// byte. It is the liveness check and the transport benchmark, so it picks
// the value out without decoding it and replies with it as it came.
func (s *Server) ping(_ context.Context, params json.RawMessage) (any, error) {
	var data []byte
	if len(params) > 0 && string(params) != "null" {
		var err error
		if data, err = rpc.Member(params, "data"); err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: agent/ping takes {\"data\": any}: %v", err)
		}
	}
	if data == nil {
		return rpc.RawJSON(`{"data":null}`), nil
	}
	return rpc.RawJSONParts{pingPrefix, data, pingSuffix}, nil
}

var (
	pingPrefix = []byte(`{"data":`)
	pingSuffix = []byte(`}`)
)
