package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/internal/webtest"
)

// addrWriter is a stderr that hands the address of the "Web UI at" line
// to addr.
type addrWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	addr chan string
	sent bool
}

var webUILine = regexp.MustCompile(`Web UI at (http://[^/\s]+)/`)

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := webUILine.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.addr <- m[1]
	}
	return len(p), nil
}

func (w *addrWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startWebUI starts weir run window-stats over 8000 events at --rate 2000
// with checkpoints every 200 ms, --web-ui 127.0.0.1:0 and the token in
// $WEIR_REST_TOKEN, in process; it returns the printed address, the
// channel of the exit code and stderr.
func startWebUI(t *testing.T, token string, stdout io.Writer, flags ...string) (string, chan int, *addrWriter) {
	t.Helper()
	var data strings.Builder
	data.WriteString("user,ts,amount\n")
	for i := range 8000 {
		fmt.Fprintf(&data, "u%d,%d,%d\n", i%5, i*10, i%100)
	}
	in := filepath.Join(t.TempDir(), "ev.csv")
	if err := os.WriteFile(in, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(restTokenEnv, token)
	stderr := &addrWriter{addr: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- Execute(context.Background(), append([]string{"run", "window-stats", "--input", in, "--key", "user", "--time", "ts",
			"--value", "amount", "--window", "tumbling:5s", "--parallelism", "2", "--rate", "2000",
			"--checkpoint-dir", t.TempDir(), "--checkpoint-interval", "200ms", "--web-ui", "127.0.0.1:0"}, flags...), stdout, stderr)
	}()
	var base string
	select {
	case base = <-stderr.addr:
	case code := <-done:
		t.Fatalf("exit %d before the web UI: %s", code, stderr)
	}
	return base, done, stderr
}

// TestWebUIRun runs weir run window-stats over 8000 events at --rate 2000
// (about 4 s) with checkpoints every 200 ms and --web-ui 127.0.0.1:0, in
// process: it prints its address, refuses requests without the token, and
// while the job runs /jobs/overview shows it RUNNING and /metrics has
// numRecordsIn of the window vertex and numberOfCompletedCheckpoints
// rising between scrapes. Once the command returned the address answers
// no more.
func TestWebUIRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job for 4 s")
	}
	const token = "tok"
	base, done, stderr := startWebUI(t, token, io.Discard)
	if code, _, err := webtest.Get(base+"/metrics", ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, %v", code, err)
	}
	var ov struct {
		Jobs []struct{ Name, State string } `json:"jobs"`
	}
	for deadline := time.Now().Add(10 * time.Second); len(ov.Jobs) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, body, err := webtest.Get(base+"/jobs/overview", token)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(body), &ov); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	}
	if len(ov.Jobs) != 1 || ov.Jobs[0].Name != "window-stats" || ov.Jobs[0].State != "RUNNING" {
		t.Fatalf("jobs %+v", ov.Jobs)
	}
	first := map[string]float64{}
	scrape := func() string {
		_, body, err := webtest.Get(base+"/metrics", token)
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	series := map[string][2]string{
		"window records in": {"flink_taskmanager_job_task_numRecordsIn", `task_name="Window`},
		"checkpoints":       {"flink_jobmanager_job_numberOfCompletedCheckpoints", `job_name="window-stats"`},
	}
	body := scrape()
	for k, s := range series {
		first[k] = webtest.MetricSum(body, s[0], s[1])
	}
	risen := map[string]bool{}
	for deadline := time.Now().Add(3 * time.Second); len(risen) < len(series) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		body := scrape()
		for k, s := range series {
			if v := webtest.MetricSum(body, s[0], s[1]); v > first[k] {
				risen[k] = true
				t.Logf("%s: %v then %v", k, first[k], v)
			}
		}
	}
	for k := range series {
		if !risen[k] {
			t.Errorf("%s did not rise from %v while the job ran", k, first[k])
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, _, err := webtest.Get(base+"/overview", token); err == nil {
		t.Errorf("the web UI still answers after the command returned")
	}
}

// TestWebUIStop stops the job through the REST API (what the page's button
// posts): the savepoint is written under --savepoint-dir, the command
// exits 0 and prints its path as a SIGTERM stop does.
func TestWebUIStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job")
	}
	const token = "tok"
	sp := t.TempDir()
	var stdout syncBuffer
	base, done, stderr := startWebUI(t, token, &stdout, "--savepoint-dir", sp)
	var jobs struct {
		Jobs []struct{ ID string } `json:"jobs"`
	}
	for deadline := time.Now().Add(10 * time.Second); len(jobs.Jobs) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, body, err := webtest.Get(base+"/jobs", token)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(body), &jobs); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	}
	if len(jobs.Jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	var code int
	for deadline := time.Now().Add(10 * time.Second); code != http.StatusAccepted && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		req, err := http.NewRequest(http.MethodPost, base+"/jobs/"+jobs.Jobs[0].ID+"/stop", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		code = resp.StatusCode // 409 until the job runs
	}
	if code != http.StatusAccepted {
		t.Fatalf("POST stop: %d", code)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := stdout.String()
	i := strings.LastIndex(out, "Savepoint completed. Path: ")
	if i < 0 {
		t.Fatalf("no savepoint path in\n%s", out)
	}
	path := strings.TrimSpace(out[i+len("Savepoint completed. Path: "):])
	if filepath.Dir(path) != sp {
		t.Errorf("savepoint %s, want one under %s", path, sp)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the savepoint: %v", err)
	}
}
