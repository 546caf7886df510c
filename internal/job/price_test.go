package job

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// With no configuration, a call to the default model is priced from the
// built-in table: the item and day budgets in USD see real spend, not $0.
func TestDefaultModelSpendIsPriced(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18",
"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":100000,"completion_tokens":20000,"total_tokens":120000}}`)
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.Models[0].BaseURL = srv.URL + "/inference"
	getenv := func(k string) string { return map[string]string{"GITHUB_TOKEN": "t"}[k] }
	tier, err := NewTier(cfg, 0, func(s string) string { return s }, nil, llm.WithHTTPClient(srv.Client()), llm.WithGetenv(getenv))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tier.Model.Complete(context.Background(), agent.ModelRequest{Model: tier.Name,
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := config.BuiltinPrices[cfg.Models[0].Name]
	want := (100000*p.Input + 20000*p.Output) / 1e6
	if want == 0 || math.Abs(resp.Usage.USD-want) > 1e-9 {
		t.Errorf("spend of the default model %s = $%v, want $%v", cfg.Models[0].Name, resp.Usage.USD, want)
	}
	if tier.USDPerMTokIn != p.Input || tier.USDPerMTokOut != p.Output {
		t.Errorf("tier prices the next call at %v/%v, want %v/%v", tier.USDPerMTokIn, tier.USDPerMTokOut, p.Input, p.Output)
	}
}
