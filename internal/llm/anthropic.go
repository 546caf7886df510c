package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// anthropicBackend speaks the Messages API through the official SDK, with its
// retries off and refusals turned into *APIError, as for OpenAI. The SDK is
// built from options alone (NewMessageService), so it reads no ANTHROPIC_*
// variable from the process environment.
type anthropicBackend struct {
	svc  anthropic.MessageService
	mask masker
}

func newAnthropicBackend(cfg Config, key string, o options, m masker) *anthropicBackend {
	ropts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(o.httpClient),
		option.WithMaxRetries(0),
		option.WithMiddleware(refusalMiddleware(cfg.Provider, o.clock, m)),
	}
	if key != "" {
		ropts = append(ropts, option.WithAPIKey(key))
	}
	return &anthropicBackend{svc: anthropic.NewMessageService(ropts...), mask: m}
}

func (b *anthropicBackend) send(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	params, err := anthropicParams(req)
	if err != nil {
		return agent.ModelResponse{}, fmt.Errorf("anthropic: build request: %w", err)
	}
	msg, err := b.svc.New(ctx, params)
	if err != nil {
		return agent.ModelResponse{}, callError(ProviderAnthropic, "messages", b.mask.scrub(err))
	}
	return fromAnthropic(msg), nil
}

// anthropicParams maps the chat onto the Messages API: system messages become
// the system prompt, tool results become tool_result blocks in a user turn,
// and consecutive turns of one role are merged because the API wants the
// roles to alternate.
func anthropicParams(req agent.ModelRequest) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxOutput
	}
	type turn struct {
		user   bool
		blocks []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleSystem:
			if m.Content != "" {
				p.System = append(p.System, anthropic.TextBlockParam{Text: m.Content})
			}
		case agent.RoleUser:
			if m.Content != "" {
				add(true, anthropic.NewTextBlock(m.Content))
			}
		case agent.RoleTool:
			content := m.Content
			if content == "" {
				// The API refuses empty text blocks.
				content = "(no output)"
			}
			add(true, anthropic.NewToolResultBlock(m.ToolCallID, content, false))
		case agent.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
			}
			add(false, blocks...)
		default:
			return p, fmt.Errorf("message %d has unknown role %q", i, m.Role)
		}
	}
	for _, t := range turns {
		if t.user {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(t.blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return p, err
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				if in.ExtraFields == nil {
					in.ExtraFields = map[string]any{}
				}
				in.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return p, nil
}

// toolInput is a tool_use input for the history. The API takes an object; a
// call whose arguments were not a JSON object (another model's malformed call
// earlier in the history) is sent as {"arguments": raw text} so the history
// stays truthful without being refused.
func toolInput(args string) any {
	raw := json.RawMessage(strings.TrimSpace(args))
	var obj map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &obj) == nil && obj != nil {
		return raw
	}
	if len(raw) == 0 {
		return map[string]any{}
	}
	return map[string]any{"arguments": args}
}

func fromAnthropic(m *anthropic.Message) agent.ModelResponse {
	msg := agent.Message{Role: agent.RoleAssistant}
	var text []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		}
	}
	msg.Content = strings.Join(text, "")
	finish := string(m.StopReason)
	switch m.StopReason {
	case anthropic.StopReasonToolUse:
		finish = "tool_calls"
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		finish = "stop"
	case anthropic.StopReasonMaxTokens:
		finish = "length"
	}
	u := m.Usage
	return agent.ModelResponse{
		Model:        string(m.Model),
		Message:      msg,
		FinishReason: finish,
		Usage: agent.Usage{
			// Cache reads and writes are input the request carried.
			TokensIn:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			TokensOut: u.OutputTokens,
		},
	}
}
