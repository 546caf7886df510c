package config

// PricesDated is when the built-in prices were taken. They are the
// providers' published list prices as roadmap's authors knew them on that
// date; they were not read from the providers' sites when written (the
// machine that wrote them could not reach them), so a person should check
// them against the providers' price pages and correct this table, and a
// repository can always override an entry with its configuration's prices:.
const PricesDated = "2025-11 (list prices as known then; check them against the providers' price pages)"

// BuiltinPrices are USD per million tokens by model name, for the models of
// the providers roadmap supports: GitHub Models (its publisher/model names,
// at the list price of the model's maker, which GitHub Models' paid usage
// follows), OpenAI and Anthropic (both the alias and the dated name, since
// spend is looked up under the requested name and then under the name the
// provider answered with). The default ladder's model and the ladders init
// writes come first; TestPricesCoverDefaultLadder fails when one of them has
// no price here. The configuration's prices: replaces an entry.
var BuiltinPrices = map[string]Price{
	// GitHub Models: the default ladder and init's ladder.
	"openai/gpt-4o-mini": {Input: 0.15, Output: 0.60},
	"openai/gpt-4.1":     {Input: 2.00, Output: 8.00},
	// GitHub Models: other OpenAI models.
	"openai/gpt-4o":       {Input: 2.50, Output: 10.00},
	"openai/gpt-4.1-mini": {Input: 0.40, Output: 1.60},
	"openai/gpt-4.1-nano": {Input: 0.10, Output: 0.40},
	"openai/o3-mini":      {Input: 1.10, Output: 4.40},
	"openai/o4-mini":      {Input: 1.10, Output: 4.40},
	"openai/o3":           {Input: 2.00, Output: 8.00},
	"openai/gpt-5":        {Input: 1.25, Output: 10.00},
	"openai/gpt-5-mini":   {Input: 0.25, Output: 2.00},
	"openai/gpt-5-nano":   {Input: 0.05, Output: 0.40},

	// OpenAI: init's ladder.
	"gpt-4.1-mini": {Input: 0.40, Output: 1.60},
	"gpt-4.1":      {Input: 2.00, Output: 8.00},
	// OpenAI: other models.
	"gpt-4o-mini":  {Input: 0.15, Output: 0.60},
	"gpt-4o":       {Input: 2.50, Output: 10.00},
	"gpt-4.1-nano": {Input: 0.10, Output: 0.40},
	"o3-mini":      {Input: 1.10, Output: 4.40},
	"o4-mini":      {Input: 1.10, Output: 4.40},
	"o3":           {Input: 2.00, Output: 8.00},
	"gpt-5":        {Input: 1.25, Output: 10.00},
	"gpt-5-mini":   {Input: 0.25, Output: 2.00},
	"gpt-5-nano":   {Input: 0.05, Output: 0.40},

	// Anthropic: init's ladder.
	"claude-haiku-4-5":           {Input: 1.00, Output: 5.00},
	"claude-haiku-4-5-20251001":  {Input: 1.00, Output: 5.00},
	"claude-sonnet-4-5":          {Input: 3.00, Output: 15.00},
	"claude-sonnet-4-5-20250929": {Input: 3.00, Output: 15.00},
	// Anthropic: other models.
	"claude-opus-4-5":            {Input: 5.00, Output: 25.00},
	"claude-opus-4-5-20251101":   {Input: 5.00, Output: 25.00},
	"claude-opus-4-1":            {Input: 15.00, Output: 75.00},
	"claude-opus-4-1-20250805":   {Input: 15.00, Output: 75.00},
	"claude-sonnet-4-0":          {Input: 3.00, Output: 15.00},
	"claude-sonnet-4-20250514":   {Input: 3.00, Output: 15.00},
	"claude-3-7-sonnet-latest":   {Input: 3.00, Output: 15.00},
	"claude-3-7-sonnet-20250219": {Input: 3.00, Output: 15.00},
	"claude-3-5-haiku-latest":    {Input: 0.80, Output: 4.00},
	"claude-3-5-haiku-20241022":  {Input: 0.80, Output: 4.00},
}

// builtinPrices is a copy of BuiltinPrices for one configuration, which the
// configuration's prices: then overrides entry by entry.
func builtinPrices() map[string]Price {
	out := make(map[string]Price, len(BuiltinPrices))
	for name, p := range BuiltinPrices {
		out[name] = p
	}
	return out
}
