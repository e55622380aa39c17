package local

import (
	"context"
	"errors"
	"iter"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/stream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// start builds source -> keyBy sum -> discard at parallelism p over seq,
// with checkpoints every interval when positive and the source throttled
// to rate when positive, and starts it under a Cluster.
func start(t *testing.T, seq iter.Seq[int], p int, interval time.Duration, rate float64) (*Cluster, *stream.Job) {
	t.Helper()
	env := stream.New(stream.Options{Parallelism: p, SourceRate: rate})
	if interval > 0 {
		env.EnableCheckpointing(interval)
	}
	src := stream.FromSeq(env, seq)
	keyed := stream.KeyBy(src, func(v int) int { return v % 7 })
	stream.Discard(stream.Sum(keyed, func(v int) int { return v }, func(v *int, s int) { *v = s }).Name("sum"))
	plan, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Slots: p, Stopped: func(jid, path string) { stopped <- jid + " " + path }})
	c.Add("test job", j, plan)
	t.Cleanup(func() {
		j.Cancel()
		<-j.Done()
		c.Close()
	})
	return c, j
}

// stopped receives "<jid> <path>" of each stop through a Cluster.
var stopped = make(chan string, 1)

func count(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

func forever(yield func(int) bool) {
	for i := 0; ; i++ {
		if !yield(i) {
			return
		}
	}
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("no %s in 10s", what)
}

// TestFinishedJob: a source of n records (parallelism 1) into a keyed
// sum at parallelism 2 ends FINISHED;
// every vertex after the source read n records (the closed form), every
// vertex is FINISHED, the plan names each vertex by its id and the
// partitioned edge is the downstream vertex's HASH input.
func TestFinishedJob(t *testing.T) {
	const n = 5000
	ctx := context.Background()
	c, j := start(t, count(n), 2, 0, 0)
	<-j.Done()
	waitFor(t, "end time", func() bool {
		d, err := c.Job(ctx, j.ID())
		return err == nil && d.End >= 0
	})
	d, err := c.Job(ctx, j.ID())
	if err != nil {
		t.Fatal(err)
	}
	if d.State != rest.StateFinished || d.Name != "test job" || d.IsStoppable {
		t.Fatalf("job %+v, want FINISHED, not stoppable", d.JobOverview)
	}
	if len(d.Vertices) < 2 {
		t.Fatalf("%d vertices, want source and a keyed vertex", len(d.Vertices))
	}
	for i, v := range d.Vertices {
		if !hex32.MatchString(v.ID) || v.Status != rest.StateFinished || v.Parallelism != min(i+1, 2) || v.Metrics == nil {
			t.Fatalf("vertex %d: %+v", i, v)
		}
		if i > 0 && v.Metrics.ReadRecords != n {
			t.Errorf("vertex %s read %d records, want %d", v.Name, v.Metrics.ReadRecords, n)
		}
	}
	if out := d.Vertices[0].Metrics.WriteRecords; out != n {
		t.Errorf("the source wrote %d records, want %d", out, n)
	}
	if d.Plan == nil || len(d.Plan.Nodes) != len(d.Vertices) {
		t.Fatalf("plan %+v for %d vertices", d.Plan, len(d.Vertices))
	}
	in := d.Plan.Nodes[1].Inputs
	if len(in) != 1 || in[0].ID != d.Vertices[0].ID || in[0].ShipStrategy != "HASH" {
		t.Errorf("inputs of the keyed vertex %+v, want the source's id %s by HASH", in, d.Vertices[0].ID)
	}
	o, err := c.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o.JobsFinished != 1 || o.JobsRunning != 0 || o.TaskManagers != 1 || o.SlotsTotal != 2 || o.SlotsAvailable != 2 {
		t.Errorf("overview %+v", o)
	}
	if err := c.Cancel(ctx, j.ID()); !errors.Is(err, rest.ErrConflict) {
		t.Errorf("cancel of a finished job: %v, want ErrConflict", err)
	}
}

// TestCancel: a running job is RUNNING with its slots taken, Cancel makes
// it CANCELED, and the requests the process does not take are refused.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	c, j := start(t, forever, 1, 0, 1000)
	waitFor(t, "running job", func() bool { return j.Status() == stream.Running })
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].State != rest.StateRunning || jobs[0].End != -1 {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	if o, _ := c.Overview(ctx); o.JobsRunning != 1 || o.SlotsAvailable != 0 {
		t.Errorf("overview of a running job %+v", o)
	}
	if _, err := c.Submit(ctx, rest.Submission{Args: []string{"x"}}); !errors.Is(err, rest.ErrInvalid) {
		t.Errorf("submit: %v, want ErrInvalid", err)
	}
	if _, err := c.Job(ctx, "0123456789abcdef0123456789abcdef"); !errors.Is(err, rest.ErrNotFound) {
		t.Errorf("unknown job: %v, want ErrNotFound", err)
	}
	if _, err := c.TriggerSavepoint(ctx, j.ID(), t.TempDir(), true); !errors.Is(err, rest.ErrConflict) {
		t.Errorf("stop of a job without checkpoints: %v, want ErrConflict", err)
	}
	if l, err := c.Leader(ctx); l != "" || err != nil {
		t.Errorf("leader %q, %v", l, err)
	}
	if err := c.Cancel(ctx, j.ID()); err != nil {
		t.Fatal(err)
	}
	<-j.Done()
	waitFor(t, "CANCELED", func() bool {
		d, err := c.Job(ctx, j.ID())
		return err == nil && d.State == rest.StateCanceled && d.End >= d.Start
	})
}

// TestStopWithSavepoint: a job that checkpoints every 20 ms shows its
// completed checkpoints (counts, latest, history newest first with their
// sizes); a stop returns a trigger id whose savepoint completes with a
// location, and the job ends FINISHED with the savepoint as the latest.
func TestStopWithSavepoint(t *testing.T) {
	ctx := context.Background()
	c, j := start(t, forever, 2, 20*time.Millisecond, 2000)
	var ck rest.Checkpoints
	waitFor(t, "2 checkpoints", func() bool {
		var err error
		ck, err = c.Checkpoints(ctx, j.ID())
		return err == nil && ck.Counts.Completed >= 2
	})
	h := ck.History
	if len(h) != ck.Counts.Completed || h[0].ID <= h[1].ID || ck.Latest.Completed == nil || ck.Latest.Completed.ID != h[0].ID {
		t.Fatalf("history %+v, latest %+v", h, ck.Latest.Completed)
	}
	if h[0].StateSize <= 0 || h[0].LatestAckTimestamp != h[0].TriggerTimestamp+h[0].EndToEndDuration {
		t.Errorf("checkpoint %+v", h[0])
	}
	if d, _ := c.Job(ctx, j.ID()); !d.IsStoppable {
		t.Errorf("a running job that checkpoints is not stoppable")
	}
	if _, err := c.TriggerSavepoint(ctx, j.ID(), "", true); !errors.Is(err, rest.ErrInvalid) {
		t.Errorf("stop without a directory: %v, want ErrInvalid", err)
	}
	id, err := c.TriggerSavepoint(ctx, j.ID(), t.TempDir(), true)
	if err != nil || !hex32.MatchString(id) {
		t.Fatalf("trigger %q, %v", id, err)
	}
	var sp rest.Savepoint
	waitFor(t, "the savepoint", func() bool {
		sp, err = c.Savepoint(ctx, j.ID(), id)
		return err == nil && sp.Status == rest.StatusCompleted
	})
	if sp.Location == "" || sp.Failure != "" {
		t.Fatalf("savepoint %+v", sp)
	}
	if got := <-stopped; got != j.ID()+" "+sp.Location {
		t.Errorf("Stopped heard %q, want the job's id and %s", got, sp.Location)
	}
	<-j.Done()
	waitFor(t, "FINISHED", func() bool {
		d, err := c.Job(ctx, j.ID())
		return err == nil && d.State == rest.StateFinished
	})
	ck, _ = c.Checkpoints(ctx, j.ID())
	if ck.Latest.Savepoint == nil || ck.Latest.Savepoint.ExternalPath != sp.Location {
		t.Errorf("latest savepoint %+v, want %s", ck.Latest.Savepoint, sp.Location)
	}
	if _, err := c.Savepoint(ctx, j.ID(), "0123456789abcdef0123456789abcdef"); !errors.Is(err, rest.ErrNotFound) {
		t.Errorf("unknown trigger: %v", err)
	}
}

// TestExceptions: a job whose map fails at one record, restarted once by
// its strategy and failing again, answers both failures newest first,
// the root exception being the last, and FAILED; a finished job has none.
func TestExceptions(t *testing.T) {
	ctx := context.Background()
	env := stream.New(stream.Options{Parallelism: 1, Restart: stream.FixedDelayRestart(1, 0)})
	src := stream.FromSeq(env, count(100))
	stream.Discard(stream.RichMap(src, func() stream.RichMapFunction[int, int] {
		return stream.RichMapFunction[int, int]{Map: func(v int) (int, error) {
			if v == 50 {
				return 0, errors.New("bad record 50")
			}
			return v, nil
		}}
	}))
	j, err := env.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Slots: 1, Memory: 64 << 20})
	c.Add("failing", j, nil)
	defer c.Close()
	<-j.Done()
	ex, err := c.Exceptions(ctx, j.ID())
	if err != nil {
		t.Fatal(err)
	}
	es := ex.History.Entries
	if len(es) != 2 || es[0].Name != "attempt 2 failed" || es[1].Name != "attempt 1 failed" || ex.Truncated {
		t.Fatalf("exceptions %+v, want attempts 2 and 1", ex)
	}
	for _, e := range es {
		if !strings.Contains(e.Stacktrace, "bad record 50") || e.Timestamp <= 0 {
			t.Errorf("exception %+v", e)
		}
	}
	if ex.RootException != es[0].Stacktrace || ex.Timestamp != es[0].Timestamp {
		t.Errorf("root exception %q at %d, want the newest", ex.RootException, ex.Timestamp)
	}
	tms, _ := c.TaskManagers(ctx)
	if len(tms) != 1 || tms[0].Hardware.ManagedMemory != 64<<20 || tms[0].Hardware.CPUCores < 1 {
		t.Errorf("taskmanagers %+v", tms)
	}
	c2, j2 := start(t, count(10), 1, 0, 0)
	<-j2.Done()
	if ex, err := c2.Exceptions(ctx, j2.ID()); err != nil || len(ex.History.Entries) != 0 || ex.RootException != "" {
		t.Errorf("a finished job's exceptions %+v, %v", ex, err)
	}
	if _, err := c2.Exceptions(ctx, "nope"); !errors.Is(err, rest.ErrNotFound) {
		t.Errorf("unknown job: %v", err)
	}
}
