package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// The OpenAI chat-completions wire format, as much of it as the replay server
// reads and writes. These types stop here; the rest of the code sees agent's.

type wireRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	Stream              bool          `json:"stream,omitempty"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name string `json:"name"`
	// Arguments is a JSON string on the wire; some clients send an object.
	Arguments json.RawMessage `json:"arguments"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

type wireResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireRespMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
}

type wireRespMessage struct {
	Role      string             `json:"role"`
	Content   *string            `json:"content"`
	ToolCalls []wireToolCallResp `json:"tool_calls,omitempty"`
}

type wireToolCallResp struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type wireError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

// maxRequestBody bounds what the server reads; a prompt is far smaller.
const maxRequestBody = 32 << 20

// parseChatRequest reads an OpenAI chat-completions request body. It is the
// replay server's parser of untrusted text and is fuzzed.
func parseChatRequest(body []byte) (agent.ModelRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return agent.ModelRequest{}, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	if w.Stream {
		return agent.ModelRequest{}, errors.New("streaming is not supported by the replay server; send stream: false")
	}
	if len(w.Messages) == 0 {
		return agent.ModelRequest{}, errors.New("messages is empty")
	}
	req := agent.ModelRequest{Model: w.Model, MaxTokens: max(w.MaxTokens, w.MaxCompletionTokens)}
	for i, m := range w.Messages {
		content, err := wireContent(m.Content)
		if err != nil {
			return agent.ModelRequest{}, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		msg := agent.Message{Content: content, ToolCallID: m.ToolCallID}
		switch m.Role {
		case "system", "developer":
			msg.Role = agent.RoleSystem
		case "user":
			msg.Role = agent.RoleUser
		case "assistant":
			msg.Role = agent.RoleAssistant
		case "tool":
			msg.Role = agent.RoleTool
		default:
			return agent.ModelRequest{}, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		for j, tc := range m.ToolCalls {
			args, err := wireArguments(tc.Function.Arguments)
			if err != nil {
				return agent.ModelRequest{}, fmt.Errorf("messages[%d].tool_calls[%d].function.arguments: %w", i, j, err)
			}
			msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, agent.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

// wireContent reads a message's content: a string, null, or an array of
// parts of which the text ones are joined.
func wireContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string, null or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// wireArguments keeps tool-call arguments as raw text: a JSON string is
// unquoted, anything else is passed through as it came.
func wireArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	return string(raw), nil
}

func toWire(resp agent.ModelResponse, id string) wireResponse {
	msg := wireRespMessage{Role: "assistant"}
	if resp.Message.Content != "" || len(resp.Message.ToolCalls) == 0 {
		content := resp.Message.Content
		msg.Content = &content
	}
	for _, tc := range resp.Message.ToolCalls {
		w := wireToolCallResp{ID: tc.ID, Type: "function"}
		w.Function.Name, w.Function.Arguments = tc.Name, tc.Arguments
		msg.ToolCalls = append(msg.ToolCalls, w)
	}
	return wireResponse{
		ID: id, Object: "chat.completion", Model: resp.Model,
		Choices: []wireChoice{{Index: 0, Message: msg, FinishReason: resp.FinishReason}},
		Usage: wireUsage{
			PromptTokens: resp.Usage.TokensIn, CompletionTokens: resp.Usage.TokensOut,
			TotalTokens: resp.Usage.TokensIn + resp.Usage.TokensOut,
		},
	}
}

// ServeHTTP is the OpenAI-compatible API: POST to any path ending in
// /chat/completions (/chat/completions, /v1/…, /inference/…, GitHub's
// /orgs/ORG/inference/…), and GET /_replay/stats for what was served.
func (r *Replay) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	switch {
	case hr.URL.Path == "/_replay/stats" && hr.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, r.Stats())
	case strings.HasSuffix(hr.URL.Path, "/chat/completions"):
		if hr.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeWireError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
			return
		}
		r.serveChat(w, hr)
	default:
		writeWireError(w, http.StatusNotFound, "not_found", fmt.Sprintf("the replay server has no %s %s; it serves POST /chat/completions and GET /_replay/stats", hr.Method, hr.URL.Path))
	}
}

func (r *Replay) serveChat(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxRequestBody+1))
	if err != nil {
		writeWireError(w, http.StatusBadRequest, "invalid_request_error", "read request body: "+err.Error())
		return
	}
	if len(body) > maxRequestBody {
		writeWireError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request body too large")
		return
	}
	req, err := parseChatRequest(body)
	if err != nil {
		r.mu.Lock()
		r.stats.Requests++
		r.stats.Errors++
		r.mu.Unlock()
		writeWireError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	resp, err := r.Complete(hr.Context(), req)
	var div *DivergenceError
	var inj *APIError
	switch {
	case errors.As(err, &div):
		writeWireError(w, http.StatusBadRequest, "replay_divergence", div.Error())
	case errors.As(err, &inj):
		if inj.retryAfterHeader != "" {
			w.Header().Set("Retry-After", inj.retryAfterHeader)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(inj.Status)
		io.WriteString(w, inj.Body)
	case err != nil:
		writeWireError(w, http.StatusInternalServerError, "server_error", err.Error())
	default:
		writeJSON(w, http.StatusOK, toWire(resp, fmt.Sprintf("replay-%d", r.Stats().Calls)))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeWireError(w http.ResponseWriter, status int, code, msg string) {
	var e wireError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, "invalid_request_error", code
	if status >= 500 {
		e.Error.Type = "server_error"
	}
	writeJSON(w, status, e)
}
