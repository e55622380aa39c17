package clustertest

import (
	"bytes"
	"context"
	"html"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/internal/webtest"
)

// tmMemory matches a TaskManager's managed memory on the page.
var tmMemory = regexp.MustCompile(`<td class="num tm-memory">[\d.]+ [KMG]i?B</td>`)

// TestWebUICluster: a JobManager with --rest-token and a TaskManager on
// loopback; window-stats submitted with --jobmanager at --rate 2000 with
// checkpoints every 200 ms. Through the JobManager's address: a request
// without the token is refused with 401; while the job runs, /metrics has
// numRecordsIn of the window vertex and numberOfCompletedCheckpoints
// rising between scrapes, and headless Chromium's page names the job
// RUNNING and lists the REST answer's vertices with their records; after
// the end the job is FINISHED, on the page too, with its vertices'
// final records, and its committed output equals an embedded run's.
func TestWebUICluster(t *testing.T) {
	bin := weir(t)
	job := windowStatsArgs(t, 14000)
	oracle := filepath.Join(t.TempDir(), "oracle")
	runToEnd(t, bin, append(slices.Clone(job), "--output", oracle)...)
	want := committed(t, oracle)

	const token = "s3cret"
	_, rpcAddr, restURL := startJobManager(t, bin, t.TempDir(), "--rest-token", token)
	start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", "tm1")
	out := filepath.Join(t.TempDir(), "out")
	submit := exec.Command(bin, append(slices.Clone(job), "--output", out, "--checkpoint-interval", "200ms", "--rate", "2000",
		"--jobmanager", restURL)...)
	submit.Env = append(os.Environ(), "WEIR_REST_TOKEN="+token)
	var subOut, subErr bytes.Buffer
	submit.Stdout, submit.Stderr = &subOut, &subErr
	if err := submit.Start(); err != nil {
		t.Fatal(err)
	}
	submitted := make(chan error, 1)
	go func() { submitted <- submit.Wait() }()
	t.Cleanup(func() { submit.Process.Signal(syscall.SIGKILL) })

	for _, path := range []string{"/", "/metrics", "/jobs/overview", "/taskmanagers"} {
		if code, _, err := webtest.Get(restURL+path, ""); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", path, code)
		}
	}
	c := rest.NewClient(restURL, token)
	ctx := context.Background()
	var jid string
	var lastErr error // the JobManager answers 503 until it leads
	for deadline := time.Now().Add(20 * time.Second); jid == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no job running in 20 s (last error: %v):\n%s", lastErr, subErr.String())
		}
		jobs, err := c.Jobs(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		if len(jobs) == 1 && jobs[0].State == rest.StateRunning && jobs[0].Name == "run window-stats" {
			jid = jobs[0].ID
		}
	}

	series := map[string][2]string{
		"window records in": {"flink_taskmanager_job_task_numRecordsIn", `task_name="Window`},
		"checkpoints":       {"flink_jobmanager_job_numberOfCompletedCheckpoints", `job_id="` + jid + `"`},
	}
	first := map[string]float64{}
	risen := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(risen) < len(series) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, body, err := webtest.Get(restURL+"/metrics", token)
		if err != nil {
			t.Fatal(err)
		}
		for k, s := range series {
			v := webtest.MetricSum(body, s[0], s[1])
			f, seen := first[k]
			switch {
			case !seen && v > 0:
				first[k] = v
			case seen && v > f && !risen[k]:
				risen[k] = true
				t.Logf("%s: %v then %v", k, f, v)
			}
		}
	}
	for k := range series {
		if !risen[k] {
			t.Errorf("%s did not rise while the job ran (first seen %v)", k, first[k])
		}
	}

	page := restURL + "/?token=" + token + "#/jobs/" + jid
	t.Run("browser", func(t *testing.T) {
		chrome := webtest.Chromium(t)
		d, err := c.Job(ctx, jid)
		if err != nil {
			t.Fatal(err)
		}
		dom := webtest.Load(t, chrome, page, "--dump-dom")
		if m := webtest.JobName.FindStringSubmatch(dom); m == nil || m[1] != "run window-stats" || m[2] != "RUNNING" {
			t.Fatalf("the page does not name the running job: %v\n%s", m, dom)
		}
		if !strings.Contains(dom, `<p id="exceptions">No exceptions.</p>`) || !tmMemory.MatchString(dom) || !strings.Contains(dom, `<span id="job-memory">managed memory `) {
			t.Errorf("the page shows no empty exception history or no TaskManager memory\n%s", dom)
		}
		t.Logf("screenshots %s, %s", webtest.Screenshot(t, chrome, page, "web-ui-cluster-job.png"),
			webtest.Screenshot(t, chrome, restURL+"/?token="+token+"#/", "web-ui-cluster.png"))
		rows := webtest.VertexRow.FindAllStringSubmatch(dom, -1)
		if len(rows) != len(d.Vertices) || len(rows) < 2 {
			t.Fatalf("%d vertex rows for the %d vertices of the REST answer\n%s", len(rows), len(d.Vertices), dom)
		}
		for i, r := range rows {
			name, in, out := html.UnescapeString(r[1]), webtest.Atoi(t, r[2]), webtest.Atoi(t, r[3])
			t.Logf("vertex %s: records in %d, out %d", name, in, out)
			if name != d.Vertices[i].Name {
				t.Errorf("row %d names %q, want %q", i, name, d.Vertices[i].Name)
			}
			if (i == 0 && out == 0) || (i > 0 && in == 0) {
				t.Errorf("vertex %s shows no records: in %d, out %d", name, in, out)
			}
		}
	})

	select {
	case err := <-submitted:
		if err != nil {
			t.Fatalf("weir run --jobmanager: %v\n%s%s", err, subOut.String(), subErr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("the job did not end:\n%s", subErr.String())
	}
	d, err := c.Job(ctx, jid)
	if err != nil || d.State != rest.StateFinished {
		t.Fatalf("job %s after the end: %+v, %v", jid, d, err)
	}
	if m := d.Vertices[0].Metrics; m == nil || m.WriteRecords != 14000 {
		t.Errorf("the source vertex's final metrics %+v, want 14000 records written", m)
	}
	if d.Plan == nil || len(d.Plan.Nodes) != len(d.Vertices) {
		t.Errorf("plan %+v for %d vertices", d.Plan, len(d.Vertices))
	}
	if ck, err := c.Checkpoints(ctx, jid); err != nil || len(ck.History) == 0 || ck.History[0].ID < ck.History[len(ck.History)-1].ID {
		t.Errorf("checkpoint history %+v, %v: want completed checkpoints newest first", ck.History, err)
	}
	t.Run("browser finished", func(t *testing.T) {
		chrome := webtest.Chromium(t)
		dom := webtest.Load(t, chrome, page, "--dump-dom")
		if m := webtest.JobName.FindStringSubmatch(dom); m == nil || m[2] != "FINISHED" {
			t.Fatalf("the page does not show the job FINISHED: %v\n%s", m, dom)
		}
	})
	got := committed(t, out)
	if lost, dup := diff(want, got); len(lost)+len(dup) != 0 {
		t.Fatalf("%d lines: lost %q, duplicated %q", len(got), lost[:min(len(lost), 10)], dup[:min(len(dup), 10)])
	}
}
