package prometheus

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/weirdata/weir/stream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape returns what the Exporter serves, parsed.
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%v in\n%s", err, body)
	}
	return fams
}

// sum adds the values of family name over the series whose labels have
// the values want.
func sum(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	f, ok := fams[name]
	if !ok {
		return 0, 0
	}
	var s float64
	n := 0
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		n++
		switch {
		case m.Counter != nil:
			s += m.Counter.GetValue()
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		case m.Summary != nil:
			s += float64(m.Summary.GetSampleCount())
		}
	}
	return s, n
}

// TestJobMetrics runs a job of n records through a rich map at
// parallelism 3 that counts, meters and histograms every record, and
// scrapes it after its end: per operator and over the subtasks the
// records in and out, the user counter and the histogram's count are n
// (the closed form), with a series per subtask; the job's series carry
// its id and name.
func TestJobMetrics(t *testing.T) {
	const n, p = 3000, 3
	env := stream.New(stream.Options{Parallelism: p})
	src := stream.FromSlice(env, make([]int, n))
	mapped := stream.RichMap(src, func() stream.RichMapFunction[int, int] {
		var seen func()
		return stream.RichMapFunction[int, int]{
			Open: func(rc *stream.RuntimeContext) error {
				g := rc.MetricGroup().AddGroup("my group")
				c := g.Counter("seen")
				h := g.Histogram("size", 0)
				seen = func() { c.Inc(); h.Update(7) }
				return nil
			},
			Map: func(v int) (int, error) { seen(); return v + 1, nil },
		}
	}).Name("counting")
	stream.Discard(mapped)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	e := New(nil)
	e.Add("counter job", j)
	fams := scrape(t, e)
	job := map[string]string{"job_id": j.ID(), "job_name": "counter job"}
	op := map[string]string{"job_id": j.ID(), "operator_name": "counting"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
		series int
	}{
		{operatorScope + "numRecordsIn", op, n, p},
		{operatorScope + "numRecordsOut", op, n, p},
		{operatorScope + "my_group_seen", op, n, p},
		{operatorScope + "my_group_size", op, n, p},
		{jobScope + "uptime", job, -1, 1},
		{jobScope + "numberOfCompletedCheckpoints", job, 0, 1},
		{jobScope + "numRestarts", job, 0, 1},
	} {
		got, series := sum(fams, c.name, c.labels)
		if got != c.want || series != c.series {
			t.Errorf("%s: %v over %d series, want %v over %d", c.name, got, series, c.want, c.series)
		}
	}
	if f := fams[operatorScope+"my_group_size"]; f == nil || f.GetType() != dto.MetricType_SUMMARY {
		t.Errorf("the histogram is not a summary: %v", f)
	} else {
		for _, m := range f.Metric {
			for _, q := range m.Summary.Quantile {
				if q.GetValue() != 7 {
					t.Errorf("quantile %v of a histogram of 7s: %v", q.GetQuantile(), q.GetValue())
				}
			}
		}
	}
	e.Remove(j.ID())
	if fams := scrape(t, e); len(fams) != 0 {
		t.Errorf("a removed job still has %d families", len(fams))
	}
}

// fakeJob is a Job whose values a test sets.
type fakeJob struct {
	status stream.Status
	ov     stream.Overview
	h      stream.CheckpointHistory
}

func (f *fakeJob) ID() string                            { return "00000000000000000000000000000abc" }
func (f *fakeJob) Status() stream.Status                 { return f.status }
func (f *fakeJob) Overview() stream.Overview             { return f.ov }
func (f *fakeJob) Checkpoints() stream.CheckpointHistory { return f.h }

// TestRunningJob: a running job's uptime counts from Add on the
// Exporter's clock, its last checkpoint's figures are Flink's
// lastCheckpoint gauges in milliseconds and bytes, and the busy, idle and
// backpressured milliseconds per second are those of the span between two
// scrapes (the first from the subtask's start), with the watermark and its
// lag behind the overview's instant.
func TestRunningJob(t *testing.T) {
	now := time.Unix(1000, 0)
	e := New(func() time.Time { return now })
	f := &fakeJob{status: stream.Running}
	f.h.Completed = []stream.CheckpointStats{{ID: 1, Duration: 40 * time.Millisecond, Size: 10, FullSize: 10},
		{ID: 2, Duration: 250 * time.Millisecond, Size: 300, FullSize: 900, Alignment: 3 * time.Millisecond}}
	f.h.Restarts, f.h.Failed = 2, 3
	in := int64(600)
	sub := func(wall, busy, idle, bp time.Duration) stream.SubtaskMetrics {
		return stream.SubtaskMetrics{Subtask: 1, Wall: wall, Busy: busy, Idle: idle, Backpressured: bp, Watermark: 4_000, OutWatermark: 3_500,
			RecordsIn: in, RecordsOut: in / 2}
	}
	f.ov = stream.Overview{At: time.UnixMilli(9_000), Memory: stream.MemoryOverview{Budget: 64 << 20, Used: 3 << 20, Peak: 5 << 20}, Vertices: []stream.VertexOverview{{Name: "Window",
		Subtasks: []stream.SubtaskMetrics{sub(2*time.Second, time.Second, 500*time.Millisecond, 500*time.Millisecond)}}}}
	e.Add("j", f)
	now = now.Add(90 * time.Second)
	fams := scrape(t, e)
	task := map[string]string{"task_name": "Window", "subtask_index": "1"}
	check := func(name string, labels map[string]string, want float64) {
		t.Helper()
		if got, n := sum(fams, name, labels); got != want || n != 1 {
			t.Errorf("%s: %v over %d series, want %v", name, got, n, want)
		}
	}
	check(jobScope+"uptime", nil, 90_000)
	check(jobScope+"numRestarts", nil, 2)
	check(jobScope+"numberOfCompletedCheckpoints", nil, 2)
	check(jobScope+"numberOfFailedCheckpoints", nil, 3)
	check(memoryScope+"Total", nil, 64<<20)
	check(memoryScope+"Used", nil, 3<<20)
	check(jobScope+"lastCheckpointDuration", nil, 250)
	check(jobScope+"lastCheckpointSize", nil, 300)
	check(jobScope+"lastCheckpointFullSize", nil, 900)
	check(jobScope+"lastCheckpointAlignmentDuration", nil, 3)
	check(taskScope+"busyTimeMsPerSecond", task, 500)
	check(taskScope+"idleTimeMsPerSecond", task, 250)
	check(taskScope+"backPressuredTimeMsPerSecond", task, 250)
	check(taskScope+"currentInputWatermark", task, 4_000)
	check(taskScope+"watermarkLag", task, 5_000)
	check(taskScope+"currentOutputWatermark", task, 3_500)
	check(taskScope+"numRecordsInPerSecond", task, 300)
	check(taskScope+"numRecordsOutPerSecond", task, 150)

	// one more second, all of it busy, 1000 records more
	in += 1000
	f.ov.Vertices[0].Subtasks[0] = sub(3*time.Second, 2*time.Second, 500*time.Millisecond, 500*time.Millisecond)
	fams = scrape(t, e)
	check(taskScope+"busyTimeMsPerSecond", task, 1000)
	check(taskScope+"idleTimeMsPerSecond", task, 0)
	check(taskScope+"numRecordsInPerSecond", task, 1000)
	check(taskScope+"numRecordsOutPerSecond", task, 500)

	// a restart: the subtask's totals start again, and the span with them
	in = 200
	f.ov.Vertices[0].Subtasks[0] = sub(time.Second, time.Second, 0, 0)
	fams = scrape(t, e)
	check(taskScope+"busyTimeMsPerSecond", task, 1000)
	check(taskScope+"numRecordsInPerSecond", task, 200)
}

// TestSanitize: names keep Prometheus' characters and lose the others.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"a_b:c9": "a_b:c9", "my group.x-y": "my_group_x_y", "9lives": "_lives", "é": "__"} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
