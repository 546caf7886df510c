package failure

// signal is what a marker says about a line. A marker may say more than one
// thing ("TLS handshake timeout" is transient and also proves the request was
// never sent), so signals are bits.
type signal uint32

const (
	sigOOM           signal = 1 << iota // OOM evidence on its own
	sigKilledProcess                    // "Killed process": OOM evidence with sigTotalVM
	sigTotalVM
	sigTimeout    // runner: the job or a step ran past its time
	sigCancel     // runner: the job was cancelled
	sigRunnerLost // runner: shutdown signal, lost communication
	sigRatePrimary
	sigRateSecondary
	sigRate // a rate limit that does not say which
	sigAuth
	sigPermissionTo // git "Permission to o/r.git denied to x": auth with sigDeniedTo
	sigDeniedTo
	sigConflict
	sigIndeterminate
	sigPreSend // the request never left: a timeout is transient, not indeterminate
	sigTransient
	sigUnexpectedEOF
	sigSyntaxError // "syntax error: unexpected EOF" is a compile error, not a network one
	sigDiskFull    // the machine's disk is full: a fresh runner has an empty one
)

// Marker flags.
const (
	// flagNoDigitAfter: the byte after the marker is not a digit, so
	// "x-ratelimit-remaining: 0" does not match "x-ratelimit-remaining: 0…".
	flagNoDigitAfter uint8 = 1 << iota
	// flagPositiveCount: when a count follows the marker ("oom_kill 0" in
	// cgroup memory.events), it must be positive.
	flagPositiveCount
	// flagNotAfterOn: the marker does not count right after "on", so the JVM
	// options -XX:+HeapDumpOnOutOfMemoryError and -XX:+ExitOnOutOfMemoryError,
	// which Gradle and Maven logs print in command lines, are not OOM evidence.
	flagNotAfterOn
)

// marker is one piece of text the classifier looks for, in lower case, and
// where that text comes from (for docs/taxonomy.md and for a person checking
// the classifier against the source).
type marker struct {
	text   string
	sig    signal
	flags  uint8
	source string
}

// markers is every text the classifier matches anywhere in a line. Lines with
// a fixed shape (the runner's typed line, "Process completed with exit code
// N.", go test's "--- FAIL:", go-github's "METHOD URL: STATUS …") are parsed
// in classify.go, not listed here.
var markers = []marker{
	// OOM evidence. It decides only together with exit code 137.
	{text: "out of memory", sig: sigOOM, source: "kernel 'Out of memory: Killed process'; Go 'fatal error: runtime: out of memory'; Node 'JavaScript heap out of memory'"},
	{text: "oom-kill", sig: sigOOM, source: "kernel 'oom-kill:constraint=…' (dmesg)"},
	{text: "oom_kill", sig: sigOOM, flags: flagPositiveCount, source: "cgroup v2 memory.events 'oom_kill N' (N > 0); kernel 'oom_kill_process'"},
	{text: "oomkilled", sig: sigOOM, source: "Kubernetes container reason OOMKilled (actions-runner-controller)"},
	{text: "killed process", sig: sigKilledProcess, source: "kernel 'Killed process PID (name) total-vm:…' (with total-vm)"},
	{text: "total-vm", sig: sigTotalVM, source: "kernel 'Killed process PID (name) total-vm:…' (with killed process)"},
	{text: "cannot allocate memory", sig: sigOOM, source: "ENOMEM text (fork/exec, mmap)"},
	{text: "outofmemoryerror", sig: sigOOM, flags: flagNotAfterOn, source: "JVM java.lang.OutOfMemoryError (not the -XX:+HeapDumpOnOutOfMemoryError option)"},
	{text: "outofmemoryexception", sig: sigOOM, source: ".NET System.OutOfMemoryException"},
	{text: "std::bad_alloc", sig: sigOOM, source: "C++ 'terminate called after throwing an instance of 'std::bad_alloc'' (operator new found no memory)"},
	{text: "java heap space", sig: sigOOM, source: "JVM 'Java heap space' (the OutOfMemoryError detail Maven and Gradle print)"},

	// The runner's own messages about how a job ended. Honoured only on
	// ##[error]/##[warning]/##[notice] lines and in annotations.
	{text: "has exceeded the maximum execution time of", sig: sigTimeout, source: "runner: 'The job running on runner X has exceeded the maximum execution time of N minutes.' / 'The job has exceeded the maximum execution time of 6h0m0s'"},
	{text: "has timed out after", sig: sigTimeout, source: "runner: 'The action 'X' has timed out after N minutes.' (step timeout-minutes)"},
	{text: "the operation was canceled", sig: sigCancel, source: "runner: 'The operation was canceled.'"},
	{text: "did not respond to a cancelation request", sig: sigCancel, source: "server: 'Runner X did not respond to a cancelation request with 00:05:00'"},
	{text: "the runner has received a shutdown signal", sig: sigRunnerLost, source: "runner: 'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.'"},
	{text: "lost communication with the server", sig: sigRunnerLost, source: "annotation: 'The self-hosted runner: X lost communication with the server.' / 'The hosted runner lost communication with the server.'"},

	// Rate limits (GitHub REST and GraphQL, GitHub Models, git over HTTPS).
	{text: "api rate limit exceeded", sig: sigRatePrimary, source: "GitHub 403/429 'API rate limit exceeded for installation ID N.' (go-github RateLimitError)"},
	{text: "api rate limit of", sig: sigRatePrimary, source: "go-github 'API rate limit of N still exceeded until T, not making remote request.'"},
	{text: "x-ratelimit-remaining: 0", sig: sigRatePrimary, flags: flagNoDigitAfter, source: "GitHub response header dump"},
	{text: "secondary rate limit", sig: sigRateSecondary, source: "GitHub 403 'You have exceeded a secondary rate limit.' (go-github AbuseRateLimitError)"},
	{text: "abuse detection mechanism", sig: sigRateSecondary, source: "GitHub 403 'You have triggered an abuse detection mechanism.' (older secondary limit text)"},
	{text: "retry-after:", sig: sigRateSecondary, source: "GitHub response header dump"},
	{text: "429 too many requests", sig: sigRate, source: "HTTP 429 status line"},
	{text: "ratelimitreached", sig: sigRate, source: "GitHub Models 429 error code 'RateLimitReached'"},
	{text: "returned error: 429", sig: sigRate, source: "git 'The requested URL returned error: 429'"},
	{text: "http 429", sig: sigRate, source: "git 'error: RPC failed; HTTP 429'"},
	{text: "toomanyrequests", sig: sigRate, source: "container registry error code TOOMANYREQUESTS: 'toomanyrequests: You have reached your pull rate limit.'"},

	// Authentication and permission.
	{text: "bad credentials", sig: sigAuth, source: "GitHub 401 'Bad credentials'"},
	{text: "requires authentication", sig: sigAuth, source: "GitHub 401 'Requires authentication'"},
	{text: "resource not accessible by integration", sig: sigAuth, source: "GitHub 403 for GITHUB_TOKEN / app tokens without the permission"},
	{text: "resource not accessible by personal access token", sig: sigAuth, source: "GitHub 403 for fine-grained PATs"},
	{text: "must have admin rights", sig: sigAuth, source: "GitHub 403 'Must have admin rights to Repository.'"},
	{text: "401 unauthorized", sig: sigAuth, source: "HTTP 401 status line"},
	{text: "403 forbidden", sig: sigAuth, source: "HTTP 403 status line (rate-limit markers win)"},
	{text: "authentication failed for", sig: sigAuth, source: "git 'fatal: Authentication failed for URL'"},
	{text: "could not read username for", sig: sigAuth, source: "git 'fatal: could not read Username for URL'"},
	{text: "permission denied (publickey)", sig: sigAuth, source: "ssh 'Permission denied (publickey).'"},
	{text: "permission to ", sig: sigPermissionTo, source: "git 'remote: Permission to o/r.git denied to USER.' (with denied to)"},
	{text: " denied to ", sig: sigDeniedTo, source: "git 'remote: Permission to o/r.git denied to USER.' (with permission to)"},
	{text: "returned error: 401", sig: sigAuth, source: "git 'The requested URL returned error: 401'"},
	{text: "returned error: 403", sig: sigAuth, source: "git 'The requested URL returned error: 403'"},
	{text: "http 401", sig: sigAuth, source: "git 'error: RPC failed; HTTP 401'"},
	{text: "http 403", sig: sigAuth, source: "git 'error: RPC failed; HTTP 403'"},

	// Conflicts.
	{text: "(non-fast-forward)", sig: sigConflict, source: "git push ' ! [rejected] HEAD -> b (non-fast-forward)'"},
	{text: "(fetch first)", sig: sigConflict, source: "git push ' ! [rejected] HEAD -> b (fetch first)'"},
	{text: "(stale info)", sig: sigConflict, source: "git push --force-with-lease ' ! [rejected] … (stale info)'"},
	{text: "updates were rejected because", sig: sigConflict, source: "git push hint 'Updates were rejected because the tip of your current branch is behind' / 'the remote contains work'"},
	{text: "merge conflict in", sig: sigConflict, source: "git 'CONFLICT (content): Merge conflict in FILE'"},
	{text: "conflict (modify/delete)", sig: sigConflict, source: "git 'CONFLICT (modify/delete): FILE deleted in X and modified in Y'"},
	{text: "conflict (rename/delete)", sig: sigConflict, source: "git 'CONFLICT (rename/delete)'"},
	{text: "automatic merge failed", sig: sigConflict, source: "git 'Automatic merge failed; fix conflicts and then commit the result.'"},
	{text: "could not apply", sig: sigConflict, source: "git rebase 'error: could not apply SHA... subject'"},
	{text: "is not a fast forward", sig: sigConflict, source: "GitHub 422 'Update is not a fast forward' (update a reference)"},
	{text: "because you have unmerged files", sig: sigConflict, source: "git 'error: Pulling/Cherry-picking/Committing is not possible because you have unmerged files.' (a conflict left unresolved)"},

	// A timeout after the request was sent.
	{text: "awaiting headers", sig: sigIndeterminate, source: "Go net/http 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'"},
	{text: "awaiting response headers", sig: sigIndeterminate, source: "Go net/http 'net/http: timeout awaiting response headers'"},
	{text: "context deadline exceeded", sig: sigIndeterminate, source: "Go context.DeadlineExceeded text (transient when the request never left)"},
	{text: "headers timeout error", sig: sigIndeterminate, source: "Node undici 'HeadersTimeoutError: Headers Timeout Error' (the request was sent, no response in time)"},
	{text: "und_err_headers_timeout", sig: sigIndeterminate, source: "Node undici error code UND_ERR_HEADERS_TIMEOUT"},

	// The request never left: connection set-up failures.
	{text: "dial tcp", sig: sigPreSend, source: "Go net 'dial tcp HOST: …'"},
	{text: "proxyconnect", sig: sigPreSend, source: "Go net/http 'proxyconnect tcp: …'"},
	{text: "tls handshake timeout", sig: sigTransient | sigPreSend, source: "Go net/http 'net/http: TLS handshake timeout'"},
	{text: "no such host", sig: sigTransient | sigPreSend, source: "Go net 'lookup HOST: no such host'"},
	{text: "connection refused", sig: sigTransient | sigPreSend, source: "ECONNREFUSED text"},
	{text: "network is unreachable", sig: sigTransient | sigPreSend, source: "ENETUNREACH text"},
	{text: "temporary failure in name resolution", sig: sigTransient | sigPreSend, source: "resolver EAI_AGAIN text"},
	{text: "temporary failure resolving", sig: sigTransient | sigPreSend, source: "apt 'Temporary failure resolving HOST' (EAI_AGAIN)"},
	{text: "could not resolve host", sig: sigTransient | sigPreSend, source: "git/curl 'Could not resolve host: github.com'"},
	{text: "failed to connect to", sig: sigTransient | sigPreSend, source: "git/curl 'Failed to connect to HOST port 443 after N ms: Couldn't connect to server'"},

	// Transient faults.
	{text: "500 internal server error", sig: sigTransient, source: "HTTP 500 status line"},
	{text: "502 bad gateway", sig: sigTransient, source: "HTTP 502 status line"},
	{text: "503 service unavailable", sig: sigTransient, source: "HTTP 503 status line"},
	{text: "504 gateway timeout", sig: sigTransient, source: "HTTP 504 status line"},
	{text: "returned error: 500", sig: sigTransient, source: "git 'The requested URL returned error: 500'"},
	{text: "returned error: 502", sig: sigTransient, source: "git 'The requested URL returned error: 502'"},
	{text: "returned error: 503", sig: sigTransient, source: "git 'The requested URL returned error: 503'"},
	{text: "returned error: 504", sig: sigTransient, source: "git 'The requested URL returned error: 504'"},
	{text: "connection reset", sig: sigTransient, source: "ECONNRESET text ('connection reset by peer'); Java 'java.net.SocketException: Connection reset' (Maven, Gradle)"},
	{text: "connection timed out", sig: sigTransient, source: "ETIMEDOUT text ('connect: connection timed out', 'read: connection timed out'); apt 'Could not connect to HOST, connection timed out'"},
	{text: "broken pipe", sig: sigTransient, source: "EPIPE text"},
	{text: "i/o timeout", sig: sigTransient, source: "Go net 'read tcp …: i/o timeout'"},
	{text: "unexpected eof", sig: sigUnexpectedEOF, source: "Go io.ErrUnexpectedEOF text (not after 'syntax error')"},
	{text: "syntax error", sig: sigSyntaxError, source: "Go compiler 'syntax error: unexpected EOF' (cancels unexpected EOF)"},
	{text: "early eof", sig: sigTransient, source: "git 'fatal: early EOF'"},
	{text: "the remote end hung up unexpectedly", sig: sigTransient, source: "git 'fatal: the remote end hung up unexpectedly'"},
	{text: "rpc failed", sig: sigTransient, source: "git 'error: RPC failed; curl 92 HTTP/2 stream 5 was not closed cleanly'"},
	{text: "operation timed out", sig: sigTransient, source: "git/curl 'Operation timed out after N milliseconds with 0 bytes received' (curl 28)"},
	{text: "server sent goaway", sig: sigTransient, source: "Go net/http 'http2: server sent GOAWAY and closed the connection'"},
	{text: "econnreset", sig: sigTransient, source: "Node error code ECONNRESET ('npm ERR! code ECONNRESET', 'read ECONNRESET')"},
	{text: "etimedout", sig: sigTransient, source: "Node error code ETIMEDOUT"},
	{text: "eai_again", sig: sigTransient | sigPreSend, source: "Node error code EAI_AGAIN (DNS lookup failed for now)"},
	{text: "socket hang up", sig: sigTransient, source: "Node 'Error: socket hang up'"},
	{text: "read timed out", sig: sigTransient, source: "Python urllib3/requests 'ReadTimeoutError: HTTPSConnectionPool(...): Read timed out.'"},

	// A full disk. Not transient (a retry on the same machine fills the same
	// disk again) but the machine's, not the change's: a continuation runs on
	// a fresh runner.
	{text: "no space left on device", sig: sigDiskFull, source: "ENOSPC text ('No space left on device'): runner diagnostics ('System.IO.IOException: No space left on device'), docker layers, compilers"},
	{text: "enospc", sig: sigDiskFull, source: "Node error code ENOSPC ('npm ERR! code ENOSPC', 'Error: ENOSPC, write')"},
	{text: "running out of disk space", sig: sigDiskFull, source: "runner annotation 'You are running out of disk space. The runner will stop working when the machine runs out of disk space.'"},
	{text: "not enough space on the disk", sig: sigDiskFull, source: "Windows ERROR_DISK_FULL text 'There is not enough space on the disk.'"},
	{text: "out of diskspace", sig: sigDiskFull, source: "git's own ENOSPC text (\"fatal: sha1 file '.git/index.lock' write error. Out of diskspace\")"},
}
