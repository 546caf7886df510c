package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const replayFixture = `{
  "comment": "Written by hand for the dev replay-model test.",
  "source": "hand",
  "match": "Say hello",
  "turns": [{"response": {"content": "hello", "usage": {"tokens_in": 11, "tokens_out": 2}}}]
}`

func TestDevReplayModel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.json"), []byte(replayFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"dev", "replay-model", "--fixtures", dir, "--addr", "127.0.0.1:0"}, nil, nil, outW, &stderr)
		outW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() {
		t.Fatalf("no URL on stdout; stderr: %s", stderr.String())
	}
	url := lines.Text()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want the server URL", url)
	}

	res, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"Say hello, please"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	json.NewDecoder(res.Body).Decode(&got)
	res.Body.Close()
	if res.StatusCode != 200 || len(got.Choices) != 1 || got.Choices[0].Message.Content != "hello" || got.Usage.PromptTokens != 11 {
		t.Errorf("status %d, response %+v; want 200 with the recorded hello and usage", res.StatusCode, got)
	}

	res, err = http.Get(url + "/_replay/stats")
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Calls    int `json:"calls"`
		TokensIn int `json:"tokens_in"`
	}
	json.NewDecoder(res.Body).Decode(&stats)
	res.Body.Close()
	if stats.Calls != 1 || stats.TokensIn != 11 {
		t.Errorf("stats %+v, want 1 call and 11 tokens in", stats)
	}

	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit code %d, want %d; stderr: %s", code, ExitOK, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop when the context ended")
	}
	if lines.Scan() {
		t.Errorf("stdout has more than the URL: %q", lines.Text())
	}
}

func TestDevReplayModelUsage(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no fixtures flag", nil, "--fixtures DIR"},
		{"stray argument", []string{"--fixtures", empty, "extra"}, "--fixtures DIR"},
		{"no conversations", []string{"--fixtures", empty}, "no *.json conversation"},
		{"missing directory", []string{"--fixtures", filepath.Join(empty, "nope")}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append([]string{"dev", "replay-model"}, tt.args...), nil, nil, &stdout, &stderr)
			if code != ExitUsage || !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Errorf("code %d, stderr %q, stdout %q; want %d, a message containing %q and no stdout",
					code, stderr.String(), stdout.String(), ExitUsage, tt.want)
			}
		})
	}
}
