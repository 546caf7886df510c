package scripts_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const repository = "roadmap-dev/roadmap"

// targets are the runner platforms a release has assets for (.goreleaser.yaml; it builds
// windows/amd64 too, which the install script does not pick).
var targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// releaseServer plays the release side of GitHub on loopback: the assets of
// each release under /OWNER/REPO/releases/download/TAG/FILE, and the
// repository's tags over git's dumb HTTP protocol (a bare repository served
// as files), which is what `git ls-remote` reads to resolve v1 or a SHA.
type releaseServer struct {
	*httptest.Server
	mu       sync.Mutex
	assets   map[string]map[string][]byte // tag → file → bytes
	requests []string
}

func newReleaseServer(t *testing.T, bare string) *releaseServer {
	t.Helper()
	s := &releaseServer{assets: map[string]map[string][]byte{}}
	git := http.StripPrefix("/"+repository+".git", http.FileServer(http.Dir(bare)))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/"+repository+".git/") {
			git.ServeHTTP(w, r)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/"+repository+"/releases/download/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		tag, file, _ := strings.Cut(rest, "/")
		s.mu.Lock()
		body, ok := s.assets[tag][file]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// publish adds a release: one tar.gz per target holding a `roadmap` that
// prints its tag and platform, and checksums.txt. Targets not listed are
// left out, as a release without that platform's asset.
func (s *releaseServer) publish(t *testing.T, tag string, targets []string) {
	t.Helper()
	files := map[string][]byte{}
	var sums strings.Builder
	for _, target := range targets {
		os, arch, _ := strings.Cut(target, "/")
		name := fmt.Sprintf("roadmap_%s_%s_%s.tar.gz", strings.TrimPrefix(tag, "v"), os, arch)
		files[name] = tarGz(t, "roadmap", fmt.Sprintf("#!/bin/sh\necho roadmap %s %s\n", tag, target))
		sum := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	files["checksums.txt"] = []byte(sums.String())
	s.mu.Lock()
	s.assets[tag] = files
	s.mu.Unlock()
}

func (s *releaseServer) served() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *releaseServer) reset() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

func tarGz(t *testing.T, name, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hostAsset is the asset name the script should pick on this machine.
func hostAsset(tag string) string {
	return fmt.Sprintf("roadmap_%s_%s_%s.tar.gz", strings.TrimPrefix(tag, "v"), runtime.GOOS, runtime.GOARCH)
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// tagRepo makes a bare repository with three commits: v1.1.0 on the first,
// v1.2.3 (annotated) and the moving tag v1 on the second, nothing on the
// third. It returns the bare repository and the three commits.
func tagRepo(t *testing.T) (bare string, commits []string) {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	for i := range 3 {
		git(t, work, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
		commits = append(commits, git(t, work, "rev-parse", "HEAD"))
	}
	git(t, work, "tag", "v1.1.0", commits[0])
	git(t, work, "tag", "-a", "-m", "v1.2.3", "v1.2.3", commits[1])
	git(t, work, "tag", "v1", commits[1])
	bare = filepath.Join(t.TempDir(), "roadmap.git")
	git(t, work, "clone", "-q", "--bare", work, bare)
	git(t, bare, "update-server-info")
	return bare, commits
}

// sourceRoot is an action root whose ./cmd/roadmap builds to a binary that
// says it was built from source.
func sourceRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	goVersion := strings.Join(strings.Split(strings.TrimPrefix(runtime.Version(), "go"), ".")[:2], ".")
	write(t, filepath.Join(root, "go.mod"), "module example.com/roadmap\n\ngo "+goVersion+"\n")
	write(t, filepath.Join(root, "cmd", "roadmap", "main.go"),
		"package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"roadmap built from source\") }\n")
	return root
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// install is one run of the install step, as the actions run it.
type install struct {
	root    string // ROADMAP_ACTION_ROOT
	ref     string // ROADMAP_VERSION (github.action_ref)
	cache   string // RUNNER_TOOL_CACHE
	server  string // GITHUB_SERVER_URL
	path    string // PATH; empty keeps the test's
	build   bool   // the second phase: ROADMAP_INSTALL_PHASE=build
	code    int
	log     string
	outputs map[string]string
}

func (in *install) run(t *testing.T) *install {
	t.Helper()
	out := filepath.Join(t.TempDir(), "output")
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "ROADMAP_") || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	path := in.path
	if path == "" {
		path = os.Getenv("PATH")
	}
	env = append(env,
		"PATH="+path,
		"ROADMAP_ACTION_ROOT="+in.root,
		"ROADMAP_VERSION="+in.ref,
		"ROADMAP_REPOSITORY="+repository,
		"RUNNER_TOOL_CACHE="+in.cache,
		"GITHUB_SERVER_URL="+in.server,
		"GITHUB_OUTPUT="+out,
		"GIT_CONFIG_NOSYSTEM=1",
	)
	if in.build {
		env = append(env, "ROADMAP_INSTALL_PHASE=build")
	}
	cmd := exec.Command("bash", "install-roadmap.sh")
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	in.log = log.String()
	in.code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run install-roadmap.sh: %v", err)
		}
		in.code = ee.ExitCode()
	}
	in.outputs = map[string]string{}
	if b, err := os.ReadFile(out); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				in.outputs[k] = v
			}
		}
	}
	return in
}

// runBin runs the installed binary and returns what it printed.
func runBin(t *testing.T, bin string) string {
	t.Helper()
	if bin == "" {
		t.Fatal("the install step set no bin output")
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("run %s: %v\n%s", bin, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestInstallScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bare, commits := tagRepo(t)
	srv := newReleaseServer(t, bare)
	srv.publish(t, "v1.1.0", targets)
	srv.publish(t, "v1.2.3", targets)
	host := runtime.GOOS + "/" + runtime.GOARCH
	var others []string
	for _, target := range targets {
		if target != host {
			others = append(others, target)
		}
	}
	// No root with sources: a run that should install an asset fails if it builds.
	noSource := t.TempDir()
	server := srv.URL + "/" // GITHUB_SERVER_URL with a trailing slash works too

	t.Run("installs the asset for this OS and architecture", func(t *testing.T) {
		for _, tc := range []struct{ name, ref, want string }{
			{"v1.2.3", "v1.2.3", "v1.2.3"},
			{"v1.1.0", "v1.1.0", "v1.1.0"},
			{"the moving major tag", "v1", "v1.2.3"}, // resolved through the repository's tags
			{"a release's commit", commits[1], "v1.2.3"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv.reset()
				in := (&install{root: noSource, ref: tc.ref, cache: t.TempDir(), server: server}).run(t)
				if in.code != 0 {
					t.Fatalf("exit %d, want 0\n%s", in.code, in.log)
				}
				if got, want := runBin(t, in.outputs["bin"]), "roadmap "+tc.want+" "+host; got != want {
					t.Errorf("installed binary prints %q, want %q", got, want)
				}
				wantDownload := "/" + repository + "/releases/download/" + tc.want + "/" + hostAsset(tc.want)
				var downloads []string
				for _, p := range srv.served() {
					if strings.Contains(p, "/releases/download/") {
						downloads = append(downloads, p)
					}
				}
				if len(downloads) != 2 || !strings.Contains(strings.Join(downloads, " "), wantDownload) {
					t.Errorf("downloads %v, want checksums.txt and %s only", downloads, wantDownload)
				}
				if !strings.Contains(in.log, "checksum verified") {
					t.Errorf("log does not say the checksum was verified:\n%s", in.log)
				}
			})
		}
	})

	t.Run("refuses a checksum mismatch", func(t *testing.T) {
		tag := "v1.2.3"
		srv.mu.Lock()
		good := srv.assets[tag][hostAsset(tag)]
		bad := tarGz(t, "roadmap", "#!/bin/sh\necho tampered\n")
		srv.assets[tag][hostAsset(tag)] = bad
		srv.mu.Unlock()
		t.Cleanup(func() { srv.mu.Lock(); srv.assets[tag][hostAsset(tag)] = good; srv.mu.Unlock() })

		cache := t.TempDir()
		in := (&install{root: sourceRoot(t), ref: tag, cache: cache, server: server}).run(t)
		if in.code == 0 {
			t.Fatalf("exit 0 on a tampered asset, want a failure\n%s", in.log)
		}
		goodSum, badSum := sha256.Sum256(good), sha256.Sum256(bad)
		for _, want := range []string{"::error", "checksum", hostAsset(tag), hex.EncodeToString(goodSum[:]), hex.EncodeToString(badSum[:])} {
			if !strings.Contains(in.log, want) {
				t.Errorf("the error does not name %q:\n%s", want, in.log)
			}
		}
		if bin := in.outputs["bin"]; bin != "" {
			t.Errorf("bin output %q set after a mismatch", bin)
		}
		if strings.Contains(in.log, "built from source") {
			t.Errorf("a mismatch fell back to a build:\n%s", in.log)
		}
		var left []string
		filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				left = append(left, p)
			}
			return nil
		})
		if len(left) != 0 {
			t.Errorf("the tool cache holds %v after a mismatch, want nothing", left)
		}
	})

	t.Run("uses the tool cache on the second run", func(t *testing.T) {
		for _, tc := range []struct{ name, ref string }{
			{"v1.2.3", "v1.2.3"}, {"a release's commit", commits[1]}, {"the moving major tag", "v1"},
		} {
			ref := tc.ref
			t.Run(tc.name, func(t *testing.T) {
				cache := t.TempDir()
				first := (&install{root: noSource, ref: ref, cache: cache, server: server}).run(t)
				if first.code != 0 {
					t.Fatalf("first run: exit %d\n%s", first.code, first.log)
				}
				srv.reset()
				second := (&install{root: noSource, ref: ref, cache: cache, server: server}).run(t)
				if second.code != 0 {
					t.Fatalf("second run: exit %d\n%s", second.code, second.log)
				}
				if got, want := second.outputs["bin"], first.outputs["bin"]; got != want {
					t.Errorf("second run bin %q, want the cached %q", got, want)
				}
				if !strings.Contains(second.log, "tool cache") {
					t.Errorf("second run does not say it used the tool cache:\n%s", second.log)
				}
				for _, p := range srv.served() {
					if strings.Contains(p, "/releases/download/") {
						t.Errorf("second run downloaded %s", p)
					}
				}
				// A pinned version or commit needs nothing from the network; only
				// a moving tag is asked where it points.
				if ref != "v1" && len(srv.served()) != 0 {
					t.Errorf("second run of a pin made requests %v, want none", srv.served())
				}
				if got, want := runBin(t, second.outputs["bin"]), "roadmap v1.2.3 "+host; got != want {
					t.Errorf("cached binary prints %q, want %q", got, want)
				}
			})
		}
	})

	t.Run("builds from source only when no asset matches", func(t *testing.T) {
		srv.publish(t, "v1.3.0", others) // a release without this platform's asset
		for _, tc := range []struct{ name, ref string }{
			{"a release without this platform", "v1.3.0"},
			{"a release that does not exist", "v9.9.9"},
			{"a commit that is no release", commits[2]},
			{"a branch", "main"},
			{"a local action", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv.reset()
				in := (&install{root: sourceRoot(t), ref: tc.ref, cache: t.TempDir(), server: server}).run(t)
				if in.code != 0 {
					t.Fatalf("exit %d, want 0\n%s", in.code, in.log)
				}
				if got, want := runBin(t, in.outputs["bin"]), "roadmap built from source"; got != want {
					t.Errorf("binary prints %q, want %q", got, want)
				}
				for _, p := range srv.served() {
					if strings.HasSuffix(p, ".tar.gz") {
						t.Errorf("downloaded %s although no asset matches", p)
					}
				}
			})
		}
	})

	t.Run("asks for Go when the runner's is missing or too old", func(t *testing.T) {
		// A go that reports an old version stands first on PATH.
		bin := t.TempDir()
		write(t, filepath.Join(bin, "go"), "#!/bin/sh\n[ \"$1 $2\" = 'env GOVERSION' ] && { echo go1.20.1; exit 0; }\necho 'this go must not build' >&2; exit 1\n")
		root := sourceRoot(t)
		cache := t.TempDir()
		in := (&install{root: root, ref: commits[2], cache: cache, server: server, path: bin + ":" + os.Getenv("PATH")}).run(t)
		if in.code != 0 {
			t.Fatalf("exit %d, want 0\n%s", in.code, in.log)
		}
		if bin := in.outputs["bin"]; bin != "" {
			t.Errorf("bin %q set with no usable Go", bin)
		}
		b, _ := os.ReadFile(filepath.Join(root, "go.mod"))
		want := strings.TrimSpace(strings.TrimPrefix(strings.Split(string(b), "\n")[2], "go "))
		if got := in.outputs["go-version"]; got != want {
			t.Errorf("go-version output %q, want go.mod's %q", got, want)
		}
		// The action then sets up Go and runs the build phase.
		built := (&install{root: root, ref: commits[2], cache: cache, server: server, build: true}).run(t)
		if built.code != 0 {
			t.Fatalf("build phase: exit %d\n%s", built.code, built.log)
		}
		if got, want := runBin(t, built.outputs["bin"]), "roadmap built from source"; got != want {
			t.Errorf("binary prints %q, want %q", got, want)
		}
	})
}

// TestInstallGoReleaserDist holds .goreleaser.yaml to scripts/install-roadmap.sh: the dist/
// a GoReleaser run wrote (ROADMAP_RELEASE_DIST; `make release-check` sets it after its
// snapshot) has the archives and checksums.txt the script reads, the SBOMs, and archives
// that the script installs from a loopback release into a binary that names the version.
func TestInstallGoReleaserDist(t *testing.T) {
	dist := os.Getenv("ROADMAP_RELEASE_DIST")
	if dist == "" {
		t.Skip("ROADMAP_RELEASE_DIST is not set: `make release-check` runs this against its GoReleaser snapshot")
	}
	var meta struct {
		Version string `json:"version"`
		Commit  string `json:"commit"`
	}
	raw, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Version == "" || len(meta.Commit) != 40 {
		t.Fatalf("dist/metadata.json: %v, version %q commit %q", err, meta.Version, meta.Commit)
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			files[e.Name()], _ = os.ReadFile(filepath.Join(dist, e.Name()))
		}
	}

	// checksums.txt: a `<sha256>  <name>` line for every archive, each sum right.
	sums := map[string]string{}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	for _, l := range strings.Split(strings.TrimSpace(string(files["checksums.txt"])), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("checksums.txt line %q is not `<sha256>  <name>`", l)
		}
		body, present := files[m[2]]
		if sum := sha256.Sum256(body); !present || hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("checksums.txt says %s for %s; in dist/: %v, sha256 %x", m[1], m[2], present, sum)
		}
		sums[m[2]] = m[1]
	}
	// release-check's host snapshot builds one platform (ROADMAP_RELEASE_TARGETS); the
	// full one, every runner platform.
	want := targets
	if only := os.Getenv("ROADMAP_RELEASE_TARGETS"); only != "" {
		want = strings.Split(only, ",")
	}
	for _, target := range want {
		goos, arch, _ := strings.Cut(target, "/")
		archive := fmt.Sprintf("roadmap_%s_%s_%s.tar.gz", meta.Version, goos, arch)
		if _, listed := sums[archive]; !listed {
			t.Errorf("checksums.txt does not list %s, the name install-roadmap.sh asks for on %s", archive, target)
			continue
		}
		if got, want := tarNames(t, files[archive]), []string{"LICENSE", "roadmap"}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s holds %v, want %v at the top", archive, got, want)
		}
		sbom := fmt.Sprintf("roadmap_%s_%s_%s.cdx.json", meta.Version, goos, arch)
		var doc struct {
			BOMFormat  string `json:"bomFormat"`
			Components []struct {
				Name string `json:"name"`
			} `json:"components"`
		}
		if err := json.Unmarshal(files[sbom], &doc); err != nil || doc.BOMFormat != "CycloneDX" {
			t.Errorf("%s is no CycloneDX SBOM: %v (format %q)", sbom, err, doc.BOMFormat)
		} else if !slices.ContainsFunc(doc.Components, func(c struct {
			Name string `json:"name"`
		}) bool {
			return c.Name == "gopkg.in/yaml.v3"
		}) {
			t.Errorf("%s does not list gopkg.in/yaml.v3, a module roadmap is built of", sbom)
		}
	}

	// A snapshot's version (0.0.1-snapshot+abc1234) is no release the install script would
	// pick, so its bytes are published as the release of the version's X.Y.Z: the same
	// archives and checksums.txt with that version in the names, as a tag builds them.
	plain, _, _ := strings.Cut(meta.Version, "-")
	plain, _, _ = strings.Cut(plain, "+")
	tag := "v" + plain
	release := map[string][]byte{}
	for name, body := range files {
		if strings.HasPrefix(name, "roadmap_") || name == "checksums.txt" {
			if name == "checksums.txt" {
				body = []byte(strings.ReplaceAll(string(body), "_"+meta.Version+"_", "_"+plain+"_"))
			}
			release[strings.Replace(name, "_"+meta.Version+"_", "_"+plain+"_", 1)] = body
		}
	}
	bare, _ := tagRepo(t)
	srv := newReleaseServer(t, bare)
	srv.mu.Lock()
	srv.assets[tag] = release
	srv.mu.Unlock()
	in := (&install{root: t.TempDir(), ref: tag, cache: t.TempDir(), server: srv.URL}).run(t)
	if in.code != 0 || !strings.Contains(in.log, "checksum verified") {
		t.Fatalf("install of the GoReleaser archives: exit %d\n%s", in.code, in.log)
	}
	out, err := exec.Command(in.outputs["bin"], "version").CombinedOutput()
	// ", modified": a snapshot of a work tree with changes, when Go stamped it (cli.Build).
	clean := fmt.Sprintf("roadmap v%s (%s) ", meta.Version, meta.Commit)
	if dirty := strings.Replace(clean, ") ", ", modified) ", 1); err != nil || !strings.HasPrefix(string(out), clean) && !strings.HasPrefix(string(out), dirty) {
		t.Errorf("the installed roadmap version prints %q (%v), want it to start %q", out, err, clean)
	}
}

// tarNames lists the entries of a tar.gz, sorted.
func tarNames(t *testing.T, body []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not a gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not a tar: %v", err)
		}
		names = append(names, h.Name)
	}
	slices.Sort(names)
	return names
}
