package enginestest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// Anthropic is a fake of the Anthropic Messages API (POST /v1/messages,
// streamed as server-sent events or answered whole), as Claude Code calls
// it through ANTHROPIC_BASE_URL.
func Anthropic(t testing.TB, script ...Turn) *Server {
	return newServer(t, anthropicWire{}, script)
}

type anthropicWire struct{}

func (anthropicWire) inspect(body []byte) (int, bool) {
	return countKey(body, "type", "tool_result"), hasNonEmpty(body, "tools")
}

func (anthropicWire) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, n int) {
	if r.URL.Path == "/v1/messages/count_tokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":12}`)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	id := fmt.Sprintf("msg_%d", n)
	stop := "end_turn"
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	toolID := fmt.Sprintf("toolu_%d", n)
	if t.Tool != nil {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": toolID, "name": t.Tool.Name, "input": t.Tool.Input})
	}
	usage := map[string]any{"input_tokens": 120, "output_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !streamed(r, body) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, mustJSON(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage}))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sseEvent(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 120, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	flush(w)
	idx := 0
	if t.Text != "" {
		sseEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range pieces(t.Text) {
			sseEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}})
			flush(w)
		}
		sseEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if t.Tool != nil {
		sseEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": t.Tool.Name, "input": map[string]any{}}})
		sseEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(t.Tool.Input)}})
		sseEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	}
	sseEvent(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 30}})
	sseEvent(w, "message_stop", map[string]any{"type": "message_stop"})
	flush(w)
}

// OpenAIResponses is a fake of the OpenAI Responses API (POST /responses,
// streamed as server-sent events), as Codex calls it with
// wire_api = "responses".
func OpenAIResponses(t testing.TB, script ...Turn) *Server {
	return newServer(t, responsesWire{}, script)
}

type responsesWire struct{}

func (responsesWire) inspect(body []byte) (int, bool) {
	return countKey(body, "type", "function_call_output") + countKey(body, "type", "custom_tool_call_output"),
		hasNonEmpty(body, "tools")
}

func (responsesWire) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, n int) {
	id := fmt.Sprintf("resp_%d", n)
	var output []any
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sseEvent(w, "response.created", map[string]any{"type": "response.created", "sequence_number": 0,
		"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "output": []any{}}})
	flush(w)
	idx := 0
	if t.Text != "" {
		msgID := fmt.Sprintf("msg_%d", n)
		sseEvent(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": idx,
			"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		for _, p := range pieces(t.Text) {
			sseEvent(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": msgID,
				"output_index": idx, "content_index": 0, "delta": p})
			flush(w)
		}
		item := map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
		sseEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	if t.Tool != nil {
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": t.Tool.Name, "arguments": mustJSON(t.Tool.Input), "status": "completed"}
		if ns := namespaceOf(body, t.Tool.Name); ns != "" {
			// A tool offered inside a namespace (Codex puts each MCP
			// server's tools in one) is called with it.
			item["namespace"] = ns
		}
		sseEvent(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": idx, "item": item})
		sseEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		output = append(output, item)
	}
	sseEvent(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "object": "response", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 120, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 30, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 150}}})
	flush(w)
}

// namespaceOf is the namespace of the request's tools that offers the
// function name ("" when it is offered at the top, or not at all).
func namespaceOf(body []byte, name string) string {
	var req struct {
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	for _, t := range req.Tools {
		if t.Type != "namespace" {
			continue
		}
		for _, f := range t.Tools {
			if f.Name == name {
				return t.Name
			}
		}
	}
	return ""
}

// Gemini is a fake of the Gemini API (POST
// /v1beta/models/MODEL:streamGenerateContent?alt=sse, streamed, and
// :generateContent, whole), as Gemini CLI calls it through
// GOOGLE_GEMINI_BASE_URL.
func Gemini(t testing.TB, script ...Turn) *Server {
	return newServer(t, geminiWire{}, script)
}

type geminiWire struct{}

func (geminiWire) inspect(body []byte) (int, bool) {
	return countKey(body, "functionResponse", ""), countKey(body, "functionDeclarations", "") > 0
}

func (geminiWire) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, n int) {
	usage := map[string]any{"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 150}
	if !streamed(r, body) {
		if isJSONMode(body) {
			// A check the CLI makes with a response schema (who speaks
			// next, is it looping): the model says it is done.
			t = Turn{Text: `{"reasoning":"The model has finished.","next_speaker":"user","is_loop":false,"confidence":0}`}
		}
		var parts []any
		if t.Text != "" {
			parts = append(parts, map[string]any{"text": t.Text})
		}
		if t.Tool != nil {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": t.Tool.Name, "args": t.Tool.Input}})
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, mustJSON(map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": usage, "modelVersion": "gemini-2.5-pro"}))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(parts []any, finish string) {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		msg := map[string]any{"candidates": []any{c}, "modelVersion": "gemini-2.5-pro"}
		if finish != "" {
			c["finishReason"] = finish
			msg["usageMetadata"] = usage
		}
		sseEvent(w, "", msg)
		flush(w)
	}
	if t.Text != "" {
		for _, p := range pieces(t.Text) {
			chunk([]any{map[string]any{"text": p}}, "")
		}
	}
	if t.Tool != nil {
		chunk([]any{map[string]any{"functionCall": map[string]any{"name": t.Tool.Name, "args": t.Tool.Input}}}, "")
	}
	chunk([]any{map[string]any{"text": ""}}, "STOP")
}

// isJSONMode reports whether a Gemini request asks for JSON output.
func isJSONMode(body []byte) bool {
	var v struct {
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
		Config struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"config"`
	}
	_ = json.Unmarshal(body, &v)
	return v.GenerationConfig.ResponseMimeType == "application/json" || v.Config.ResponseMimeType == "application/json"
}
