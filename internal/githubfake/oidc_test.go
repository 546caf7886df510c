package githubfake

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const (
	pinV1  = "1111111111111111111111111111111111111111"
	pinOld = "2222222222222222222222222222222222222222"
)

// caller is a workflow that calls roadmap's reusable workflow at ref from
// one job, with the job's and the workflow's permissions as given.
func caller(ref, jobPerms, wfPerms string) string {
	return "on:\n  workflow_dispatch:\n" + wfPerms + "jobs:\n  roadmap:\n    uses: roadmap-dev/roadmap/.github/workflows/roadmap.yml@" + ref + "\n" + jobPerms
}

// TestIDTokenNamesCalledWorkflow: the token a called workflow's job gets
// names that workflow at the ref the caller's `uses:` gave, and its commit,
// only when the caller grants id-token: write (GitHub's rules, oidc.go).
func TestIDTokenNamesCalledWorkflow(t *testing.T) {
	grant := "    permissions:\n      contents: read\n      id-token: write\n"
	tests := []struct {
		name, workflow string
		status         int
		ref, sha       string
	}{
		{"a moving tag names the tag and its commit", caller("v1", grant, ""), 200, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@refs/tags/v1", pinV1},
		{"a SHA pin names the SHA", caller(pinOld, grant, ""), 200, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@" + pinOld, pinOld},
		{"a branch names refs/heads", caller("main", grant, ""), 200, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@refs/heads/main", pinOld},
		{"the workflow's grant counts when the job sets none", caller("v1", "", "permissions:\n  id-token: write\n"), 200, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@refs/tags/v1", pinV1},
		{"write-all grants it", caller("v1", "    permissions: write-all\n", ""), 200, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@refs/tags/v1", pinV1},
		{"no grant, no token", caller("v1", "    permissions:\n      contents: read\n", ""), 403, "", ""},
		{"the job's grant replaces the workflow's", caller("v1", "    permissions:\n      contents: read\n", "permissions:\n  id-token: write\n"), 403, "", ""},
		{"a ref the repository lacks", caller("v9", grant, ""), 404, "", ""},
		{"two called refs cannot be told apart", caller("v1", grant, "") + "  other:\n    uses: roadmap-dev/roadmap/.github/workflows/roadmap.yml@" + pinOld + "\n" + grant, 400, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newTriggerWorld(t, Options{})
			w.h.f.SetWorkflowFile("", "caller.yml", tc.workflow)
			w.h.f.SetCalledRepository("roadmap-dev/roadmap", map[string]string{"refs/tags/v1": pinV1, "refs/heads/main": pinOld})
			_, err := w.dispatch(w.bot, "caller.yml", "main")
			w.must(err, "dispatch")
			run, _, ok := w.h.f.NextRun()
			if !ok {
				t.Fatal("the dispatch started no run")
			}
			path, tok := w.h.f.IDTokenRequest(run.ID)
			status, claims := idToken(t, w.h.srv.URL+path+"&audience=roadmap-pin", tok)
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if claims["job_workflow_ref"] != tc.ref || claims["job_workflow_sha"] != tc.sha {
				t.Errorf("job_workflow_ref %v, job_workflow_sha %v; want %s, %s", claims["job_workflow_ref"], claims["job_workflow_sha"], tc.ref, tc.sha)
			}
			if claims["aud"] != "roadmap-pin" || claims["repository"] != "acme/widgets" {
				t.Errorf("aud %v, repository %v", claims["aud"], claims["repository"])
			}
			// Another run's request token is not this run's.
			if st, _ := idToken(t, w.h.srv.URL+path, "not-the-token"); st != http.StatusUnauthorized {
				t.Errorf("a wrong request token: status %d, want 401", st)
			}
		})
	}
}

// idToken asks the fake's token service and decodes the JWT's claims.
func idToken(t *testing.T, url, tok string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var v struct{ Value string }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("token answer %q: %v", body, err)
	}
	parts := strings.Split(v.Value, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is no JWT", v.Value)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, claims
}
