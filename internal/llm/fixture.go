package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The fixture format: one JSON file per conversation. testdata/replay/README.md
// and docs/models.md describe it for people; the types below are the truth.

// Fixture sources: who wrote the file.
const (
	SourceHand     = "hand"
	SourceRecorded = "recorded"
)

// Conversation is one exchange with a model, turn by turn.
type Conversation struct {
	// Name is the file name without .json; set on load, not stored.
	Name string `json:"-"`
	// Comment is the header a person reads first: what the conversation is
	// for and whether it was written by hand or recorded.
	Comment string `json:"comment"`
	// Source is "hand" or "recorded".
	Source string `json:"source"`
	// Match picks the conversation: a substring (Match) or a regular
	// expression (MatchRegexp) of the request's first user message.
	Match       string `json:"match,omitempty"`
	MatchRegexp string `json:"match_regexp,omitempty"`
	// Model, when set, must equal the request's model (ladder tiers).
	Model string `json:"model,omitempty"`
	// Turns[i] answers a request holding i assistant messages.
	Turns []Turn `json:"turns"`

	re *regexp.Regexp
}

// Turn is one request and the answer recorded for it.
type Turn struct {
	// Expect, when set, must be a substring of the request's last message;
	// otherwise the run has diverged from the recording.
	Expect string `json:"expect,omitempty"`
	// Errors are served, one per attempt, before Response: the first time
	// this turn is asked for gets Errors[0], and so on. They exercise the
	// retry path (a 429 with retry_after) end to end.
	Errors   []InjectedError `json:"errors,omitempty"`
	Response Response        `json:"response"`
}

// InjectedError is an HTTP refusal a turn serves before its response.
type InjectedError struct {
	Status int `json:"status"`
	// RetryAfter is sent as the retry-after header: seconds or an HTTP date.
	RetryAfter string `json:"retry_after,omitempty"`
	Body       string `json:"body,omitempty"`
}

// Response is the model's answer at one turn.
type Response struct {
	// Model is the name answered with; empty means the request's model.
	Model     string            `json:"model,omitempty"`
	Content   string            `json:"content,omitempty"`
	ToolCalls []FixtureToolCall `json:"tool_calls,omitempty"`
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is what the call cost, so replayed spend is deterministic.
	Usage FixtureUsage `json:"usage"`
}

// FixtureToolCall is a tool call the model made. ID defaults to
// "call_<turn>_<index>".
type FixtureToolCall struct {
	ID        string    `json:"id,omitempty"`
	Name      string    `json:"name"`
	Arguments Arguments `json:"arguments"`
}

// FixtureUsage is tokens in and out; cost comes from the price table.
type FixtureUsage struct {
	TokensIn  int64 `json:"tokens_in"`
	TokensOut int64 `json:"tokens_out"`
}

// Arguments is the raw argument text of a tool call. In a file it is written
// as inline JSON when it is compact JSON (easy to write by hand) and as a
// JSON string otherwise, which is how a malformed call is written:
// "arguments": "{\"path\": " keeps the broken text byte for byte.
type Arguments string

// MarshalJSON writes compact JSON inline and anything else as a string, so a
// load gives back the same bytes.
func (a Arguments) MarshalJSON() ([]byte, error) {
	s := string(a)
	// Inline only what encoding/json will copy unchanged: compact JSON with
	// no character it escapes (<, >, &, U+2028, U+2029).
	if t := strings.TrimSpace(s); t == s && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) &&
		!strings.ContainsAny(s, "<>&\u2028\u2029") && json.Valid([]byte(s)) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(s)) == nil && buf.String() == s {
			return []byte(s), nil
		}
	}
	return json.Marshal(s)
}

// UnmarshalJSON reads a string as raw text and inline JSON as its compact form.
func (a *Arguments) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*a = Arguments(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return err
	}
	*a = Arguments(buf.String())
	return nil
}

// ParseConversation reads one fixture file's bytes; name labels errors and
// becomes the conversation's Name.
func ParseConversation(name string, data []byte) (*Conversation, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	c := &Conversation{}
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("fixture %s: text after the conversation object", name)
	}
	c.Name = name
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", name, err)
	}
	return c, nil
}

func (c *Conversation) check() error {
	if strings.TrimSpace(c.Comment) == "" {
		return errors.New("comment is empty: say what the conversation is for and whether it was written by hand or recorded")
	}
	if c.Source != SourceHand && c.Source != SourceRecorded {
		return fmt.Errorf("source is %q; want %q or %q", c.Source, SourceHand, SourceRecorded)
	}
	switch {
	case c.Match == "" && c.MatchRegexp == "":
		return errors.New("needs match or match_regexp")
	case c.Match != "" && c.MatchRegexp != "":
		return errors.New("has both match and match_regexp; keep one")
	case c.MatchRegexp != "":
		re, err := regexp.Compile(c.MatchRegexp)
		if err != nil {
			return fmt.Errorf("match_regexp: %w", err)
		}
		c.re = re
	}
	if len(c.Turns) == 0 {
		return errors.New("has no turns")
	}
	for i := range c.Turns {
		t := &c.Turns[i]
		for j, e := range t.Errors {
			if e.Status < 400 || e.Status > 599 {
				return fmt.Errorf("turn %d error %d: status %d is not an HTTP error", i, j, e.Status)
			}
			if e.RetryAfter != "" {
				if _, ok := retryAfter(http.Header{"Retry-After": {e.RetryAfter}}, time.Time{}); !ok {
					return fmt.Errorf("turn %d error %d: retry_after %q is neither seconds nor an HTTP date", i, j, e.RetryAfter)
				}
			}
		}
		r := &t.Response
		if r.Usage.TokensIn < 0 || r.Usage.TokensOut < 0 {
			return fmt.Errorf("turn %d: usage must not be negative", i)
		}
		for j := range r.ToolCalls {
			tc := &r.ToolCalls[j]
			if tc.Name == "" {
				return fmt.Errorf("turn %d tool call %d: name is empty", i, j)
			}
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			}
		}
		if r.FinishReason == "" {
			r.FinishReason = "stop"
			if len(r.ToolCalls) > 0 {
				r.FinishReason = "tool_calls"
			}
		}
	}
	return nil
}

// matches reports whether first (the request's first user message) picks c.
func (c *Conversation) matches(first string) bool {
	if c.re != nil {
		return c.re.MatchString(first)
	}
	return strings.Contains(first, c.Match)
}

// LoadFixtures reads every *.json file directly in dir, in name order.
func LoadFixtures(dir string) ([]*Conversation, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list fixtures in %s: %w", dir, err)
	}
	sort.Strings(names)
	var convs []*Conversation
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read fixture: %w", err)
		}
		c, err := ParseConversation(strings.TrimSuffix(filepath.Base(path), ".json"), data)
		if err != nil {
			return nil, err
		}
		convs = append(convs, c)
	}
	if len(convs) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("load fixtures: %w", err)
		}
		return nil, fmt.Errorf("load fixtures: no *.json conversation in %s", dir)
	}
	return convs, nil
}

// MarshalConversation renders c in the file format.
func MarshalConversation(c *Conversation) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
