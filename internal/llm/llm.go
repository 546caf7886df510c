package llm

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/roadmap-dev/roadmap/internal/clock"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Clock is the time the retry loop reads and sleeps on; tests pass a fake one
// so a 7-second retry-after takes no real time.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Option tunes New.
type Option func(*options)

type options struct {
	httpClient *http.Client
	clock      Clock
	observe    func(agent.RetryEvent)
	getenv     func(string) string
	maxRetries int
}

// WithHTTPClient sets the client every HTTP provider uses.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithClock sets the clock the retry loop reads and sleeps on.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithRetryObserver receives one event per retry, before its wait.
func WithRetryObserver(f func(agent.RetryEvent)) Option {
	return func(o *options) { o.observe = f }
}

// WithGetenv sets how the API key is read: getenv(cfg.APIKeyEnv). Without it
// no variable is read and providers that need a key fail to build.
func WithGetenv(f func(string) string) Option { return func(o *options) { o.getenv = f } }

// WithMaxRetries bounds retries per call (attempts = n+1). Default 4.
func WithMaxRetries(n int) Option { return func(o *options) { o.maxRetries = max(n, 0) } }

// backend makes one attempt of one call. It returns *APIError for an HTTP
// refusal so the retry loop can classify it; usage carries tokens only.
type backend interface {
	send(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error)
}

// Client is a configured provider. It implements agent.Model.
type Client struct {
	cfg     Config
	opts    options
	backend backend
	mask    masker
}

var _ agent.Model = (*Client)(nil)

// New builds the provider cfg names.
func New(cfg Config, opts ...Option) (*Client, error) {
	o := options{
		httpClient: &http.Client{},
		clock:      clock.Real{},
		getenv:     func(string) string { return "" },
		maxRetries: DefaultMaxRetries,
	}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := cfg.defaults()
	if err != nil {
		return nil, fmt.Errorf("configure model: %w", err)
	}
	c := &Client{cfg: cfg, opts: o}
	var key string
	if cfg.APIKeyEnv != "" {
		key = o.getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("configure model: provider %s reads its key from %s, which is empty or unset", cfg.Provider, cfg.APIKeyEnv)
		}
		c.mask = masker{key}
	}
	switch cfg.Provider {
	case ProviderGitHubModels, ProviderOpenAI, ProviderOpenAICompatible:
		c.backend = newOpenAIBackend(cfg, key, o, c.mask)
	case ProviderAnthropic:
		c.backend = newAnthropicBackend(cfg, key, o, c.mask)
	case ProviderReplay:
		r, err := LoadReplay(cfg.Fixtures)
		if err != nil {
			return nil, fmt.Errorf("configure model: %w", err)
		}
		c.backend = replayBackend{r}
	}
	return c, nil
}

// Config is the configuration in effect, defaults filled in. It holds no key.
func (c *Client) Config() Config { return c.cfg }

// Complete sends req, fitted to the input window, with bounded retries, and
// returns the answer with its usage priced.
func (c *Client) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	if req.Model == "" {
		req.Model = c.cfg.Model
	}
	if req.Model == "" {
		return agent.ModelResponse{}, fmt.Errorf("%s: no model named in the request or the configuration", c.cfg.Provider)
	}
	if req.MaxTokens <= 0 || req.MaxTokens > c.cfg.MaxOutput {
		req.MaxTokens = c.cfg.MaxOutput
	}
	msgs, _, err := FitMessages(req.Messages, req.Tools, c.cfg.InputWindow, Estimate)
	if err != nil {
		return agent.ModelResponse{}, fmt.Errorf("%s: fit the request to the input window: %w", c.cfg.Provider, err)
	}
	req.Messages = msgs
	resp, err := c.withRetries(ctx, req)
	if err != nil {
		return agent.ModelResponse{}, c.mask.maskErr(err)
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	resp.Usage = priceUsage(c.cfg.Prices, req.Model, resp.Model, resp.Usage)
	return resp, nil
}
