package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPricesCoverDefaultLadder fails when a model of the default ladder, or
// of the ladder init writes for any provider, has no built-in price: the
// item and day budgets in USD would count it as free.
func TestPricesCoverDefaultLadder(t *testing.T) {
	ladders := map[string][]Model{"Default()": Default().Models}
	for provider, l := range InitLadders {
		ladders["init "+provider] = l
	}
	for _, provider := range []string{"github-models", "openai", "anthropic"} {
		if len(InitLadders[provider]) < 2 {
			t.Errorf("init's ladder for %s has %d models, want two tiers", provider, len(InitLadders[provider]))
		}
	}
	for which, l := range ladders {
		for _, m := range l {
			p, ok := BuiltinPrices[m.Name]
			if !ok {
				t.Errorf("%s: model %q has no built-in price", which, m.Name)
				continue
			}
			if p.Input <= 0 || p.Output <= 0 {
				t.Errorf("%s: model %q is priced %+v; a real model is not free", which, m.Name, p)
			}
		}
	}
	for name, p := range Default().Prices {
		if BuiltinPrices[name] != p {
			t.Errorf("Default().Prices[%q] = %+v, want the table's %+v", name, p, BuiltinPrices[name])
		}
	}
	if len(Default().Prices) != len(BuiltinPrices) {
		t.Errorf("Default() has %d prices, the table %d", len(Default().Prices), len(BuiltinPrices))
	}
}

// TestConfiguredPriceOverridesTable: an entry of prices: replaces the
// table's entry for that model, whole, and leaves the other entries.
func TestConfiguredPriceOverridesTable(t *testing.T) {
	cfg, err := Parse("roadmap.yml", []byte("prices:\n  openai/gpt-4o-mini: {input: 7}\n  my-local-model: {input: 1, output: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Price{Input: 7}, cfg.Prices["openai/gpt-4o-mini"]); diff != "" {
		t.Errorf("overridden price (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Price{Input: 1, Output: 2}, cfg.Prices["my-local-model"]); diff != "" {
		t.Errorf("added price (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(BuiltinPrices["openai/gpt-4.1"], cfg.Prices["openai/gpt-4.1"]); diff != "" {
		t.Errorf("a price the configuration does not name (-want +got):\n%s", diff)
	}
	// The table itself is not changed by a configuration.
	if BuiltinPrices["openai/gpt-4o-mini"].Input == 7 {
		t.Error("parsing a configuration changed BuiltinPrices")
	}
	if Default().Prices["openai/gpt-4o-mini"].Input == 7 {
		t.Error("parsing a configuration changed the next Default()")
	}
}
