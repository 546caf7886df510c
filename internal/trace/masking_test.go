package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/redact"
)

// TestTraceMasking: one canary per secret family, a configured secret in its
// plain, base64 and JSON-escaped forms, and private hosts and IPs, placed in
// the fields of events, are masked in the kept events, the JSONL artifact,
// the record copy, the summary table, the timeline and the spend line.
func TestTraceMasking(t *testing.T) {
	const configured = "correct-horse-battery-staple-42"
	canaries := []struct {
		family string
		text   string
		secret string // the part that must not appear anywhere
	}{
		{"github token", "token ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf12 used", "R4nd0mT0k3nV4lu3F0rT3st1ng"},
		{"github fine-grained", "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01", "oPqRsTuVwXyZ0123456789aBcD"},
		{"aws key", "aws AKIAZ7Q3KX9LMN2PQRST key", "Z7Q3KX9LMN2PQRST"},
		{"openai key", "OPENAI sk-proj-Qw3rTy7uI9oP1aS5dF8gH2jK4lZ6xC0vB", "Qw3rTy7uI9oP1aS5dF8gH2jK"},
		{"anthropic key", "sk-ant-api03-Zx9Cv8Bn7Mq6Wl5Ek4Rj3Th2Yg1Uf0-AbCdEfGh", "Zx9Cv8Bn7Mq6Wl5Ek4Rj3Th2"},
		{"slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"},
		{"slack webhook", "post https://hooks.slack.com/services/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", "Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1"},
		{"pem key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAq7BFUAXs9tGh2p3kmOb8\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAq7BFUAXs9tGh2p3kmOb8"},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJyb2FkbWFwLXRlc3QifQ.Vq3n8ZkQ2mXw5rT7yU9iO1pA4sD6fG8hJ0kL", "Vq3n8ZkQ2mXw5rT7yU9iO1pA4sD6fG8hJ0kL"},
		{"authorization header", "curl -H 'Authorization: token Hq7Wm2Xp9Lr4Ks8Nd3Vb'", "Hq7Wm2Xp9Lr4Ks8Nd3Vb"},
		{"bearer", "Bearer Tz5Yx4Wv3Ut2Sr1Qp0On9", "Tz5Yx4Wv3Ut2Sr1Qp0On9"},
		{"url password", "git clone https://bot:Pa55w0rdInUrl77@git.example.com/o/r.git", "Pa55w0rdInUrl77"},
		{"generic key=value", "client_secret=Mq3Zr8Lw2Xv7Kt1Ny6Bs", "Mq3Zr8Lw2Xv7Kt1Ny6Bs"},
		{"configured secret", "value " + configured + " here", configured},
		{"configured secret base64", "b64 " + base64.StdEncoding.EncodeToString([]byte(configured)), base64.StdEncoding.EncodeToString([]byte(configured))},
		{"configured secret json", `{"pw":` + jsonString(configured+"\n") + `}`, configured},
		{"private host", "dial tcp build-cache.corp.internal:443 failed", "build-cache.corp"},
		{"private ip", "connect 10.20.30.40:5432 refused", "10.20.30.40"},
		{"private ip 192", "proxy at 192.168.77.12", "192.168.77.12"},
	}
	masker := redact.New(redact.Config{Secrets: []string{configured}})

	var artifact bytes.Buffer
	clk := newClock()
	rec, err := NewRecorder(&artifact, masker, clk.now, 1)
	if err != nil {
		t.Fatal(err)
	}
	var spendLines []string
	for i, c := range canaries {
		clk.advance(time.Second)
		// Each canary goes through a different field, all fields in turn.
		var e Event
		switch i % 6 {
		case 0:
			e = Event{Type: TypeCheckRun, Group: 1, Step: "verify", Command: c.text, ExitCode: 1, Duration: time.Second}
		case 1:
			e = Event{Type: TypeModelCall, Group: 1, Model: c.text, TokensIn: 5, Outcome: "error", Error: c.text}
			spendLines = append(spendLines, rec.SpendLine(SpendEntry{Group: 1, Call: i, Model: c.text}))
		case 2:
			e = Event{Type: TypeToolCall, Group: 1, Tool: c.text, ArgsDigest: ArgsDigest(c.text), ResultClass: c.text}
		case 3:
			e = Event{Type: TypeRetry, Group: 1, Reason: c.text, Attempt: 1, Wait: 2 * time.Second, Error: c.text}
		case 4:
			e = Event{Type: TypePhase, Group: 1, Phase: PhaseGroupStarted, Step: c.text}
		case 5:
			e = Event{Type: TypePhase, Group: 1, Phase: PhaseAgent, Duration: time.Second, Outcome: c.text, Error: c.text}
		}
		if err := rec.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := json.Marshal(rec.Events())
	if err != nil {
		t.Fatal(err)
	}
	_, record := Bound(rec.Events(), RecordLimit)
	outputs := map[string]string{
		"kept events":   string(kept),
		"artifact":      artifact.String(),
		"record copy":   record,
		"summary table": SummaryTable(rec.Events()),
		"timeline":      Timeline(rec.Events()),
		"spend lines":   strings.Join(spendLines, "\n"),
	}
	// The record copy escapes what is not ASCII; compare its decoded text too.
	rc, err := ParseRecordCopy(record)
	if err != nil {
		t.Fatal(err)
	}
	decoded, _ := json.Marshal(rc.Events)
	outputs["record copy, decoded"] = string(decoded)
	for _, c := range canaries {
		for where, text := range outputs {
			if strings.Contains(text, c.secret) || strings.Contains(text, jsonInner(c.secret)) {
				t.Errorf("%s: %s holds %q", c.family, where, c.secret)
			}
		}
	}
	if !strings.Contains(artifact.String(), redact.DefaultPlaceholder) {
		t.Errorf("artifact shows no placeholder; was anything masked?\n%s", artifact.String())
	}
}

// Ordinary text passes the masker unchanged into the trace.
func TestTraceKeepsBenignText(t *testing.T) {
	masker := redact.New(redact.Config{})
	rec := newTestRecorder(t, masker, 1)
	benign := Event{Type: TypeCheckRun, Group: 2, Step: "verify",
		Command:  "go test ./internal/webhook -run TestBackoffSchedule -count=1",
		Error:    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 at /home/runner/work/repo/internal/webhook/backoff.go:42",
		Outcome:  "func (w *Worker) Delay(n int) time.Duration",
		ExitCode: 1}
	if err := rec.Add(benign); err != nil {
		t.Fatal(err)
	}
	got := rec.Events()[0]
	if got.Command != benign.Command || got.Error != benign.Error || got.Outcome != benign.Outcome {
		t.Errorf("benign text changed:\n got %+v\nwant %+v", got, benign)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonInner is s as it appears inside a JSON string.
func jsonInner(s string) string {
	q := jsonString(s)
	return q[1 : len(q)-1]
}
