package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// openaiBackend speaks chat completions through the official SDK. The SDK's
// own retries are off (the client's loop owns retries, so each one is an
// event and the clock is fake-able) and a middleware turns every refusal into
// an *APIError with the body and retry-after headers, because the SDK's error
// type cannot be built when a body has an unexpected shape (e.g. an "error"
// that is a string).
type openaiBackend struct {
	svc      openai.ChatCompletionService
	provider string
	mask     masker
	// completionTokens sends max_completion_tokens: OpenAI's newer models
	// refuse max_tokens, while many compatible servers know only max_tokens.
	completionTokens bool
}

func newOpenAIBackend(cfg Config, key string, o options, m masker) *openaiBackend {
	ropts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(o.httpClient),
		option.WithMaxRetries(0),
		option.WithMiddleware(refusalMiddleware(cfg.Provider, o.clock, m)),
	}
	if key != "" {
		ropts = append(ropts, option.WithAPIKey(key))
	}
	if cfg.Provider == ProviderGitHubModels {
		ropts = append(ropts,
			option.WithHeader("Accept", "application/vnd.github+json"),
			option.WithHeader("X-GitHub-Api-Version", "2022-11-28"))
	}
	return &openaiBackend{
		svc:              openai.NewChatCompletionService(ropts...),
		provider:         cfg.Provider,
		mask:             m,
		completionTokens: cfg.Provider == ProviderOpenAI,
	}
}

// refusalMiddleware turns a status >= 400 into an *APIError before the SDK
// sees it, and an answer over MaxAnswerBytes into an *AnswerTooLargeError
// (read no further than the bound). Shared by both SDKs: their middleware
// types are the same shape.
func refusalMiddleware(provider string, clock Clock, m masker) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err != nil {
			return res, err
		}
		if res.StatusCode < 400 {
			return boundAnswer(provider, res)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		wait, _ := retryAfter(res.Header, clock.Now())
		return nil, &APIError{Provider: provider, Status: res.StatusCode, Body: m.mask(string(body)), RetryAfter: wait}
	}
}

func (b *openaiBackend) send(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	params, err := openaiParams(req, b.completionTokens)
	if err != nil {
		return agent.ModelResponse{}, fmt.Errorf("%s: build request: %w", b.provider, err)
	}
	cc, err := b.svc.New(ctx, params)
	if err != nil {
		return agent.ModelResponse{}, callError(b.provider, "chat completion", b.mask.scrub(err))
	}
	resp, err := fromOpenAI(cc, req)
	if err != nil {
		return agent.ModelResponse{}, fmt.Errorf("%s: read response: %w", b.provider, err)
	}
	return resp, nil
}

// callError names the call a transport or decoding failure happened in; an
// *APIError already names its provider and goes back as it is. err must be
// scrubbed first: the wrapper copies its text.
func callError(provider, call string, err error) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return err
	}
	return fmt.Errorf("%s: %s: %w", provider, call, err)
}

func openaiParams(req agent.ModelRequest, completionTokens bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: req.Model}
	if req.MaxTokens > 0 {
		if completionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case agent.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case agent.RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case agent.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: tc.Name, Arguments: tc.Arguments,
						},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("message %d has unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		params, err := schemaMap(t)
		if err != nil {
			return p, err
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(params)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{Function: fn}})
	}
	return p, nil
}

// schemaMap decodes a tool's JSON Schema; an empty schema means no arguments.
func schemaMap(t agent.ToolSpec) (map[string]any, error) {
	m := map[string]any{}
	if len(strings.TrimSpace(string(t.Parameters))) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	if err := json.Unmarshal(t.Parameters, &m); err != nil {
		return nil, fmt.Errorf("tool %s: parameters are not a JSON object: %w", t.Name, err)
	}
	return m, nil
}

// fromOpenAI converts a chat completion. Tool-call arguments pass through as
// the raw text the model sent; the agent parses (and answers) bad JSON.
func fromOpenAI(cc *openai.ChatCompletion, req agent.ModelRequest) (agent.ModelResponse, error) {
	if len(cc.Choices) == 0 {
		return agent.ModelResponse{}, fmt.Errorf("the response has no choices")
	}
	ch := cc.Choices[0]
	msg := agent.Message{Role: agent.RoleAssistant, Content: ch.Message.Content}
	if msg.Content == "" && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		call := agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if raw := tc.Function.JSON.Arguments.Raw(); call.Arguments == "" && strings.HasPrefix(strings.TrimSpace(raw), "{") {
			// Some compatible servers send arguments as an object, not a string.
			call.Arguments = raw
		}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		msg.ToolCalls = append(msg.ToolCalls, call)
	}
	resp := agent.ModelResponse{Model: cc.Model, Message: msg, FinishReason: ch.FinishReason}
	if cc.JSON.Usage.Valid() {
		resp.Usage = agent.Usage{TokensIn: cc.Usage.PromptTokens, TokensOut: cc.Usage.CompletionTokens}
	} else {
		// A server that reports no usage still spent tokens: count them with
		// the conservative estimate rather than record a free call.
		resp.Usage = agent.Usage{TokensIn: int64(EstimateRequest(req, Estimate)), TokensOut: int64(estimateMessage(msg, Estimate))}
	}
	return resp, nil
}
