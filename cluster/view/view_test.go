package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/rest/resttest"
	"github.com/weirdata/weir/metrics/prometheus"
	"github.com/weirdata/weir/stream"
)

// finished runs n records through a keyed sum at parallelism 2 with a
// checkpoint every few milliseconds, and returns the ended job and its
// plan.
func finished(t *testing.T, n int) (*stream.Job, *stream.Plan) {
	t.Helper()
	env := stream.New(stream.Options{Parallelism: 2, SourceRate: 4000})
	env.EnableCheckpointing(20 * time.Millisecond)
	src := stream.FromSeq(env, func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
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
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	return j, plan
}

// source is a resttest.Fake with reports.
type source struct {
	*resttest.Fake
	reports  map[string][]cluster.AttemptReport
	restarts int
}

func (s *source) Reports(ctx context.Context, jid string) ([]cluster.AttemptReport, int, error) {
	if _, err := s.Fake.Job(ctx, jid); err != nil {
		return nil, 0, err
	}
	return s.reports[jid], s.restarts, nil
}

// TestCluster: a job's answers carry the latest report's vertex metrics
// (records summed over the subtasks, against what the source wrote) and
// plan under the JobManager's vertex ids, and the checkpoints of every
// attempt newest first; a report that does not decode is skipped; the
// Source's errors come through.
func TestCluster(t *testing.T) {
	const n = 800
	j1, plan := finished(t, n)
	j2, _ := finished(t, n)
	r1, r2 := Encode(j1, plan), Encode(j2, plan)
	if r1 == nil || r2 == nil {
		t.Fatal("a report did not encode")
	}
	const jid = "0123456789abcdef0123456789abcdef"
	var vs []rest.Vertex
	for i, task := range plan.Tasks {
		vs = append(vs, rest.Vertex{ID: fmt.Sprintf("v%d", i), Name: task.Name, Parallelism: task.Parallelism})
	}
	fake := &resttest.Fake{JobsValue: []rest.JobDetails{{JobOverview: rest.JobOverview{ID: jid, Name: "sums", State: rest.StateRunning}, Vertices: vs}},
		CheckpointsValue: map[string]rest.Checkpoints{jid: {Counts: rest.CheckpointCounts{Completed: 3, Total: 3}}}}
	src := &source{Fake: fake, restarts: 1, reports: map[string][]cluster.AttemptReport{
		jid: {{Attempt: "1-1", Data: r1}, {Attempt: "1-2", Data: []byte("{not json")}, {Attempt: "1-3", Data: r2}}}}
	c := Cluster{src}
	ctx := context.Background()
	d, err := c.Job(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Vertices) != len(plan.Tasks) || len(d.Vertices) < 2 {
		t.Fatalf("%d vertices for %d tasks", len(d.Vertices), len(plan.Tasks))
	}
	if m := d.Vertices[0].Metrics; m == nil || m.WriteRecords != n {
		t.Errorf("source metrics %+v, want %d records written", m, n)
	}
	if m := d.Vertices[len(d.Vertices)-1].Metrics; m == nil || m.ReadRecords != n {
		t.Errorf("sum metrics %+v, want %d records read", m, n)
	}
	if d.Plan == nil || len(d.Plan.Nodes) != len(vs) || d.Plan.Nodes[1].ID != "v1" || len(d.Plan.Nodes[1].Inputs) != 1 ||
		d.Plan.Nodes[1].Inputs[0].ID != "v0" || d.Plan.Nodes[1].Inputs[0].ShipStrategy != "HASH" {
		t.Errorf("plan %+v", d.Plan)
	}
	if m, want := d.Memory, j2.Overview().Memory; m == nil || m.Budget != want.Budget || m.Budget <= 0 || m.Peak != want.Peak {
		t.Errorf("memory %+v, want the second attempt's %+v", m, want)
	}
	cp, err := c.Checkpoints(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := j1.Checkpoints(), j2.Checkpoints()
	if len(h1.Completed) == 0 || len(h2.Completed) == 0 {
		t.Fatalf("the jobs completed %d and %d checkpoints: make them longer", len(h1.Completed), len(h2.Completed))
	}
	if want := len(h1.Completed) + len(h2.Completed); len(cp.History) != want {
		t.Fatalf("history of %d checkpoints, want %d", len(cp.History), want)
	}
	last := h2.Completed[len(h2.Completed)-1]
	if cp.History[0].ID != last.ID || cp.History[0].ExternalPath != last.Path || cp.History[len(cp.History)-1].ID != h1.Completed[0].ID {
		t.Errorf("history %+v: want the second attempt's newest first and the first attempt's oldest last", cp.History)
	}
	if cp.Counts.Completed != 3 {
		t.Errorf("counts %+v: want the Source's", cp.Counts)
	}
	if _, err := c.Job(ctx, "nope"); !errors.Is(err, rest.ErrNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	fake.Standby = true
	if _, err := c.Checkpoints(ctx, jid); !errors.Is(err, rest.ErrNotLeader) {
		t.Errorf("standby: %v", err)
	}
}

// TestJobs: an Exporter listing a Source's jobs exposes the running ones
// only, under the job's id and name, with the Source's restarts, the
// checkpoints of all attempts and the latest attempt's records.
func TestJobs(t *testing.T) {
	const n = 600
	j, plan := finished(t, n)
	r := Encode(j, plan)
	const run, done = "000000000000000000000000000000aa", "000000000000000000000000000000bb"
	fake := &resttest.Fake{JobsValue: []rest.JobDetails{
		{JobOverview: rest.JobOverview{ID: run, Name: "sums", State: rest.StateRunning, Start: time.Now().UnixMilli()}},
		{JobOverview: rest.JobOverview{ID: done, Name: "old", State: rest.StateFinished}}}}
	src := &source{Fake: fake, restarts: 2, reports: map[string][]cluster.AttemptReport{
		run: {{Attempt: "1-1", Data: r}, {Attempt: "1-2", Data: r}}, done: {{Attempt: "1-1", Data: r}}}}
	exp := prometheus.New(nil)
	exp.List(func() []prometheus.Listed { return Jobs(context.Background(), src) })
	srv := httptest.NewServer(exp.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if strings.Contains(body, done) {
		t.Errorf("the finished job is exposed:\n%s", body)
	}
	want := []string{
		fmt.Sprintf(`flink_jobmanager_job_numRestarts{job_id="%s",job_name="sums"} 2`, run),
		fmt.Sprintf(`flink_jobmanager_job_numberOfCompletedCheckpoints{job_id="%s",job_name="sums"} %d`, run, 2*len(j.Checkpoints().Completed)),
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("no line %s in\n%s", w, body)
		}
	}
	var in int64
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "flink_taskmanager_job_task_numRecordsIn{") && strings.Contains(l, `task_name="sum`) {
			var v int64
			fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v)
			in += v
		}
	}
	if in != n {
		t.Errorf("the sum vertex read %d records over its subtasks, want %d", in, n)
	}
}
