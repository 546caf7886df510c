package world

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// maxModelRequest bounds a chat request the model server reads: far above
// any input window, so only a runaway request is cut.
const maxModelRequest = 8 << 20

// model serves the replay model: each chat request is shown to
// Options.OnModelRequest and waits out Options.ModelLatency (unless its
// caller gives up first) before the replay answers it.
func (w *World) model(rw http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxModelRequest))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if w.o.OnModelRequest != nil {
			w.o.OnModelRequest(body)
		}
		if w.o.ModelLatency > 0 {
			select {
			case <-time.After(w.o.ModelLatency):
			case <-r.Context().Done():
				return
			}
		}
	}
	w.Replay.ServeHTTP(rw, r)
}

// Spy is a model that remembers every request it passes on to Model; Before,
// when set, runs before each call with the call's number (from 1). A test
// reads what a Job asked, or acts at a point of its run.
type Spy struct {
	agent.Model
	Before func(n int, req agent.ModelRequest)

	mu   sync.Mutex
	reqs []agent.ModelRequest
}

// Complete records req, runs Before and asks the model.
func (m *Spy) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	if m.Before != nil {
		m.Before(n, req)
	}
	return m.Model.Complete(ctx, req)
}

// Requests are the requests so far, in order.
func (m *Spy) Requests() []agent.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.ModelRequest(nil), m.reqs...)
}
