package config

// InitLadders are the two-tier ladders roadmap init writes, by provider: a
// cheaper model the implementer starts on, and a larger one that group and
// head repairs climb to and that the verifier and the reviewer use, so
// they judge with another model than the one whose work they judge. Every
// model here has a price in BuiltinPrices (TestPricesCoverDefaultLadder).
var InitLadders = map[string][]Model{
	"github-models": {
		{Provider: "github-models", Name: "openai/gpt-4o-mini", InputWindow: 8000, MaxOutput: 4000},
		{Provider: "github-models", Name: "openai/gpt-4.1", InputWindow: 8000, MaxOutput: 4000},
	},
	"openai": {
		{Provider: "openai", Name: "gpt-4.1-mini", InputWindow: 64000, MaxOutput: 8000},
		{Provider: "openai", Name: "gpt-4.1", InputWindow: 64000, MaxOutput: 8000},
	},
	"anthropic": {
		{Provider: "anthropic", Name: "claude-haiku-4-5", InputWindow: 64000, MaxOutput: 8000},
		{Provider: "anthropic", Name: "claude-sonnet-4-5", InputWindow: 64000, MaxOutput: 8000},
	},
}
