package flow

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds; it fails the test after ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// drainInts reads input 0 of tc until it ends or fails, returning the error (nil
// at the end of the input).
func drainInts(tc *TaskContext) error {
	r := Input[int64](tc, 0)
	for {
		if _, err := r.Next(tc.Context()); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestJobLifecycle: Start returns a running job whose live metrics show the
// records delivered while the source still runs; after the source ends the
// job is finished, Wait returns the same metrics any number of times, and
// Metrics equals the Result.
func TestJobLifecycle(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	const n = 3000
	release := make(chan struct{})
	g := NewGraph()
	src := g.Vertex("src", 2, func(tc *TaskContext) error {
		out := Output[int64](tc, 0)
		for i := int64(0); i < n/2; i++ {
			if err := out.Emit(&i); err != nil {
				return err
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
		tc.Metrics.AddSpilled(7)
		tc.Metrics.ObservePeakMemory(int64(100 + tc.Subtask))
		<-release
		return nil
	})
	sink := g.Vertex("sink", 3, drainInts)
	Connect(g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	jb, err := Start(bg, g, env.options(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if s := jb.Status(); s != Running {
		t.Fatalf("status %v after Start, want RUNNING", s)
	}
	var live []VertexMetrics
	waitFor(t, "all records delivered and the sources' metrics reported", func() bool {
		live = jb.Metrics()
		return live[1].Total().RecordsIn == n && live[0].Total().Spilled == 14
	})
	if p0, p1 := live[0].Subtasks[0].PeakMemory, live[0].Subtasks[1].PeakMemory; p0 != 100 || p1 != 101 {
		t.Errorf("live peak memory %d and %d, want 100 and 101", p0, p1)
	}
	if live[0].Name != "src" || live[1].Name != "sink" || len(live[0].Subtasks) != 2 || len(live[1].Subtasks) != 3 {
		t.Fatalf("live metrics have the wrong shape: %+v", live)
	}
	if got := live[0].Total().RecordsOut; got != n {
		t.Errorf("live: sources sent %d records, want %d", got, n)
	}
	for _, s := range live[0].Subtasks {
		if s.Wall <= 0 {
			t.Errorf("live: running subtask %d has wall %v", s.Subtask, s.Wall)
		}
	}
	select {
	case <-jb.Done():
		t.Fatal("job ended while its sources were held")
	default:
	}
	if s := jb.Status(); s != Running {
		t.Fatalf("status %v while sources run, want RUNNING", s)
	}
	close(release)
	res, err := jb.Wait()
	if err != nil {
		t.Fatal(err)
	}
	<-jb.Done()
	if s := jb.Status(); s != Finished {
		t.Fatalf("status %v, want FINISHED", s)
	}
	if got := res.Vertices[1].Total().RecordsIn; got != n {
		t.Errorf("sink read %d records, want %d", got, n)
	}
	res2, err2 := jb.Wait()
	if res2 != res || err2 != nil {
		t.Error("a second Wait returned something else")
	}
	final := jb.Metrics()
	for vi := range final {
		for i, s := range final[vi].Subtasks {
			if s != res.Vertices[vi].Subtasks[i] {
				t.Errorf("Metrics after the end %+v, Result %+v", s, res.Vertices[vi].Subtasks[i])
			}
		}
	}
	if live[0].Subtasks[0].Wall > final[0].Subtasks[0].Wall {
		t.Errorf("live wall %v exceeds the final wall %v", live[0].Subtasks[0].Wall, final[0].Subtasks[0].Wall)
	}
	env.check(t)
}

// endless is a streaming source: it emits until the job is cancelled.
func endless(tc *TaskContext) error {
	out := Output[int64](tc, 0)
	for i := int64(0); ; i++ {
		if err := out.Emit(&i); err != nil {
			return err
		}
	}
}

// TestJobCancel: a streaming job runs until Cancel; Wait then returns the
// cancellation, every goroutine ended and nothing is left behind. Bodies that
// return nil once cancelled leave the job canceled too.
func TestJobCancel(t *testing.T) {
	for _, c := range []struct {
		name string
		sink func(tc *TaskContext) error
	}{
		{"sink fails", drainInts},
		{"sink returns nil", func(tc *TaskContext) error {
			r := Input[int64](tc, 0)
			for {
				if _, err := r.Next(tc.Context()); err != nil {
					return nil
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			g := NewGraph()
			src := g.Vertex("src", 2, endless)
			sink := g.Vertex("sink", 2, c.sink)
			Connect(g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
			jb, err := Start(bg, g, env.options(Options{Streaming: true}))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "records flowing", func() bool { return jb.Metrics()[1].Total().RecordsIn > 10000 })
			jb.Cancel()
			jb.Cancel()
			var werr error
			within(t, 10*time.Second, func() { _, werr = jb.Wait() })
			if !errors.Is(werr, context.Canceled) || !strings.HasPrefix(werr.Error(), "flow: job canceled") {
				t.Fatalf("Wait returned %v, want the job canceled", werr)
			}
			if s := jb.Status(); s != Canceled {
				t.Fatalf("status %v, want CANCELED", s)
			}
			jb.Cancel() // after the end: nothing
			if s := jb.Status(); s != Canceled {
				t.Fatalf("status %v after a late Cancel", s)
			}
			env.check(t)
		})
	}
}

// TestJobCallerContext: the end of Start's context cancels the job.
func TestJobCallerContext(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	g := NewGraph()
	src := g.Vertex("src", 1, endless)
	sink := g.Vertex("sink", 1, drainInts)
	Connect(g, src, sink, Partitioner[int64]{Strategy: Forward}, Pipelined, nil)
	jb, err := Start(ctx, g, Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "records flowing", func() bool { return jb.Metrics()[1].Total().RecordsIn > 0 })
	cancel()
	if _, err := jb.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait returned %v, want context.Canceled", err)
	}
	if s := jb.Status(); s != Canceled {
		t.Fatalf("status %v, want CANCELED", s)
	}
}

// TestJobFailed: a failing body fails the job; Cancel after the end changes
// nothing.
func TestJobFailed(t *testing.T) {
	boom := errors.New("boom")
	g := NewGraph()
	src := g.Vertex("src", 2, endless)
	bad := g.Vertex("bad", 2, func(tc *TaskContext) error {
		r := Input[int64](tc, 0)
		if _, err := r.Next(tc.Context()); err != nil {
			return err
		}
		return boom
	})
	Connect(g, src, bad, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	jb, err := Start(bg, g, Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = jb.Wait()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `vertex "bad"`) {
		t.Fatalf("Wait returned %v, want boom naming the vertex", err)
	}
	jb.Cancel()
	if s := jb.Status(); s != Failed {
		t.Fatalf("status %v, want FAILED", s)
	}
	if _, err2 := jb.Wait(); err2 != err {
		t.Errorf("a second Wait returned %v", err2)
	}
}

// TestJobConcurrentUse: Status, Metrics, Done, Wait and Cancel from many
// goroutines at once (run with -race).
func TestJobConcurrentUse(t *testing.T) {
	g := NewGraph()
	src := g.Vertex("src", 2, endless)
	sink := g.Vertex("sink", 2, drainInts)
	Connect(g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	jb, err := Start(bg, g, Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for k := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !jb.Status().Ended() {
				_ = jb.Metrics()
				if k == 0 && jb.Metrics()[1].Total().RecordsIn > 1000 {
					jb.Cancel()
				}
				select {
				case <-jb.Done():
				case <-time.After(time.Millisecond):
				}
			}
			_, errs[k] = jb.Wait()
		}()
	}
	within(t, 10*time.Second, wg.Wait)
	for _, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait returned %v, want context.Canceled", err)
		}
	}
}

// TestStatusString: the names Flink gives job states.
func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{
		Created: "CREATED", Running: "RUNNING", Finished: "FINISHED", Failed: "FAILED", Canceled: "CANCELED", 9: "Status(9)",
	} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", s, got, want)
		}
	}
	var zero Job
	if zero.Status() != Created || zero.Status().Ended() || !Canceled.Ended() || Running.Ended() {
		t.Error("Ended or the zero Job's status is wrong")
	}
	zero.Cancel()
	if _, err := zero.Wait(); err == nil || zero.Metrics() != nil || zero.Status() != Created {
		t.Errorf("the zero Job: Wait %v, Metrics %v, status %v", err, zero.Metrics(), zero.Status())
	}
}
