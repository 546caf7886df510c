package agent

import (
	"context"
	"encoding/json"
	"time"
)

// The model interface the agent declares. Providers in internal/llm implement
// Model; nothing here knows about any provider's wire format.

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one call the model asked for. Arguments is the raw JSON text the
// model sent: it is untrusted and may be malformed.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ModelRequest is one call to a model.
type ModelRequest struct {
	Model     string     `json:"model"`
	Messages  []Message  `json:"messages"`
	Tools     []ToolSpec `json:"tools,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
}

// Usage is what one call cost.
type Usage struct {
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	USD       float64 `json:"usd"`
}

// ModelResponse is the model's answer to one request.
type ModelResponse struct {
	Model        string  `json:"model"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason,omitempty"`
	Usage        Usage   `json:"usage"`
}

// Model is a chat model that can call tools.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// RetryEvent is reported each time a provider retries a call.
type RetryEvent struct {
	Reason  string        `json:"reason"`
	Attempt int           `json:"attempt"`
	Wait    time.Duration `json:"wait"`
}
