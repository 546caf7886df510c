package failure

import "bytes"

// The fixed shapes of tool output that are not single markers: how a tool
// says a child was killed, an HTTP status in a tool's words, and how test
// runners, linters and compilers say the code under check failed. Each reads
// one line in time linear in its length.

// uiRunnerStarts are the openings of the runner's own messages. The web view
// of a job log renders the runner's "##[error]" as "Error: ", so a log pasted
// from the browser has "Error: The operation was canceled." where the
// download has "##[error]The operation was canceled.".
var uiRunnerStarts = [][]byte{
	[]byte("Process completed with exit code "),
	[]byte("The operation was canceled"),
	[]byte("The job running on runner "),
	[]byte("The job has exceeded the maximum execution time"),
	[]byte("The action '"),
	[]byte("The runner has received a shutdown signal"),
	[]byte("The self-hosted runner: "),
	[]byte("The hosted runner: "),
}

// uiRunnerLine returns the runner's message when content is one rendered by
// the web view ("Error: " and then the start of a runner message). Only those
// starts count: "Error: " in front of anything else is a tool's own text.
func uiRunnerLine(content []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(content, []byte("Error: "))
	if !ok {
		return nil, false
	}
	for _, p := range uiRunnerStarts {
		if bytes.HasPrefix(rest, p) {
			return rest, true
		}
	}
	return nil, false
}

// toolSIGKILL is true when a tool says its child died of SIGKILL: the shell's
// "Killed" line, or exit code 137 in a tool's words ("exit code 137",
// "exit status 137", "returned a non-zero code: 137", make's "Error 137",
// Travis' "exited with 137").
func toolSIGKILL(lower []byte) bool {
	t := bytes.TrimSpace(lower)
	if bytes.Equal(t, []byte("killed")) || bytes.Equal(t, []byte("killed: 9")) {
		return true
	}
	for off := 0; ; {
		i := bytes.Index(lower[off:], []byte("137"))
		if i < 0 {
			return false
		}
		i += off
		off = i + 3
		if i > 0 && isDigit(lower[i-1]) || off < len(lower) && isDigit(lower[off]) {
			continue
		}
		before := bytes.TrimRight(lower[:i], " :=")
		for _, w := range []string{"exit code", "exit status", "with code", "non-zero code", "error", "exited with"} {
			if bytes.HasSuffix(before, []byte(w)) {
				return true
			}
		}
	}
}

// toolStatus finds an HTTP status in a tool's words: "Received status code
// 502 from server" (Gradle), "failed with status code 503" (npm), "HTTP error
// 503" (pip), "code E503" (npm), "Response status code does not indicate
// success: 503" (.NET's HttpClient: the runner downloading an action). It
// returns 0 when there is none.
func toolStatus(lower []byte) int {
	for _, p := range []string{"status code", "http error", "server error", "code e", "does not indicate success"} {
		for off := 0; ; {
			i := bytes.Index(lower[off:], []byte(p))
			if i < 0 {
				break
			}
			i += off
			off = i + len(p)
			rest := bytes.TrimLeft(lower[off:], " :")
			if p == "code e" {
				rest = lower[off:]
			}
			if len(rest) < 3 || !isDigit(rest[0]) || !isDigit(rest[1]) || !isDigit(rest[2]) {
				continue
			}
			if len(rest) > 3 && isDigit(rest[3]) {
				continue
			}
			return int(rest[0]-'0')*100 + int(rest[1]-'0')*10 + int(rest[2]-'0')
		}
	}
	return 0
}

// octokitStatus finds the status in Octokit's request log line, "GET
// /repos/o/r/pulls/1 - 502 with id UNKNOWN in 7840ms" (actions/github-script
// and other JavaScript actions print it), 0 when the line has another shape.
func octokitStatus(lower []byte) int {
	for _, m := range []string{"get /", "post /", "patch /", "put /", "delete /", "head /"} {
		if !bytes.HasPrefix(lower, []byte(m)) {
			continue
		}
		i := bytes.Index(lower, []byte(" - "))
		if i < 0 {
			return 0
		}
		d := lower[i+3:]
		if len(d) < 4 || !isDigit(d[0]) || !isDigit(d[1]) || !isDigit(d[2]) || d[3] != ' ' {
			return 0
		}
		if !bytes.HasPrefix(d[4:], []byte("with id ")) && !bytes.HasPrefix(d[4:], []byte("in ")) {
			return 0
		}
		return int(d[0]-'0')*100 + int(d[1]-'0')*10 + int(d[2]-'0')
	}
	return 0
}

// allocFailed is true for Rust's allocation failure, "memory allocation of N
// bytes failed": the process found no memory, which is OOM evidence.
func allocFailed(lower []byte) bool {
	const p = "memory allocation of "
	for off := 0; ; {
		i := bytes.Index(lower[off:], []byte(p))
		if i < 0 {
			return false
		}
		off += i + len(p)
		n, ok := digitsThen(lower[off:], ' ')
		if ok && bytes.HasPrefix(lower[off+n:], []byte(" bytes failed")) {
			return true
		}
	}
}

// readRequest is true when the request a Go error names last is a GET or a
// HEAD: Go's url.Error reads `Get "https://…": …`, and a wrapped error names
// the outer request first, so the last one is the request that failed.
func readRequest(lower []byte) bool {
	last, read := -1, false
	for _, m := range []struct {
		text string
		read bool
	}{
		{`get "http`, true}, {`head "http`, true},
		{`post "http`, false}, {`put "http`, false}, {`patch "http`, false}, {`delete "http`, false},
	} {
		i := bytes.LastIndex(lower, []byte(m.text))
		if i > last && (i == 0 || !isLetter(lower[i-1])) {
			last, read = i, m.read
		}
	}
	return read
}

// goTestLogLine is true for go test's t.Log/t.Error output ("    foo_test.go:12:
// message"). What such a line says about the network is the test's business:
// a test that prints "500 Internal Server Error" from its own server is a
// failing test, not a registry having a bad day.
func goTestLogLine(msg []byte) bool {
	t := bytes.TrimLeft(msg, " \t")
	i := bytes.Index(t, []byte("_test.go:"))
	if i <= 0 || bytes.ContainsAny(t[:i], " \t") {
		return false
	}
	n, ok := digitsThen(t[i+len("_test.go:"):], ':')
	return ok && n > 0
}

// testReport is true when the line is a test runner's report that a test
// failed: go's "--- FAIL: TestX" and "FAIL<tab>pkg" (not "[setup failed]",
// where no test ran), gotestsum's "=== FAIL:", gocheck's "OOPS: … FAILED",
// pytest's "FAILED x::y", its verbose "x::y FAILED" and its "N failed"
// summary, jest's "✕ name" and "Tests: N failed", vitest's summaries,
// cargo's "test result: FAILED", mocha's "N failing", Gradle's failing tests,
// Ginkgo's "[FAIL]", vstest's "Test Run Failed". Such a line decides the
// class whatever words the failing test's message has.
func testReport(msg, lower []byte) bool {
	t := bytes.TrimLeft(msg, " \t")
	l := bytes.TrimLeft(lower, " \t")
	has := func(s string) bool { return bytes.Contains(l, []byte(s)) }
	starts := func(s string) bool { return bytes.HasPrefix(l, []byte(s)) }
	switch {
	case goTestFail(msg) == 1:
	case goTestFail(msg) == 2: // "FAIL<tab>pkg 0.5s", but not "FAIL<tab>pkg [setup failed]"
		if has("[setup failed]") || has("[build failed]") {
			return false
		}
	case starts("=== fail: "), starts("oops: ") && has(" failed"): // gotestsum, gocheck
	case starts("panic: test timed out after"): // go test -timeout
	case has("there were failing tests"): // gradle: "> There were failing tests. See the report at: …"
	case bytes.HasSuffix(t, []byte(" FAILED")) && bytes.Contains(t, []byte(" > ")): // gradle test event "Class > method FAILED"
	case pytestVerbose(t): // pytest -v "path::test FAILED [ 77%]"
	case starts("[failed]"), starts("[fail]"): // ginkgo
	case starts("test run failed"), starts("failed!") && has(" - failed:"): // vstest, dotnet test
	case has("exceeded timeout of") && has("for a test"): // jest
	case starts("test result: failed"), starts("error: test failed"): // cargo test
	case starts("tests:") && has(" failed"): // jest summary
	case (starts("tests ") || starts("test files ")) && has(" failed"): // vitest "Tests  1 failed | 2 passed (3)"
	case bytes.HasPrefix(t, []byte("✕ ")): // jest: a failed test
	case bytes.HasPrefix(t, []byte("FAILED ")) && has("::"): // pytest short summary
	case starts("=") && pytestFailedSummary(l): // pytest "=== 1 failed, 2 passed in 0.5s ==="
	case countThen(l, " failing"): // mocha
	default:
		return false
	}
	return true
}

// checkFailure is true when the line is how a linter, a formatter, the race
// detector or a compiler reports that the code under check failed, or a
// test runner says no test ran. annotated lines also count golangci-lint's
// "message (linter)" form of its annotations; the caller counts as
// annotated the web view's "Error: message" rendering of one.
func checkFailure(msg, lower []byte, annotated bool) bool {
	t := bytes.TrimLeft(msg, " \t")
	l := bytes.TrimLeft(lower, " \t")
	has := func(s string) bool { return bytes.Contains(l, []byte(s)) }
	starts := func(s string) bool { return bytes.HasPrefix(l, []byte(s)) }
	switch {
	case has("code style issues found"): // prettier --check
	case starts("would reformat "), starts("would reformat: "), has(" would be reformatted") && countThen(l, " file"): // black --check, ruff format --check
	case starts("diff in ") && bytes.HasSuffix(l, []byte(":")): // rustfmt --check
	case starts("found ") && countThen(l[len("found "):], " error"): // ruff, mypy
	case eslintStylish(l), (has(" problems (") || has(" problem (")) && has(" error"): // eslint
	case starts("eslint found too many warnings"): // eslint --max-warnings
	case bytes.Equal(l, []byte("issues found")), countThen(l, " issues:"): // golangci-lint (the action, v2's summary)
	case countThen(l, " file") && has(" inspected, ") && has(" offense"): // rubocop
	case starts("warning: data race"), starts("found ") && has(" data race"): // go's race detector
	case noTestsRan(l):
	case starts("error[e"), starts("error: could not compile"): // rustc, cargo
	case has("error ts") && tscCode(l): // tsc
	case diagnostic(t): // path:line:col: message (go vet, golangci-lint, gcc, flake8)
	case lineDiagnostic(t): // path:line: message (linter), path:line: error: message (mypy)
	case annotated && lintSuffix(t): // golangci-lint annotations "message (linter)"
	default:
		return false
	}
	return true
}

// noTestsRan is true when a test runner says it ran no test, which fails
// the check that asked for tests: pytest's "no tests ran in 0.01s" (exit
// 5), jest's "No tests found, exiting with code 1", vitest's and mocha's
// "No test files found", go test -run's "testing: warning: no tests to run".
func noTestsRan(l []byte) bool {
	t := bytes.Trim(l, "= ")
	switch {
	case bytes.HasPrefix(t, []byte("no tests ran")),
		bytes.HasPrefix(t, []byte("no tests found")),
		bytes.HasPrefix(t, []byte("no test files found")),
		bytes.HasPrefix(t, []byte("error: no test files found")),
		bytes.HasPrefix(t, []byte("testing: warning: no tests to run")):
		return true
	}
	return false
}

// goNoTestFiles matches go test's "?<tab>pkg<tab>[no test files]".
func goNoTestFiles(msg []byte) bool {
	t := bytes.TrimLeft(msg, " \t")
	return bytes.HasPrefix(t, []byte("?")) && bytes.HasSuffix(bytes.TrimRight(t, " \t"), []byte("[no test files]"))
}

// goTestRan is true for go test's lines that say a package's tests ran:
// "ok<tab>pkg", "--- PASS", "--- FAIL", "FAIL<tab>pkg".
func goTestRan(msg []byte) bool {
	t := bytes.TrimLeft(msg, " \t")
	ok := len(t) > 3 && bytes.HasPrefix(t, []byte("ok")) && (t[2] == ' ' || t[2] == '\t') && bytes.IndexByte(t, '\t') > 0
	return ok || bytes.HasPrefix(t, []byte("--- PASS: ")) || goTestFail(msg) != 0 && !bytes.Contains(t, []byte("[setup failed]"))
}

// dumpServerError finds a 5xx a client library prints in its error dump:
// Octokit's "status: 502," (its RequestError, and each "status" key of the
// JSON or object it dumps), "statusCode: 503", Python's "502 Server Error:"
// (requests) and "GithubException: 502" (PyGithub), "HTTP/1.1 503" and
// "HTTP 503" status lines. Only 500, 502, 503 and 504: a 4xx key in a dump
// says less than the message lines around it (a 403's rate-limit text).
func dumpServerError(lower []byte) int {
	for _, p := range []string{"status:", "status\":", "status':", "statuscode:", "statuscode\":", "status=", "status_code=",
		"githubexception:", "http/1.1 ", "http/1.0 ", "http/2 ", "http 5"} {
		for off := 0; ; {
			i := bytes.Index(lower[off:], []byte(p))
			if i < 0 {
				break
			}
			i += off
			off = i + len(p)
			if i > 0 && isLetter(lower[i-1]) {
				continue
			}
			start := off
			if p == "http 5" {
				start = off - 1
			}
			if code := serverStatus(bytes.TrimLeft(lower[start:], " \"'")); code != 0 {
				return code
			}
		}
	}
	for _, code := range []string{"500", "502", "503", "504"} {
		if i := bytes.Index(lower, []byte(code+" server error:")); i >= 0 && (i == 0 || !isDigit(lower[i-1])) {
			return serverStatus(lower[i:])
		}
	}
	return 0
}

// serverStatus reads 500, 502, 503 or 504 at the start of b, not followed by
// another digit or a dot; 0 otherwise.
func serverStatus(b []byte) int {
	if len(b) < 3 || b[0] != '5' || b[1] != '0' || !isDigit(b[2]) {
		return 0
	}
	if len(b) > 3 && (isDigit(b[3]) || b[3] == '.') {
		return 0
	}
	switch code := 500 + int(b[2]-'0'); code {
	case 500, 502, 503, 504:
		return code
	}
	return 0
}

// digitsThen reads a run of digits followed by sep and returns how many digits.
func digitsThen(b []byte, sep byte) (int, bool) {
	n := 0
	for n < len(b) && isDigit(b[n]) {
		n++
	}
	return n, n > 0 && n < len(b) && b[n] == sep
}

// countThen is true when b starts with a count and then word ("3 failing").
func countThen(b []byte, word string) bool {
	n := 0
	for n < len(b) && isDigit(b[n]) {
		n++
	}
	return n > 0 && bytes.HasPrefix(b[n:], []byte(word))
}

// pytestVerbose matches pytest's verbose result line for a failed or erroring
// test: "tests/test_x.py::test_y FAILED" with an optional " [ 77%]" after it.
func pytestVerbose(t []byte) bool {
	for _, w := range []string{" FAILED", " ERROR"} {
		i := bytes.LastIndex(t, []byte(w))
		if i < 0 || !bytes.Contains(t[:i], []byte("::")) || bytes.ContainsAny(t[:i], " \t") {
			continue
		}
		rest := t[i+len(w):]
		if len(rest) == 0 || bytes.HasPrefix(rest, []byte(" [")) && bytes.HasSuffix(rest, []byte("%]")) {
			return true
		}
	}
	return false
}

func pytestFailedSummary(l []byte) bool {
	t := bytes.Trim(l, "= ")
	return countThen(t, " failed")
}

// eslintStylish matches eslint's stylish line "  2:8  error  message  rule".
func eslintStylish(l []byte) bool {
	n, ok := digitsThen(l, ':')
	if !ok {
		return false
	}
	rest := l[n+1:]
	m := 0
	for m < len(rest) && isDigit(rest[m]) {
		m++
	}
	if m == 0 {
		return false
	}
	rest = bytes.TrimLeft(rest[m:], " \t")
	return len(rest) < len(l)-n-1-m && bytes.HasPrefix(rest, []byte("error "))
}

// tscCode matches TypeScript's "error TS2345:".
func tscCode(l []byte) bool {
	i := bytes.Index(l, []byte("error ts"))
	_, ok := digitsThen(l[i+len("error ts"):], ':')
	return ok
}

// diagnostic matches "path.ext:line:col: message" at the start of a line.
func diagnostic(t []byte) bool {
	i := diagnosticPath(t)
	if i < 0 {
		return false
	}
	rest := t[i+1:]
	n, ok := digitsThen(rest, ':')
	if !ok {
		return false
	}
	rest = rest[n+1:]
	m, ok := digitsThen(rest, ':')
	if !ok {
		return false
	}
	rest = rest[m+1:]
	return len(rest) > 1 && rest[0] == ' '
}

// diagnosticPath is the index of the colon after a diagnostic's path when
// what comes before it looks like a file's path (a dot, no blank or
// parenthesis), or -1.
func diagnosticPath(t []byte) int {
	i := pathEnd(t)
	if i <= 0 {
		return -1
	}
	if path := t[:i]; bytes.ContainsAny(path, " \t()") || !bytes.Contains(path, []byte(".")) {
		return -1
	}
	return i
}

// pathEnd is the index of the colon after a diagnostic's path, past a
// Windows drive ("D:\\a\\x\\main.go:12:3:"), or -1.
func pathEnd(t []byte) int {
	skip := 0
	if len(t) > 3 && isLetter(t[0]) && t[1] == ':' && (t[2] == '\\' || t[2] == '/') {
		skip = 2
	}
	i := bytes.IndexByte(t[skip:], ':')
	if i < 0 {
		return -1
	}
	return skip + i
}

// lineDiagnostic matches "path.ext:line: message" without a column when the
// message is a linter's (golangci-lint's gofmt and goimports findings end in
// "(linter)") or says "error:" (mypy): a program's own log line with a
// file:line prefix is neither.
func lineDiagnostic(t []byte) bool {
	i := diagnosticPath(t)
	if i < 0 {
		return false
	}
	n, ok := digitsThen(t[i+1:], ':')
	if !ok {
		return false
	}
	rest := t[i+1+n+1:]
	if len(rest) < 2 || rest[0] != ' ' {
		return false
	}
	return bytes.HasPrefix(rest, []byte(" error: ")) || lintSuffix(rest)
}

// lintSuffix matches a message ending in "(linter)", a lower-case name.
func lintSuffix(t []byte) bool {
	t = bytes.TrimRight(t, " ")
	if len(t) < 4 || t[len(t)-1] != ')' {
		return false
	}
	i := bytes.LastIndexByte(t, '(')
	if i < 1 || t[i-1] != ' ' || i+1 >= len(t)-1 {
		return false
	}
	for _, c := range t[i+1 : len(t)-1] {
		if !('a' <= c && c <= 'z' || isDigit(c) || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
