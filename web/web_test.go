package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/weirdata/weir/cluster/local"
	"github.com/weirdata/weir/metrics/prometheus"
	"github.com/weirdata/weir/stream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "s3cret"

// running starts an endless source throttled to 2000 records a second
// into a keyed sum at parallelism 2, checkpointing every 50 ms, and serves
// it with the token; the job is cancelled at the test's end.
func running(t *testing.T) (*httptest.Server, *stream.Job) {
	t.Helper()
	env := stream.New(stream.Options{Parallelism: 2, SourceRate: 2000})
	env.EnableCheckpointing(50 * time.Millisecond)
	src := stream.FromSeq(env, func(yield func(int) bool) {
		for i := 0; yield(i); i++ {
		}
	})
	stream.Discard(stream.Sum(stream.KeyBy(src, func(v int) int { return v % 7 }),
		func(v int) int { return v }, func(v *int, s int) { *v = s }).Name("sum"))
	plan, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := local.New(local.Options{Slots: 2})
	c.Add("web test", j, plan)
	exp := prometheus.New(nil)
	exp.Add("web test", j)
	srv := httptest.NewServer(Handler(c, exp, Options{Token: token}))
	t.Cleanup(func() {
		srv.Close()
		j.Cancel()
		<-j.Done()
		c.Close()
	})
	return srv, j
}

// get returns the status and body of GET path with the Authorization
// header auth ("" for none).
func get(t *testing.T, srv *httptest.Server, path, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestToken: every path answers 401 without the token or with a wrong
// one and 200 with it; the page alone also takes it as ?token=.
func TestToken(t *testing.T) {
	srv, j := running(t)
	paths := []string{"/", "/index.html", "/metrics", "/overview", "/jobs/overview", "/jobs/" + j.ID(),
		"/jobs/" + j.ID() + "/checkpoints", "/taskmanagers"}
	for _, p := range paths {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", token} {
			if code, _ := get(t, srv, p, auth); code != http.StatusUnauthorized {
				t.Errorf("GET %s with %q: %d, want 401", p, auth, code)
			}
		}
		if code, body := get(t, srv, p, "Bearer "+token); code != http.StatusOK {
			t.Errorf("GET %s with the token: %d %s", p, code, body)
		}
	}
	if code, body := get(t, srv, "/?token="+token, ""); code != http.StatusOK || body != string(page) {
		t.Errorf("GET /?token=: %d, the page: %v", code, body == string(page))
	}
	for _, p := range []string{"/?token=wrong", "/metrics?token=" + token, "/overview?token=" + token} {
		if code, _ := get(t, srv, p, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s: %d, want 401", p, code)
		}
	}
}

// scrape returns the sum of family name over the series whose task_name
// is vertex ("" for all).
func scrape(t *testing.T, srv *httptest.Server, name, vertex string) float64 {
	t.Helper()
	code, body := get(t, srv, "/metrics", "Bearer "+token)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%v in\n%s", err, body)
	}
	var s float64
	for _, m := range fams[name].GetMetric() {
		if vertex != "" && !hasLabel(m, "task_name", vertex) {
			continue
		}
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// rises scrapes name until it exceeds its first value.
func rises(t *testing.T, srv *httptest.Server, name, vertex string) {
	t.Helper()
	first := scrape(t, srv, name, vertex)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if now := scrape(t, srv, name, vertex); now > first {
			return
		}
	}
	t.Errorf("%s of %q stayed at %v for 10s", name, vertex, first)
}

// TestMetricsRise: while the job runs, numRecordsIn of each vertex and
// numberOfCompletedCheckpoints rise between two scrapes.
func TestMetricsRise(t *testing.T) {
	srv, j := running(t)
	for deadline := time.Now().Add(10 * time.Second); len(j.Overview().Vertices) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job has no vertices after 10s")
		}
	}
	for _, v := range j.Overview().Vertices {
		name := "flink_taskmanager_job_task_numRecordsIn"
		if len(v.Operators) > 0 && v.Operators[0].Name == "FromSeq" {
			name = "flink_taskmanager_job_task_numRecordsOut" // a source reads no records
		}
		rises(t, srv, name, v.Name)
	}
	rises(t, srv, "flink_jobmanager_job_numberOfCompletedCheckpoints", "")
}
