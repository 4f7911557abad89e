package clients

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentls/agentls/api"
)

// Model answers one model call. Implementations in this package are safe for
// concurrent use.
type Model interface {
	// Complete sends req and streams the answer to onDelta (which may be
	// nil) as it arrives. It returns the whole answer, or a classified
	// error (see errors.go). ctx cancels the call, HTTP included.
	Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// Agent names used in requests: the coordinator, or a subtask id.
const AgentCoordinator = "coordinator"

// Request is one model call.
type Request struct {
	// Agent is "coordinator" or the subtask id of the worker asking. The
	// scripted model answers each agent from its own list.
	Agent string
	// Run is the 1-based number of the agent/run in this process that the
	// call belongs to; the scripted model reads "N:<agent>" keys for N ≥ 2.
	// 0 is taken as 1.
	Run int
	// System is the system prompt.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools are the tools the model may call.
	Tools []Tool
	// MaxTokens bounds the answer; 0 means DefaultMaxTokens.
	MaxTokens int
	// Thinking, when set, asks a model that can think to (docs/MODELS.md,
	// thinking): its thinking streams as Delta.Thinking and comes back in
	// Response.Thinking.
	Thinking *Thinking
	// CacheKey names the prompt cache the request's prefix belongs to:
	// OpenAI's prompt_cache_key, sent where the API takes it (OpenAI's own
	// API). The requests of one session share one, so that they reach the
	// same cache (docs/MODELS.md, Prompt caching).
	CacheKey string
}

// Thinking asks for a model's thinking, BudgetTokens at most.
type Thinking struct {
	BudgetTokens int
}

// DefaultMaxTokens bounds an answer when Request.MaxTokens is 0.
const DefaultMaxTokens = 8192

// Role is who speaks a Message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the tool calls of the assistant
	// message before it.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation.
type Message struct {
	Role Role
	// Text is the user's words or the assistant's prose. A RoleTool message
	// may carry text too (sent after the results).
	Text string
	// ToolCalls are the assistant's tool calls.
	ToolCalls []ToolCall
	// ToolResults answer the tool calls of the previous assistant message
	// (RoleTool only).
	ToolResults []ToolResult
	// Images go with a RoleUser message's text, after it.
	Images []Image
	// Thinking is what an assistant message's model thought before its
	// answer, as its Response gave it: it goes back to the provider that
	// made it (Anthropic requires its signed blocks on the turns that
	// follow a tool call).
	Thinking []ThinkingBlock
}

// Image is an image given to a model: its bytes and type (one of
// api.ImageTypes), and the name the text calls it by.
type Image struct {
	MimeType string
	Data     []byte
	Name     string
}

// ThinkingBlock is a part of a model's thinking: its text and what the
// provider needs to take it back.
type ThinkingBlock struct {
	Text string
	// Signature seals the block (Anthropic's signature).
	Signature string
	// Redacted is the data of a block the provider sent encrypted, with
	// no text (Anthropic's redacted_thinking).
	Redacted string
	// ID and Encrypted take an OpenAI reasoning item back (Responses
	// API): its id and its encrypted_content. Summary holds the parts of
	// its summary, whose text joined by blank lines is Text.
	ID        string
	Encrypted string
	Summary   []string
}

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	// ID is unique within a conversation; ToolResult.CallID refers to it.
	ID   string
	Name string
	// Arguments is a JSON object, never empty (an empty call is "{}").
	Arguments json.RawMessage
}

// ToolResult is what a tool call gave back.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
	// Images go with the content where the provider's tool results take
	// images (Anthropic); elsewhere the content says they are not shown.
	Images []Image
}

// Tool describes a tool to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, an object schema.
	// Empty means a tool without arguments.
	Parameters json.RawMessage
}

// Delta is a piece of an answer as it streams.
type Delta struct {
	// Text is the next piece of the answer's text.
	Text string
	// ToolCall reports progress on a tool call: its ID and Name when it
	// starts, then pieces of its arguments.
	ToolCall *ToolCallDelta
	// Thinking is the next piece of the model's thinking.
	Thinking string
	// Restart says that the attempt that streamed the deltas so far failed
	// and is being retried: discard them; the answer streams anew.
	Restart bool
}

// ToolCallDelta is progress on the Index-th tool call of an answer.
type ToolCallDelta struct {
	Index int
	// ID and Name are set on the first delta of a call.
	ID   string
	Name string
	// Arguments is the next piece of the arguments' JSON text.
	Arguments string
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, the same for every provider.
const (
	StopEndTurn   StopReason = "end_turn"   // the model finished its answer
	StopToolUse   StopReason = "tool_use"   // the model waits for tool results
	StopMaxTokens StopReason = "max_tokens" // the answer hit MaxTokens
	StopOther     StopReason = "other"      // refusal, content filter, …
)

// Response is a whole answer.
type Response struct {
	Text       string
	ToolCalls  []ToolCall
	Usage      api.Usage
	StopReason StopReason
	// Thinking is what the model thought before its answer, when it said.
	Thinking []ThinkingBlock
}

// ThinkingText is the text of blocks, joined.
func ThinkingText(blocks []ThinkingBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// emitter forwards deltas to an optional callback and remembers whether
// anything was sent, so a retry knows to send a Restart first.
type emitter struct {
	fn   func(Delta)
	sent bool
}

func (e *emitter) emit(d Delta) {
	if e.fn == nil {
		return
	}
	e.sent = true
	e.fn(d)
}

func (e *emitter) restart() {
	if e.fn != nil && e.sent {
		e.fn(Delta{Restart: true})
		e.sent = false
	}
}

func maxTokens(req *Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return DefaultMaxTokens
}

// arguments returns raw as a JSON object, "{}" when empty.
func arguments(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}
