package agent

// The text a chat template adds around what a request holds, in bytes of
// template text, each rounded well up from the templates in use:
//
//   - per message: the start and end markers, the role, the separators
//     after them, and the wrapper some templates put around a tool's
//     result (ChatML with Hermes' "<tool_response>\n … \n</tool_response>"
//     is under 60 bytes even where its markers are plain text);
//   - per tool call: the markers and keys around a call's name and
//     arguments ("<tool_call>\n{"name": …, "arguments": …}\n</tool_call>" is
//     under 50 bytes);
//   - per tool: the keys and brackets around a function's schema
//     ({"type": "function", "function": {"name": …, "description": …,
//     "parameters": …}} is under 90 bytes);
//   - per request: the template's own text, which the request does not
//     hold: the tool-use instructions a template adds when tools are given
//     (about 380 bytes in the Hermes and Qwen templates; Anthropic documents
//     346 tokens for its tool-use system prompt), a default system prompt,
//     the reply primer.
const (
	boundPerMessage  = 64
	boundPerToolCall = 64
	boundPerTool     = 128
	boundPerRequest  = 1024
)

// jsonIndent is the widest indent a template re-renders a JSON value with
// (Llama 3.1's renders tools with tojson(indent=4)).
const jsonIndent = 4

// MaxInputTokens bounds the input tokens any server can count for req: the
// booking of a call before it is sent (DESIGN §9: spend is never
// under-counted), which must not fall below what the server charges if the
// answer is lost.
//
// Why it holds: a byte-level BPE tokenizer (the GPT, Llama 3, Qwen, Mistral
// families), and a SentencePiece one with byte fallback, splits a text into
// tokens of at least one byte each, so a text costs at most its byte count
// in tokens; whatever merges the tokenizer knows only lower the count, and a
// template's special tokens are one token for several bytes. The server
// tokenizes the chat template's rendering of the request: every text the
// request holds (contents, roles, tool-call ids, names and arguments, tool
// names, descriptions and schemas), the JSON values (arguments, schemas) as
// the template re-renders them (jsonBound), and the template's own text,
// bounded above in bytes. So the bound is a property of the request, not of
// a fixture or of one tokenizer's averages: about four times what a
// tokenizer really counts on English and code, the price of never
// under-counting a call whose answer was lost.
func MaxInputTokens(req ModelRequest) int64 {
	n := boundPerRequest + len(req.Model)
	for _, m := range req.Messages {
		n += boundPerMessage + len(m.Role) + len(m.Content) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += boundPerToolCall + len(c.ID) + len(c.Name) + jsonBound(c.Arguments, 1)
		}
	}
	for _, t := range req.Tools {
		n += boundPerTool + len(t.Name) + len(t.Description) + jsonBound(string(t.Parameters), 2)
	}
	return int64(n)
}

// jsonBound is the most bytes a JSON text takes as a template may re-render
// it inside depth enclosing objects: a space after each ':' and ',' (Python's
// json.dumps separators) or, indented, a newline and the indent of its depth
// after each opening bracket and ',' and before each closing one. Escapes
// are kept as they are (HF templates' tojson writes non-ASCII as it is). Any
// text is accepted: what is not JSON costs its bytes and a little more.
func jsonBound(s string, depth int) int {
	n := len(s)
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ':':
			n++
		case '{', '[':
			depth++
			n += 1 + jsonIndent*depth
		case '}', ']':
			depth = max(depth-1, 0)
			n += 1 + jsonIndent*depth
		case ',':
			n += 1 + jsonIndent*depth
		}
	}
	return n
}
