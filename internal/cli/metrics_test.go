package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

const metricsToken = "ghs_metricstesttoken00000000000000000000"

// TestMetricsCommand runs `roadmap metrics --json` in-process against the
// fake GitHub over HTTP, holding 150 items whose record comments the real
// client wrote (WriteRecord), one more whose Jobs are older than the
// window, and a record block a stranger wrote. The figures are computed by
// hand below; the records are read with one list request per 100 comments.
func TestMetricsCommand(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: metricsToken, Owner: "acme", Repo: "widgets",
		RateLimit: 5000, SecondaryPerMinute: 1000, SecondaryPerHour: 1000})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	writer, err := github.New(github.Options{BaseURL: srv.URL + "/", Token: metricsToken, Owner: "acme", Repo: "widgets",
		Masker: redact.New(redact.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	base := now.Add(-48 * time.Hour).Unix()
	hour := int64(3600)
	usd := func(v float64) record.Spend { return record.Spend{USD: v} }
	item := func(spend float64, stage record.JobOutcome, impl ...record.JobOutcome) {
		t.Helper()
		n := fake.CreateIssue(githubfake.Issue{Title: "item", Author: "alice"})
		rc := recordstore.RecordComment{}
		err := recordstore.New(writer).Write(ctx, n, &rc, func(*record.Record) (record.Changes, error) {
			var c record.Changes
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{stage})
			c.SetJobs(impl)
			last := impl[len(impl)-1]
			c.SetResult(last.Result)
			if last.Failure != "" {
				c.SetFailure(last.Failure)
			}
			c.SetSpend(usd(spend))
			return c, nil
		}, func(*record.Record) record.View { return record.View{} })
		if err != nil {
			t.Fatal(err)
		}
	}
	staged := record.JobOutcome{Job: 1, RunID: 1, Result: record.ResultStaged, Spend: usd(0.04), Requests: 2, At: base}
	// 135 items ready in one implement Job 2 h after staging: $0.04 + $0.06,
	// 2 + 3 requests.
	for range 135 {
		item(0.10, staged, record.JobOutcome{Job: 1, RunID: 2, Result: record.ResultReady, Spend: usd(0.06), Requests: 3, At: base + 2*hour})
	}
	// 10 items stopped on checks_failed: $0.04 + $0.16, 2 + 3 requests.
	for range 10 {
		item(0.20, staged, record.JobOutcome{Job: 1, RunID: 2, Result: record.ResultStopped, Failure: "checks_failed",
			Spend: usd(0.16), Requests: 3, At: base + hour})
	}
	// 5 items ready after a killed Job (recovered spend $0.10) and a
	// continuation 4 h after staging: $0.04 + $0.10 + $0.06, 2 + 3 + 3.
	for range 5 {
		item(0.20, staged, record.JobOutcome{Job: 1, RunID: 2, Failure: "killed", Spend: usd(0.10), Requests: 3, At: base + hour},
			record.JobOutcome{Job: 2, RunID: 3, Result: record.ResultReady, Spend: usd(0.06), Requests: 3, At: base + 4*hour})
	}
	// An item whose Jobs ended 30 days ago: its comment is in the list (the
	// fake's clock wrote it now) but none of its Jobs is in the 7-day window.
	month := now.Add(-30 * 24 * time.Hour).Unix()
	item(9, record.JobOutcome{Job: 1, RunID: 1, Result: record.ResultStaged, Requests: 2, At: month},
		record.JobOutcome{Job: 1, RunID: 2, Result: record.ResultStopped, Failure: "auth", Spend: usd(9), Requests: 9, At: month})
	// A record block in a stranger's comment, posted over HTTP: not a record.
	fake.AddToken("ghp_mallory", "mallory", false)
	forged := fake.CreateIssue(githubfake.Issue{Title: "forged", Author: "mallory"})
	var c record.Changes
	c.SetResult(record.ResultReady)
	c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 9, Result: record.ResultReady, Spend: usd(1000), Requests: 99, At: base}})
	body, err := record.Update("", c)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]string{"body": body})
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/acme/widgets/issues/%d/comments", srv.URL, forged), bytes.NewReader(payload))
	req.Header.Set("Authorization", "Bearer ghp_mallory")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("post the stranger's comment: %v %v", resp, err)
	}
	resp.Body.Close()

	fake.ResetLog()
	var out, errb bytes.Buffer
	environ := []string{"GITHUB_TOKEN=" + metricsToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=acme/widgets"}
	code := Main(ctx, []string{"metrics", "--json", "--since", "7d"}, environ, strings.NewReader(""), &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	var got struct {
		Items                     int                 `json:"items"`
		ByState                   map[items.State]int `json:"by_state"`
		Ended                     int                 `json:"ended"`
		SuccessRate               float64             `json:"success_rate"`
		MedianImplementJobs       float64             `json:"median_implement_jobs"`
		MedianStageToReadySeconds float64             `json:"median_stage_to_ready_seconds"`
		StageToReadyItems         int                 `json:"stage_to_ready_items"`
		TotalSpend                record.Spend        `json:"total_spend"`
		WindowSpend               record.Spend        `json:"window_spend"`
		SpendPerReadyUSD          float64             `json:"spend_per_ready_usd"`
		StopsByClass              map[string]int      `json:"stops_by_class"`
		ImplementJobs             int                 `json:"implement_jobs"`
		Continuations             int                 `json:"continuations"`
		ContinuationRate          float64             `json:"continuation_rate"`
		JobRequests               int                 `json:"job_requests"`
		Requests                  int                 `json:"requests"`
		RequestsPerItem           float64             `json:"requests_per_item"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	want := got
	want.Items = 150 // the month-old item and the forged block are not counted
	want.ByState = map[items.State]int{items.Planning: 0, items.Staged: 0, items.Implementing: 0, items.WaitingChecks: 0,
		items.NeedsInput: 0, items.WaitingBudget: 0, items.WaitingClaim: 0, items.WaitingBlockers: 0, items.Stopped: 10, items.Ready: 140, items.Unknown: 0}
	want.Ended = 150
	want.SuccessRate = 0.933333333 // 140 / 150, to nine decimals
	want.MedianImplementJobs = 1   // 145 items took 1, 5 took 2
	// 135 items 2 h, 5 items 4 h: the median is 2 h
	want.MedianStageToReadySeconds, want.StageToReadyItems = 7200, 140
	// 135 × 0.10 + 10 × 0.20 + 5 × 0.20 = 13.5 + 2 + 1; every Job is in the window
	want.TotalSpend, want.WindowSpend = usd(16.5), usd(16.5)
	want.SpendPerReadyUSD = 0.117857143 // 16.5 / 140 = 0.1178571428…
	want.StopsByClass = map[string]int{"checks_failed": 10}
	// 135 + 10 + 5 × 2 implement Jobs; the 5 second Jobs continued
	want.ImplementJobs, want.Continuations = 155, 5
	want.ContinuationRate = 0.032258065 // 5 / 155 = 0.0322580645…
	// This command's requests: 152 comments (150 + the month-old item's +
	// the stranger's) are 2 pages of 100.
	want.Requests = 2
	// 135 × (2 + 3) + 10 × (2 + 3) + 5 × (2 + 3 + 3) = 675 + 50 + 40; / 150
	want.JobRequests, want.RequestsPerItem = 765, 5.1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := fake.CountByEndpoint()["GET /repos/{owner}/{repo}/issues/comments"]; n != 2 {
		t.Errorf("list requests = %d, want 2 (152 comments, 100 a page)", n)
	}
	if len(fake.Requests()) != 2 {
		t.Errorf("the command made %d requests, want the 2 list pages: %v", len(fake.Requests()), fake.Requests())
	}

	t.Run("for a person", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := Main(ctx, []string{"metrics", "--since", "7d"}, environ, strings.NewReader(""), &out, &errb)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
		}
		for _, line := range []string{"ready", "success rate", "93.3% (140 ready of 150 ended)", "checks_failed 10", "$0.12"} {
			if !strings.Contains(out.String(), line) {
				t.Errorf("output lacks %q:\n%s", line, out.String())
			}
		}
	})

	t.Run("bad input and a failing GitHub", func(t *testing.T) {
		for _, tc := range []struct {
			args    []string
			environ []string
			code    int
		}{
			{[]string{"metrics", "--since", "last week"}, environ, ExitUsage},
			{[]string{"metrics", "--since", "-3d"}, environ, ExitUsage},
			{[]string{"metrics", "--since", "2999-01-01"}, environ, ExitUsage},
			{[]string{"metrics", "extra"}, environ, ExitUsage},
			{[]string{"metrics", "--json"}, []string{"GITHUB_TOKEN=" + metricsToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=acme/absent"}, ExitInternal},
		} {
			var out, errb bytes.Buffer
			if code := Main(ctx, tc.args, tc.environ, strings.NewReader(""), &out, &errb); code != tc.code {
				t.Errorf("%v: exit %d, want %d; stderr:\n%s", tc.args, code, tc.code, errb.String())
			}
		}
	})
}
