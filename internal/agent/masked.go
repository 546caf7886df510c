package agent

import "context"

// Masked returns m with every request passed through mask first: message
// texts and the arguments of earlier tool calls. What a tool printed, a file
// the agent read or a value the model echoed goes to the provider only as the
// secret masker leaves it (DESIGN §3: every model request passes the masker).
func Masked(m Model, mask func(string) string) Model {
	if mask == nil {
		return m
	}
	return maskedModel{m: m, mask: mask}
}

type maskedModel struct {
	m    Model
	mask func(string) string
}

func (mm maskedModel) Complete(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	msgs := make([]Message, len(req.Messages))
	for i, msg := range req.Messages {
		msg.Content = mm.mask(msg.Content)
		if len(msg.ToolCalls) > 0 {
			calls := make([]ToolCall, len(msg.ToolCalls))
			for j, c := range msg.ToolCalls {
				c.Arguments = mm.mask(c.Arguments)
				calls[j] = c
			}
			msg.ToolCalls = calls
		}
		msgs[i] = msg
	}
	req.Messages = msgs
	return mm.m.Complete(ctx, req)
}
