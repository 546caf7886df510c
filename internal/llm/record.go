package llm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Recorder wraps a live model and writes every exchange as a fixture: one
// file per conversation, rewritten after each turn so a killed run still
// leaves what it did. It implements agent.Model.
type Recorder struct {
	m   agent.Model
	dir string

	mu    sync.Mutex
	convs []*recording
	next  int // number for the next file; 0 until dir was scanned
}

type recording struct {
	first string
	file  string
	conv  Conversation
}

// expectLen bounds a recorded expect string: the first line of what the model
// was sent, enough to notice divergence, short enough to edit.
const expectLen = 60

// Record wraps m so each conversation it serves is written to dir in the
// fixture format. A recording made against any provider, the replay server
// included, replays to the same responses and usage.
func Record(m agent.Model, dir string) *Recorder {
	return &Recorder{m: m, dir: dir}
}

// Complete calls the wrapped model and records the exchange. When the file
// cannot be written the response is still returned, with its usage, beside
// the error: the tokens were spent and must not be lost from the accounts.
func (r *Recorder) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	resp, err := r.m.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	if werr := r.add(req, resp); werr != nil {
		return resp, fmt.Errorf("record model exchange in %s: %w", r.dir, werr)
	}
	return resp, nil
}

func (r *Recorder) add(req agent.ModelRequest, resp agent.ModelResponse) error {
	turn, first, ok := 0, "", false
	for _, m := range req.Messages {
		switch {
		case m.Role == agent.RoleAssistant:
			turn++
		case m.Role == agent.RoleUser && !ok:
			first, ok = m.Content, true
		}
	}
	if !ok {
		return fmt.Errorf("the request has no user message to name its conversation by")
	}
	r.mu.Lock()
	defer r.mu.Unlock()

	var rec *recording
	// Extend the newest recording of this conversation that stops just
	// before this turn.
	for i := len(r.convs) - 1; i >= 0; i-- {
		if c := r.convs[i]; c.first == first && len(c.conv.Turns) == turn {
			rec = c
			break
		}
	}
	if rec == nil {
		// A new conversation, or a branch of an earlier one (the same first
		// message asked again): copy the turns the branch shares.
		var shared []Turn
		if turn > 0 {
			for i := len(r.convs) - 1; i >= 0 && shared == nil; i-- {
				if c := r.convs[i]; c.first == first && len(c.conv.Turns) > turn {
					shared = append([]Turn(nil), c.conv.Turns[:turn]...)
				}
			}
			if shared == nil {
				return fmt.Errorf("turn %d of a conversation whose earlier turns were not recorded", turn)
			}
		}
		file, err := r.newFile(first)
		if err != nil {
			return err
		}
		rec = &recording{first: first, file: file, conv: Conversation{
			Comment: "Recorded by roadmap --record. Each expect is the start of what the model was sent at that turn; " +
				"edit it if it holds run-specific text (times, temporary paths).",
			Source: SourceRecorded,
			Match:  first,
			Turns:  shared,
		}}
		r.convs = append(r.convs, rec)
	}
	rec.conv.Turns = append(rec.conv.Turns, Turn{
		Expect:   expectOf(req.Messages[len(req.Messages)-1].Content),
		Response: fixtureResponse(resp),
	})
	data, err := MarshalConversation(&rec.conv)
	if err != nil {
		return err
	}
	tmp := rec.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, rec.file)
}

func fixtureResponse(resp agent.ModelResponse) Response {
	out := Response{
		Model:        resp.Model,
		Content:      resp.Message.Content,
		FinishReason: resp.FinishReason,
		Usage:        FixtureUsage{TokensIn: resp.Usage.TokensIn, TokensOut: resp.Usage.TokensOut},
	}
	for _, tc := range resp.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, FixtureToolCall{ID: tc.ID, Name: tc.Name, Arguments: Arguments(tc.Arguments)})
	}
	return out
}

// expectOf is the first non-blank line of s, cut to expectLen bytes.
func expectOf(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return text.Cut(line, expectLen)
		}
	}
	return ""
}

var (
	numbered = regexp.MustCompile(`^(\d+)-`)
	unsafe   = regexp.MustCompile(`[^a-z0-9]+`)
)

// newFile names the next fixture "NNN-slug.json", after any numbered file
// already in dir so a second recording never overwrites the first. r.mu is held.
func (r *Recorder) newFile(first string) (string, error) {
	if r.next == 0 {
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return "", err
		}
		entries, err := os.ReadDir(r.dir)
		if err != nil {
			return "", err
		}
		r.next = 1
		for _, e := range entries {
			if m := numbered.FindStringSubmatch(e.Name()); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil && n >= r.next {
					r.next = n + 1
				}
			}
		}
	}
	slug := strings.Trim(unsafe.ReplaceAllString(strings.ToLower(expectOf(first)), "-"), "-")
	slug = strings.TrimRight(text.Cut(slug, 40), "-")
	if slug == "" {
		slug = "conversation"
	}
	name := fmt.Sprintf("%03d-%s.json", r.next, slug)
	r.next++
	return filepath.Join(r.dir, name), nil
}
