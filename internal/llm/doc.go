// Package llm holds the model providers behind agent.Model: GitHub Models (the
// default inside Actions), OpenAI and any OpenAI-compatible endpoint (Ollama,
// vLLM) through the official openai-go SDK, Anthropic through its Messages API
// with the official anthropic-sdk-go, and replay, which serves recorded
// exchanges from fixture files in process or over the OpenAI HTTP API.
//
// Every provider goes through the same client: the request is fitted to the
// configured input window before it is sent (so a provider never rejects it
// for size), 408/429/5xx and transport failures are retried with a bounded
// backoff that honours retry-after and reports each retry as an
// agent.RetryEvent, usage comes from every response and cost from the price
// table in configuration. Record wraps any model and writes what it says as
// fixtures, so one real run becomes a regression test.
//
// The fitting uses a conservative estimate (Estimate) so the real count is not
// above it for ordinary text and code. Choosing what context goes into a prompt
// is the agent's work (agent.Step.Context, by priority), not this package's.
package llm
