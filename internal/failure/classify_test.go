package failure

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const logsDir = "../../testdata/logs"

// expectation is one entry of testdata/logs/expected.json: the inputs to pass
// with the log and the verdict the log must give.
type expectation struct {
	Class       Class    `json:"class"`
	Reason      string   `json:"reason"`
	Source      Source   `json:"source"`
	Line        int      `json:"line"`
	Evidence    string   `json:"evidence"`
	Conclusion  string   `json:"conclusion"`
	ExitCode    *int     `json:"exit_code"`
	Annotations []string `json:"annotations"`
}

func readExpectations(t testing.TB) map[string]expectation {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logsDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]expectation
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatalf("parse expected.json: %v", err)
	}
	return exp
}

func TestClassifyLogs(t *testing.T) {
	exp := readExpectations(t)
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(exp) {
		t.Errorf("%d logs but %d expectations: every log needs one, and every expectation a log", len(files), len(exp))
	}
	covered := map[Class]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		want, ok := exp[name]
		if !ok {
			t.Errorf("%s has no entry in expected.json", name)
			continue
		}
		covered[want.Class] = true
		t.Run(name, func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			got := Classify(Input{Log: fh, Conclusion: want.Conclusion, ExitCode: want.ExitCode, Annotations: want.Annotations})
			if got.LogErr != nil {
				t.Fatalf("LogErr = %v", got.LogErr)
			}
			wantV := Verdict{Class: want.Class, Reason: want.Reason, Evidence: want.Evidence, Line: want.Line, Source: want.Source}
			if diff := cmp.Diff(wantV, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
	for _, r := range Table() {
		if !covered[r.Class] {
			t.Errorf("no log in testdata/logs gives class %s: every class needs a real-shaped log", r.Class)
		}
	}
}

// ts puts the Actions timestamp in front of each line, as a downloaded log has.
func ts(lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "2026-11-29T10:%02d:%02d.1234567Z %s\n", 15+i/60, i%60, l)
	}
	return b.String()
}

func intp(n int) *int { return &n }

func TestClassifyPrecedence(t *testing.T) {
	const (
		timeout  = "##[error]The job running on runner GitHub Actions 2 has exceeded the maximum execution time of 360 minutes."
		canceled = "##[error]The operation was canceled."
		shutdown = "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled."
		exit137  = "##[error]Process completed with exit code 137."
		exit1    = "##[error]Process completed with exit code 1."
		oomLine  = "[ 88.1] Out of memory: Killed process 77 (go) total-vm:9000kB, anon-rss:8000kB"
		bad502   = "##[error]GET https://api.github.com/repos/o/r/pulls/1: 502  []"
		rate     = "##[warning]GET https://api.github.com/repos/o/r/issues/1: 403 API rate limit exceeded for installation ID 1. [rate reset in 12m03s]"
		auth401  = "##[error]GET https://api.github.com/repos/o/r/issues/1: 401 Bad credentials []"
		goFail   = "--- FAIL: TestX (0.00s)"
	)
	tests := []struct {
		name string
		in   Input
		want Verdict
	}{
		{
			name: "typed line beats a later kill",
			in:   Input{Log: strings.NewReader(ts("##[error]roadmap: stopped: class=auth token lacks issues: write", canceled))},
			want: Verdict{Class: Auth, Evidence: "##[error]roadmap: stopped: class=auth token lacks issues: write", Line: 1, Source: SourceRunnerLine},
		},
		{
			name: "typed line beats oom evidence with exit 137",
			in:   Input{Log: strings.NewReader(ts("##[notice]roadmap: yielded: class=rate_limited reset at 11:00", oomLine, exit137))},
			want: Verdict{Class: RateLimited, Evidence: "##[notice]roadmap: yielded: class=rate_limited reset at 11:00", Line: 1, Source: SourceRunnerLine},
		},
		{
			name: "a typed line in plain tool output does not count",
			in:   Input{Log: strings.NewReader(ts("roadmap: stopped: class=auth", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "the last typed line wins",
			in:   Input{Log: strings.NewReader(ts("##[notice]roadmap: yielded: class=killed", "##[error]roadmap: stopped: class=budget_exhausted over"))},
			want: Verdict{Class: BudgetExhausted, Evidence: "##[error]roadmap: stopped: class=budget_exhausted over", Line: 2, Source: SourceRunnerLine},
		},
		{
			name: "oom needs 137 and evidence: both",
			in:   Input{Log: strings.NewReader(ts(bad502, exit137, oomLine, canceled))},
			want: Verdict{Class: OOM, Evidence: oomLine, Line: 3, Source: SourceLog},
		},
		{
			name: "exit 137 from the caller with evidence in the log",
			in:   Input{Log: strings.NewReader(ts("oom_kill 2")), ExitCode: intp(137)},
			want: Verdict{Class: OOM, Evidence: "oom_kill 2", Line: 1, Source: SourceLog},
		},
		{
			name: "oom_kill 0 is not evidence",
			in:   Input{Log: strings.NewReader(ts("oom 0", "oom_kill 0", exit137))},
			want: Verdict{Class: Killed, Reason: ReasonSIGKILL, Evidence: exit137, Line: 3, Source: SourceLog},
		},
		{
			name: "137 alone from the caller is killed, not oom",
			in:   Input{Log: strings.NewReader(ts("roadmap: agent step 1")), ExitCode: intp(137)},
			want: Verdict{Class: Killed, Reason: ReasonSIGKILL, Source: SourceExitCode},
		},
		{
			name: "the caller's exit code overrides the log's 137: without it the OOM line no longer outranks the cancel",
			in:   Input{Log: strings.NewReader(ts(oomLine, exit137, canceled)), ExitCode: intp(1)},
			want: Verdict{Class: Killed, Reason: ReasonCancelled, Evidence: canceled, Line: 3, Source: SourceLog},
		},
		{
			name: "an out-of-memory message without 137 is oom: the process said so itself",
			in:   Input{Log: strings.NewReader(ts(bad502, "fatal error: runtime: out of memory", exit1))},
			want: Verdict{Class: OOM, Evidence: "fatal error: runtime: out of memory", Line: 2, Source: SourceLog},
		},
		{
			name: "exit 143 is killed by SIGTERM",
			in:   Input{Log: strings.NewReader(ts("##[error]Process completed with exit code 143."))},
			want: Verdict{Class: Killed, Reason: ReasonSIGTERM, Evidence: "##[error]Process completed with exit code 143.", Line: 1, Source: SourceLog},
		},
		{
			name: "timeout beats the cancel that follows it",
			in:   Input{Log: strings.NewReader(ts(timeout, canceled)), Conclusion: "cancelled"},
			want: Verdict{Class: Killed, Reason: ReasonTimeout, Evidence: timeout, Line: 1, Source: SourceLog},
		},
		{
			name: "shutdown beats the cancel and the 137 that follow it",
			in:   Input{Log: strings.NewReader(ts(shutdown, exit137, canceled))},
			want: Verdict{Class: Killed, Reason: ReasonRunnerLost, Evidence: shutdown, Line: 1, Source: SourceLog},
		},
		{
			name: "a kill beats the retried 502 before it",
			in:   Input{Log: strings.NewReader(ts(bad502, canceled))},
			want: Verdict{Class: Killed, Reason: ReasonCancelled, Evidence: canceled, Line: 2, Source: SourceLog},
		},
		{
			name: "a kill beats a waited-out rate limit before it",
			in:   Input{Log: strings.NewReader(ts(rate, timeout))},
			want: Verdict{Class: Killed, Reason: ReasonTimeout, Evidence: timeout, Line: 2, Source: SourceLog},
		},
		{
			name: "the runner's cancel text in plain output does not count",
			in:   Input{Log: strings.NewReader(ts("dial tcp: lookup proxy.internal: The operation was canceled.", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "conclusion timed_out without a message",
			in:   Input{Log: strings.NewReader(ts(bad502)), Conclusion: "timed_out"},
			want: Verdict{Class: Killed, Reason: ReasonTimeout, Source: SourceConclusion},
		},
		{
			name: "conclusion cancelled without a message",
			in:   Input{Conclusion: "cancelled"},
			want: Verdict{Class: Killed, Reason: ReasonCancelled, Source: SourceConclusion},
		},
		{
			name: "a shutdown message beats the cancelled conclusion",
			in:   Input{Log: strings.NewReader(ts(shutdown)), Conclusion: "cancelled"},
			want: Verdict{Class: Killed, Reason: ReasonRunnerLost, Evidence: shutdown, Line: 1, Source: SourceLog},
		},
		{
			name: "the last error line wins: a handled rate limit, then auth",
			in:   Input{Log: strings.NewReader(ts(rate, auth401, exit1))},
			want: Verdict{Class: Auth, Evidence: auth401, Line: 2, Source: SourceLog},
		},
		{
			name: "the last error line wins: auth, then a 502",
			in:   Input{Log: strings.NewReader(ts(auth401, bad502))},
			want: Verdict{Class: Transient, Evidence: bad502, Line: 2, Source: SourceLog},
		},
		{
			name: "a 403 with rate-limit markers is rate_limited, not auth",
			in:   Input{Log: strings.NewReader(ts(rate))},
			want: Verdict{Class: RateLimited, Reason: ReasonPrimary, Evidence: rate, Line: 1, Source: SourceLog},
		},
		{
			name: "x-ratelimit-remaining: 0 in a header dump",
			in:   Input{Log: strings.NewReader(ts("< X-RateLimit-Remaining: 0", "< X-RateLimit-Remaining: 4999"))},
			want: Verdict{Class: RateLimited, Reason: ReasonPrimary, Evidence: "< X-RateLimit-Remaining: 0", Line: 1, Source: SourceLog},
		},
		{
			name: "git RPC failed with HTTP 403 is auth, not transient",
			in:   Input{Log: strings.NewReader(ts("error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403"))},
			want: Verdict{Class: Auth, Evidence: "error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403", Line: 1, Source: SourceLog},
		},
		{
			name: "a timeout before the request left is transient",
			in:   Input{Log: strings.NewReader(ts(`Get "https://api.github.com/x": dial tcp 140.82.112.6:443: i/o timeout`))},
			want: Verdict{Class: Transient, Evidence: `Get "https://api.github.com/x": dial tcp 140.82.112.6:443: i/o timeout`, Line: 1, Source: SourceLog},
		},
		{
			name: "a context deadline before the connection is transient",
			in:   Input{Log: strings.NewReader(ts(`Post "https://api.github.com/x": dial tcp 140.82.112.6:443: connect: context deadline exceeded`))},
			want: Verdict{Class: Transient, Evidence: `Post "https://api.github.com/x": dial tcp 140.82.112.6:443: connect: context deadline exceeded`, Line: 1, Source: SourceLog},
		},
		{
			name: "a compile error's unexpected EOF is not transient: the code fails its checks",
			in:   Input{Log: strings.NewReader(ts("./backoff.go:31:1: syntax error: unexpected EOF, expected }", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "./backoff.go:31:1: syntax error: unexpected EOF, expected }", Line: 1, Source: SourceLog},
		},
		{
			name: "go-github 409 is conflict",
			in:   Input{Log: strings.NewReader(ts("PATCH https://api.github.com/repos/o/r/git/refs/heads/b: 409 Conflict []"))},
			want: Verdict{Class: Conflict, Evidence: "PATCH https://api.github.com/repos/o/r/git/refs/heads/b: 409 Conflict []", Line: 1, Source: SourceLog},
		},
		{
			name: "a status number outside go-github's shape is no evidence",
			in:   Input{Log: strings.NewReader(ts("see https://example.com/docs: 401 things", "GET https://example.com/x: 4"))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "a status in a go test's own output is a failing test, not the network",
			in:   Input{Log: strings.NewReader(ts("    handler_test.go:12: got: 502 Bad Gateway want: 200", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "handler_test.go:12: got: 502 Bad Gateway want: 200", Line: 1, Source: SourceLog},
		},
		{
			name: "an error line beats go test output",
			in:   Input{Log: strings.NewReader(ts(goFail, "FAIL\tgithub.com/o/r/x\t0.1s", "fatal: the remote end hung up unexpectedly"))},
			want: Verdict{Class: Transient, Evidence: "fatal: the remote end hung up unexpectedly", Line: 3, Source: SourceLog},
		},
		{
			name: "go test output decides when nothing else does, naming the test",
			in:   Input{Log: strings.NewReader(ts("    --- FAIL: TestX/sub (0.00s)", "FAIL", "FAIL\tgithub.com/o/r/x\t0.1s", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "--- FAIL: TestX/sub (0.00s)", Line: 1, Source: SourceLog},
		},
		{
			name: "an annotation decides when the log just stops",
			in: Input{Log: strings.NewReader(ts("roadmap: agent step 2")), Conclusion: "failure",
				Annotations: []string{"The hosted runner lost communication with the server. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error."}},
			want: Verdict{Class: Killed, Reason: ReasonRunnerLost, Source: SourceAnnotation,
				Evidence: "The hosted runner lost communication with the server. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error."},
		},
		{
			name: "no log at all",
			in:   Input{Conclusion: "failure"},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "an in-process error counts as the last line",
			in:   Input{Log: strings.NewReader(ts(bad502)), Err: errors.New("PATCH https://api.github.com/repos/o/r/issues/1: 401 Bad credentials []")},
			want: Verdict{Class: Auth, Evidence: "PATCH https://api.github.com/repos/o/r/issues/1: 401 Bad credentials []", Source: SourceError},
		},
		{
			name: "ANSI colours and CRLF do not hide a marker",
			in:   Input{Log: strings.NewReader("2026-11-29T10:15:02.1234567Z \x1b[31mfatal: early EOF\x1b[0m\r\n")},
			want: Verdict{Class: Transient, Evidence: "fatal: early EOF", Line: 1, Source: SourceLog},
		},
		{
			name: "a log without timestamps",
			in:   Input{Log: strings.NewReader("CONFLICT (content): Merge conflict in a.go\n")},
			want: Verdict{Class: Conflict, Evidence: "CONFLICT (content): Merge conflict in a.go", Line: 1, Source: SourceLog},
		},
		{
			name: "the web view's 'Error: ' form of a runner line counts",
			in:   Input{Log: strings.NewReader("Error: The operation was canceled.\n")},
			want: Verdict{Class: Killed, Reason: ReasonCancelled, Evidence: "Error: The operation was canceled.", Line: 1, Source: SourceLog},
		},
		{
			name: "'Error: ' in front of a tool's text is not the runner's",
			in:   Input{Log: strings.NewReader("Error: the operation was canceled by the test\nError: The job finished; the operation was canceled.\n")},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "the shell's Killed line is a kill, not an OOM",
			in:   Input{Log: strings.NewReader(ts("go vet ./...", "Killed", "make: *** [Makefile:12: vet] Error 137", exit1))},
			want: Verdict{Class: Killed, Reason: ReasonSIGKILL, Evidence: "make: *** [Makefile:12: vet] Error 137", Line: 3, Source: SourceLog},
		},
		{
			name: "a tool's 137 with an out-of-memory message is oom",
			in:   Input{Log: strings.NewReader(ts("Killed process 4 (node) total-vm:100kB", "error Command failed with exit code 137.", exit1))},
			want: Verdict{Class: OOM, Evidence: "Killed process 4 (node) total-vm:100kB", Line: 1, Source: SourceLog},
		},
		{
			name: "137 inside a longer number is not a kill",
			in:   Input{Log: strings.NewReader(ts("exit code 1370", "error 21379", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "a tool's status code 503 is transient, its 403 is auth",
			in:   Input{Log: strings.NewReader(ts("Could not GET 'https://repo.example/x.pom'. Received status code 503 from server: Service Unavailable", "Could not HEAD 'https://repo.example/y.pom'. Received status code 403 from server: Forbidden"))},
			want: Verdict{Class: Auth, Evidence: "Could not HEAD 'https://repo.example/y.pom'. Received status code 403 from server: Forbidden", Line: 2, Source: SourceLog},
		},
		{
			name: "a full disk is killed with reason disk_full: a fresh runner, not a retry on this one",
			in:   Input{Log: strings.NewReader(ts("write /tmp/x: no space left on device", exit1))},
			want: Verdict{Class: Killed, Reason: ReasonDiskFull, Evidence: "write /tmp/x: no space left on device", Line: 1, Source: SourceLog},
		},
		{
			name: "a network error before a failing test summary is the tests' own: the runner's report decides",
			in:   Input{Log: strings.NewReader(ts("npm ERR! code ECONNRESET", "Tests:       1 failed, 9 passed, 10 total"))},
			want: Verdict{Class: ChecksFailed, Evidence: "Tests:       1 failed, 9 passed, 10 total", Line: 2, Source: SourceLog},
		},
		{
			name: "a network error after the test report is the job's: it still wins",
			in:   Input{Log: strings.NewReader(ts("Tests:       1 failed, 9 passed, 10 total", "npm ERR! code ECONNRESET"))},
			want: Verdict{Class: Transient, Evidence: "npm ERR! code ECONNRESET", Line: 2, Source: SourceLog},
		},
		{
			name: "a 5xx in Octokit's error dump is transient",
			in:   Input{Log: strings.NewReader(ts("RequestError [HttpError]: Server Error", "  status: 503,", "    data: { message: 'Server Error' }", exit1))},
			want: Verdict{Class: Transient, Evidence: "status: 503,", Line: 2, Source: SourceLog},
		},
		{
			name: "a 5xx in requests' error is transient",
			in:   Input{Log: strings.NewReader(ts("requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://api.github.com/repos/o/r", exit1))},
			want: Verdict{Class: Transient, Evidence: "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://api.github.com/repos/o/r", Line: 1, Source: SourceLog},
		},
		{
			name: "a 4xx key in a dump decides nothing: the rate-limit text before it stands",
			in:   Input{Log: strings.NewReader(ts("HttpError: API rate limit exceeded for installation ID 1.", "  status: 403,", exit1))},
			want: Verdict{Class: RateLimited, Reason: ReasonPrimary, Evidence: "HttpError: API rate limit exceeded for installation ID 1.", Line: 1, Source: SourceLog},
		},
		{
			name: "a 5xx key with more digits is no status",
			in:   Input{Log: strings.NewReader(ts("  status: 5030,", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "pytest's FAILED line decides whatever network error it quotes",
			in:   Input{Log: strings.NewReader(ts("E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8080): Connection refused", "FAILED tests/test_api.py::test_get - requests.exceptions.ConnectionError: Connection refused", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "FAILED tests/test_api.py::test_get - requests.exceptions.ConnectionError: Connection refused", Line: 2, Source: SourceLog},
		},
		{
			name: "jest's failed test mark decides over a socket hang up it printed",
			in:   Input{Log: strings.NewReader(ts("Error: socket hang up", "    ✕ fetches the user (31 ms)", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "✕ fetches the user (31 ms)", Line: 2, Source: SourceLog},
		},
		{
			name: "cargo's test result decides over a connection reset its test printed",
			in:   Input{Log: strings.NewReader(ts("thread 'client::get' panicked at 'called `Result::unwrap()` on an `Err` value: connection reset by peer'", "test result: FAILED. 3 passed; 1 failed; 0 ignored", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "test result: FAILED. 3 passed; 1 failed; 0 ignored", Line: 2, Source: SourceLog},
		},
		{
			name: "go's setup failed is no test report: the download's network error stands",
			in:   Input{Log: strings.NewReader(ts("go: downloading example.com/m v1.0.0: dial tcp 10.0.0.1:443: i/o timeout", "FAIL	example.com/p [setup failed]", exit1))},
			want: Verdict{Class: Transient, Evidence: "go: downloading example.com/m v1.0.0: dial tcp 10.0.0.1:443: i/o timeout", Line: 1, Source: SourceLog},
		},
		{
			name: "golangci-lint's finding without a column is a failing check",
			in:   Input{Log: strings.NewReader(ts("main.go:12: File is not `goimports`-ed (goimports)", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "main.go:12: File is not `goimports`-ed (goimports)", Line: 1, Source: SourceLog},
		},
		{
			name: "a program's own file:line log line is no diagnostic",
			in:   Input{Log: strings.NewReader(ts("main.go:12: starting server", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "a diagnostic behind a Windows drive is a failing check",
			in:   Input{Log: strings.NewReader(ts("D:\\a\\r\\r\\main.go:12:3: ineffectual assignment to err (ineffassign)", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "D:\\a\\r\\r\\main.go:12:3: ineffectual assignment to err (ineffassign)", Line: 1, Source: SourceLog},
		},
		{
			name: "eslint's one problem is a failing check",
			in:   Input{Log: strings.NewReader(ts("✖ 1 problem (1 error, 0 warnings)", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "✖ 1 problem (1 error, 0 warnings)", Line: 1, Source: SourceLog},
		},
		{
			name: "eslint over its warning limit is a failing check",
			in:   Input{Log: strings.NewReader(ts("ESLint found too many warnings (maximum: 0).", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "ESLint found too many warnings (maximum: 0).", Line: 1, Source: SourceLog},
		},
		{
			name: "ruff format --check is a failing check",
			in:   Input{Log: strings.NewReader(ts("Would reformat: src/app.py", "1 file would be reformatted", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "1 file would be reformatted", Line: 2, Source: SourceLog},
		},
		{
			name: "flake8's finding is a failing check",
			in:   Input{Log: strings.NewReader(ts("./app/views.py:3:1: F401 'os' imported but unused", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "./app/views.py:3:1: F401 'os' imported but unused", Line: 1, Source: SourceLog},
		},
		{
			name: "the race detector's report is a failing check",
			in:   Input{Log: strings.NewReader(ts("==================", "WARNING: DATA RACE", "Write at 0x00c000012345 by goroutine 7:", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "WARNING: DATA RACE", Line: 2, Source: SourceLog},
		},
		{
			name: "pytest's no tests ran is a failing check",
			in:   Input{Log: strings.NewReader(ts("============================ no tests ran in 0.01s =============================", "##[error]Process completed with exit code 5."))},
			want: Verdict{Class: ChecksFailed, Evidence: "============================ no tests ran in 0.01s =============================", Line: 1, Source: SourceLog},
		},
		{
			name: "jest's no tests found is a failing check",
			in:   Input{Log: strings.NewReader(ts("No tests found, exiting with code 1", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "No tests found, exiting with code 1", Line: 1, Source: SourceLog},
		},
		{
			name: "go's no test files where no package ran a test is a failing check",
			in:   Input{Log: strings.NewReader(ts("?   	example.com/p	[no test files]", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "?   	example.com/p	[no test files]", Line: 1, Source: SourceLog},
		},
		{
			name: "go's no test files beside a package that ran is nothing",
			in:   Input{Log: strings.NewReader(ts("?   	example.com/p	[no test files]", "ok  	example.com/q	0.01s", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "ENOSPC alone is a full disk",
			in:   Input{Log: strings.NewReader(ts("npm ERR! code ENOSPC", exit1))},
			want: Verdict{Class: Killed, Reason: ReasonDiskFull, Evidence: "npm ERR! code ENOSPC", Line: 1, Source: SourceLog},
		},
		{
			name: "a full disk explains the network error after it",
			in:   Input{Log: strings.NewReader(ts("System.IO.IOException: No space left on device : '/home/runner/_diag/Worker.log'", "curl: (56) Recv failure: Connection reset by peer", exit1))},
			want: Verdict{Class: Killed, Reason: ReasonDiskFull, Evidence: "System.IO.IOException: No space left on device : '/home/runner/_diag/Worker.log'", Line: 1, Source: SourceLog},
		},
		{
			name: "an in-process full disk is killed (disk_full), not cancelled",
			in:   Input{Err: errors.New("write .git/objects/ab/cd: no space left on device")},
			want: Verdict{Class: Killed, Reason: ReasonDiskFull, Evidence: "write .git/objects/ab/cd: no space left on device", Source: SourceError},
		},
		{
			name: "a lint diagnostic is a failing check",
			in:   Input{Log: strings.NewReader(ts("pkg/a.go:3:9: Error return value of `f.Close` is not checked (errcheck)", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "pkg/a.go:3:9: Error return value of `f.Close` is not checked (errcheck)", Line: 1, Source: SourceLog},
		},
		{
			name: "a stack frame is not a diagnostic",
			in:   Input{Log: strings.NewReader(ts("\t/usr/local/go/src/runtime/panic.go:1047 +0x5d", "    at f (/w/index.js:10:5)", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "the JVM's -XX:+HeapDumpOnOutOfMemoryError option is no OOM evidence",
			in:   Input{Log: strings.NewReader(ts("MAVEN_OPTS: -Xmx2g -XX:+HeapDumpOnOutOfMemoryError", "Killed", exit1))},
			want: Verdict{Class: Killed, Reason: ReasonSIGKILL, Evidence: "Killed", Line: 2, Source: SourceLog},
		},
		{
			name: "Rust's failed allocation is oom, and outranks the compile error after it",
			in:   Input{Log: strings.NewReader(ts("memory allocation of 4294967304 bytes failed", "error: could not compile `hex`.", exit1))},
			want: Verdict{Class: OOM, Evidence: "memory allocation of 4294967304 bytes failed", Line: 1, Source: SourceLog},
		},
		{
			name: "a GET that timed out awaiting headers in a job's log is transient: a read changed nothing",
			in:   Input{Log: strings.NewReader(ts(`Error response from daemon: Head "https://r.example/v2/x/manifests/1": Get "https://r.example/token": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`))},
			want: Verdict{Class: Transient, Evidence: `Error response from daemon: Head "https://r.example/v2/x/manifests/1": Get "https://r.example/token": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`, Line: 1, Source: SourceLog},
		},
		{
			name: "a PUT that timed out awaiting headers is indeterminate: the upload may have landed",
			in:   Input{Log: strings.NewReader(ts(`failed to do request: Get "https://r.example/token": ok; Put "https://r.example/v2/x/blobs/uploads/1": net/http: timeout awaiting response headers`))},
			want: Verdict{Class: Indeterminate, Evidence: `failed to do request: Get "https://r.example/token": ok; Put "https://r.example/v2/x/blobs/uploads/1": net/http: timeout awaiting response headers`, Line: 1, Source: SourceLog},
		},
		{
			name: "Travis' 'exited with 137' is a kill, not an OOM",
			in:   Input{Log: strings.NewReader(`The command "make test" exited with 137.` + "\n")},
			want: Verdict{Class: Killed, Reason: ReasonSIGKILL, Evidence: `The command "make test" exited with 137.`, Line: 1, Source: SourceLog},
		},
		{
			name: "test runners' own failure lines are failing checks: Gradle, pytest -v, vstest",
			in:   Input{Log: strings.NewReader(ts("com.example.FooTest > parses FAILED", "tests/test_a.py::test_b FAILED [ 50%]", "Test Run Failed.", exit1))},
			want: Verdict{Class: ChecksFailed, Evidence: "Test Run Failed.", Line: 3, Source: SourceLog},
		},
		{
			name: "a word FAILED without a test's shape is no evidence",
			in:   Input{Log: strings.NewReader(ts("BUILD FAILED", "deploy step FAILED [ 50%]", exit1))},
			want: Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone},
		},
		{
			name: "Java's 'Connection reset' and git's unmerged files",
			in:   Input{Log: strings.NewReader(ts("Could not transfer artifact a:b:pom:1 from/to central: Connection reset", "error: Pulling is not possible because you have unmerged files."))},
			want: Verdict{Class: Conflict, Evidence: "error: Pulling is not possible because you have unmerged files.", Line: 2, Source: SourceLog},
		},
		{
			name: "Octokit's request log line carries the status: 502 is transient",
			in:   Input{Log: strings.NewReader(ts("GET /repos/o/r/pulls/1 - 502 with id UNKNOWN in 7840ms", "RequestError [HttpError]: <!DOCTYPE html>", exit1))},
			want: Verdict{Class: Transient, Evidence: "GET /repos/o/r/pulls/1 - 502 with id UNKNOWN in 7840ms", Line: 1, Source: SourceLog},
		},
		{
			name: "the web view's 'Error: message (linter)' is a lint finding; other parentheses are not",
			in:   Input{Log: strings.NewReader(ts("Error: Cannot open the cache (see the docs)", "Error: ineffectual assignment to err (ineffassign)", "Error: issues found"))},
			want: Verdict{Class: ChecksFailed, Evidence: "Error: ineffectual assignment to err (ineffassign)", Line: 2, Source: SourceLog},
		},
		{
			name: "the runner's own action download failing with 503 is transient",
			in:   Input{Log: strings.NewReader("Failed to download action 'https://api.github.com/repos/a/b/tarball/1'. Error: Response status code does not indicate success: 503 (Service Unavailable).\n")},
			want: Verdict{Class: Transient, Evidence: "Failed to download action 'https://api.github.com/repos/a/b/tarball/1'. Error: Response status code does not indicate success: 503 (Service Unavailable).", Line: 1, Source: SourceLog},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.in)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Verdict{}, "LogErr")); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTypedLineRoundTrip(t *testing.T) {
	for _, r := range Table() {
		t.Run(string(r.Class), func(t *testing.T) {
			msg := TypedLine(r.Result, r.Class, "group 2:\nthe reason\tin detail")
			if strings.ContainsAny(msg, "\n\t") {
				t.Fatalf("TypedLine = %q: a workflow command is one line", msg)
			}
			log := ts("roadmap: agent step 1", "##[error]"+msg, "##[error]The operation was canceled.")
			got := Classify(Input{Log: strings.NewReader(log), Conclusion: "cancelled"})
			if got.Class != r.Class || got.Source != SourceRunnerLine || got.Line != 2 {
				t.Errorf("Classify of the typed line = %+v, want class %s from line 2", got, r.Class)
			}
		})
	}
	msg := ChecksFailedLine("go test ./x\n", 1)
	if want := "roadmap: checks failed: go test ./x exited 1"; msg != want {
		t.Errorf("ChecksFailedLine = %q, want %q", msg, want)
	}
	got := Classify(Input{Log: strings.NewReader(ts("##[error]" + msg))})
	if got.Class != ChecksFailed {
		t.Errorf("Classify of ChecksFailedLine = %+v, want checks_failed", got)
	}
}

func TestClassifyLongLine(t *testing.T) {
	// A line twice MaxLine long: its tail (with a marker) is skipped, the next
	// line is read and numbered as line 2.
	long := "x" + strings.Repeat("a", 2*MaxLine) + " fatal: early EOF\n"
	log := long + "##[error]The operation was canceled.\n"
	got := Classify(Input{Log: strings.NewReader(log)})
	want := Verdict{Class: Killed, Reason: ReasonCancelled, Evidence: "##[error]The operation was canceled.", Line: 2, Source: SourceLog}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Classify (-want +got):\n%s", diff)
	}

	// Evidence is cut to MaxEvidence bytes, on a rune boundary.
	line := "fatal: early EOF " + strings.Repeat("é", MaxEvidence)
	got = Classify(Input{Log: strings.NewReader(line)})
	if len(got.Evidence) > MaxEvidence || !strings.HasPrefix(got.Evidence, "fatal: early EOF ") {
		t.Errorf("evidence has %d bytes, want at most %d and the line's start", len(got.Evidence), MaxEvidence)
	}
	if !json.Valid([]byte(fmt.Sprintf("%q", got.Evidence))) || strings.ContainsRune(got.Evidence, '\uFFFD') {
		t.Errorf("evidence is not valid UTF-8 after the cut")
	}
}

type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("stream reset")
	}
	return n, err
}

func TestClassifyLogErr(t *testing.T) {
	log := ts("roadmap: agent step 1", "fatal: early EOF")
	got := Classify(Input{Log: &failingReader{strings.NewReader(log)}})
	if got.LogErr == nil || !strings.Contains(got.LogErr.Error(), "stream reset") {
		t.Errorf("LogErr = %v, want the read error", got.LogErr)
	}
	if got.Class != Transient || got.Line != 2 {
		t.Errorf("verdict = %+v, want transient from line 2 (what was read still counts)", got)
	}
}

// genLog streams a job log of size bytes without holding it: ordinary runner
// output with a retried 502 and a failing test every few hundred lines, and a
// kill at the end. It allocates nothing per line itself.
type genLog struct {
	size, sent int
	i          int
	line       []byte // the current line
	off        int    // how much of line was read
	tail       bool
}

func newGenLog(size int) *genLog { return &genLog{size: size, line: make([]byte, 0, 256)} }

func (g *genLog) Read(p []byte) (int, error) {
	if g.off == len(g.line) {
		g.off = 0
		g.line = g.line[:0]
		switch {
		case g.sent < g.size:
			g.i++
			line := "roadmap: spend call=NNNN model=openai/gpt-4o tokens_in=3120 tokens_out=411 usd=0"
			switch g.i % 500 {
			case 0:
				line = "##[warning]roadmap: retry 1/4 in 2s: GET https://api.github.com/repos/acme/widgets/pulls/12: 502  []"
			case 250:
				line = "--- FAIL: TestBackoffSchedule (0.00s)"
			}
			g.line = append(g.line, "2026-11-29T10:15:02.1234567Z "...)
			g.line = append(g.line, line...)
			g.line = append(g.line, '\n')
		case !g.tail:
			g.tail = true
			g.line = append(g.line, "2026-11-29T11:15:02.1234567Z ##[error]The operation was canceled.\n"...)
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.line[g.off:])
	g.off += n
	g.sent += n
	return n, nil
}

// TestClassifyMemoryBounded checks that what Classify allocates does not grow
// with the log: 32 MB of log cost no more than 4 MB.
func TestClassifyMemoryBounded(t *testing.T) {
	alloc := func(size int) (uint64, Verdict) {
		g := newGenLog(size)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v := Classify(Input{Log: g})
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, v
	}
	small, _ := alloc(1 << 20)
	big, v := alloc(32 << 20)
	if v.Class != Killed || v.Reason != ReasonCancelled {
		t.Fatalf("verdict = %+v, want killed (cancelled) from the last line", v)
	}
	t.Logf("allocated %d bytes for 1 MB of log, %d bytes for 32 MB", small, big)
	if big > 1<<20 {
		t.Errorf("Classify allocated %d bytes for a 32 MB log, want under 1 MB (bounded)", big)
	}
	if big > 2*small+64<<10 {
		t.Errorf("allocation grows with the log: %d bytes for 1 MB, %d for 32 MB", small, big)
	}
}

func TestStripTimestamp(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2026-11-29T10:15:02.1234567Z hello\n", "hello"},
		{"2026-11-29T10:15:02Z hello", "hello"},
		{"2026-11-29T10:15:02.1234567Z", ""},
		{"2026-11-29 10:15:02 hello", "2026-11-29 10:15:02 hello"},
		{"2026-11-29T10:15:02.12X hello", "2026-11-29T10:15:02.12X hello"},
		{"short\r\n", "short"},
		{"[2020-06-30T12:55:26.119Z] Test Run Failed.", "Test Run Failed."},
		{"[2020-06-30T12:55:26Z]", ""},
		{"[2020-06-30 12:55:26] kept", "[2020-06-30 12:55:26] kept"},
		{"2026-11-29T10:15:02Z", ""},
	}
	for _, tt := range tests {
		if got := string(stripTimestamp([]byte(tt.in))); got != tt.want {
			t.Errorf("stripTimestamp(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkersWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range markers {
		if m.text != strings.ToLower(m.text) || len(m.text) < 2 {
			t.Errorf("marker %q must be lower case and at least two bytes", m.text)
		}
		if seen[m.text] {
			t.Errorf("marker %q is listed twice", m.text)
		}
		seen[m.text] = true
		if m.source == "" || m.sig == 0 {
			t.Errorf("marker %q needs a signal and a source", m.text)
		}
		// Each marker, on an annotated line by itself, must be seen.
		if got := newMatcher(markers).match([]byte(m.text)); got&m.sig != m.sig {
			t.Errorf("marker %q is not matched on its own", m.text)
		}
	}
}
