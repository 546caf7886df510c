package llm

import (
	"fmt"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Provider names, as configuration spells them.
const (
	ProviderGitHubModels     = "github-models"
	ProviderOpenAI           = "openai"
	ProviderOpenAICompatible = "openai-compatible"
	ProviderAnthropic        = "anthropic"
	ProviderReplay           = "replay"
)

// Default limits. GitHub Models' low tiers accept about 8,000 input and 4,000
// output tokens per request; every provider starts there because a window that
// is too small costs context while one that is too large costs a rejected call.
const (
	DefaultInputWindow = 8000
	DefaultMaxOutput   = 4000
)

// Config selects and tunes one provider. It mirrors one tier of the `models:`
// list in .github/roadmap.yml (internal/config reads the file; its `name` is
// Model here).
type Config struct {
	// Provider is github-models, openai, openai-compatible, anthropic or replay.
	Provider string `json:"provider"`
	// BaseURL overrides the provider's endpoint; openai-compatible needs it.
	BaseURL string `json:"base_url,omitempty"`
	// Model is used when a request names none.
	Model string `json:"model"`
	// APIKeyEnv is the NAME of the environment variable holding the key. The
	// key is read through the injected getenv and never stored in Config.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// InputWindow is the most prompt tokens one request may carry; requests are
	// fitted to it before they are sent. 0 means DefaultInputWindow.
	InputWindow int `json:"input_window,omitempty"`
	// MaxOutput caps the tokens a response may have. 0 means DefaultMaxOutput.
	MaxOutput int `json:"max_output,omitempty"`
	// Prices are USD per million tokens, by model name. A model with no price
	// costs 0 USD: spend in tokens is still exact.
	Prices map[string]Price `json:"prices,omitempty"`
	// Fixtures is the directory of recorded exchanges for the replay provider.
	Fixtures string `json:"fixtures,omitempty"`
	// Timeout bounds one HTTP attempt (0 means 5 minutes); a timed-out attempt
	// is retried like a transport error.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Price is USD per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// defaults fills what the provider implies and checks what it needs.
func (c Config) defaults() (Config, error) {
	switch c.Provider {
	case ProviderGitHubModels:
		if c.BaseURL == "" {
			c.BaseURL = "https://models.github.ai/inference"
		}
		if c.APIKeyEnv == "" {
			c.APIKeyEnv = "GITHUB_TOKEN"
		}
	case ProviderOpenAI:
		if c.BaseURL == "" {
			c.BaseURL = "https://api.openai.com/v1"
		}
		if c.APIKeyEnv == "" {
			c.APIKeyEnv = "OPENAI_API_KEY"
		}
	case ProviderOpenAICompatible:
		if c.BaseURL == "" {
			return c, fmt.Errorf("provider %s needs base_url", c.Provider)
		}
	case ProviderAnthropic:
		if c.BaseURL == "" {
			c.BaseURL = "https://api.anthropic.com"
		}
		if c.APIKeyEnv == "" {
			c.APIKeyEnv = "ANTHROPIC_API_KEY"
		}
	case ProviderReplay:
		if c.Fixtures == "" {
			return c, fmt.Errorf("provider %s needs a fixtures directory", c.Provider)
		}
	case "":
		return c, fmt.Errorf("no provider configured (github-models, openai, openai-compatible, anthropic, replay)")
	default:
		return c, fmt.Errorf("unknown provider %q (github-models, openai, openai-compatible, anthropic, replay)", c.Provider)
	}
	if c.InputWindow < 0 || c.MaxOutput < 0 {
		return c, fmt.Errorf("provider %s: input_window and max_output must not be negative", c.Provider)
	}
	if c.InputWindow == 0 {
		c.InputWindow = DefaultInputWindow
	}
	if c.MaxOutput == 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	return c, nil
}

// Cost prices usage for model from the table. A model missing from the table
// costs 0 USD; the docs say so, because a silent zero is only acceptable when a
// person knows where it comes from.
func Cost(prices map[string]Price, model string, tokensIn, tokensOut int64) float64 {
	p, ok := prices[model]
	if !ok {
		return 0
	}
	return (float64(tokensIn)*p.Input + float64(tokensOut)*p.Output) / 1e6
}

// priceUsage fills u.USD, looking the price up under the requested model name
// first (the name configuration uses) and then under the name the provider
// answered with.
func priceUsage(prices map[string]Price, requested, answered string, u agent.Usage) agent.Usage {
	name := requested
	if _, ok := prices[name]; !ok {
		name = answered
	}
	u.USD = Cost(prices, name, u.TokensIn, u.TokensOut)
	return u
}
