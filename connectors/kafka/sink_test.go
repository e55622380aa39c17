package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/watermark"
)

// pipe adds the test's job to env: the bounded topic "in" read by src,
// each value through fail (which may fail the attempt), written by snk.
func pipe(env *stream.Env, src *Source[string], snk *Sink[string], fail func(v string) error) {
	ds := stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka-in").UID("in")
	ds = stream.Process(ds, func() stream.ProcessFunction[string, string] {
		return stream.ProcessFunction[string, string]{ProcessElement: func(v string, _ *stream.Context, out stream.Collector[string]) error {
			if err := fail(v); err != nil {
				return err
			}
			out.Collect("out-" + v)
			return nil
		}}
	}).UID("map")
	stream.SinkTo(ds, snk).UID("kafka-out")
}

func prefixed(vs []string, p string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = p + v
	}
	return out
}

// TestSinkExactlyOnceFailure: a job from a 4-partition topic into another,
// exactly once, checkpointing every 30 ms, fails mid-input (once, and
// again in the restarted attempt) and is restarted by its restart
// strategy from its latest checkpoint: a read_committed consumer sees
// every expected record once.
func TestSinkExactlyOnceFailure(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("parallelism=", p), func(t *testing.T) {
			cfg := cluster(t, 4, "in", "out")
			in := produceSpread(t, cfg, "in", "r", 4, 1200)
			src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 8})
			snk, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: ExactlyOnce, TransactionalIDPrefix: "job"}, ValueBytes())
			if err != nil {
				t.Fatal(err)
			}
			var failures atomic.Int32
			var count atomic.Int64
			env := stream.New(stream.Options{Parallelism: p, SourceRate: 3000, Restart: stream.FixedDelayRestart(5, 10*time.Millisecond),
				OnAttemptFailure: func(stream.AttemptFailure) { failures.Add(1) }})
			env.EnableCheckpointing(30 * time.Millisecond)
			pipe(env, src, snk, func(string) error {
				// the first attempt fails after 500 records, the second
				// after 400 more
				if n := count.Add(1); (n == 500 && failures.Load() == 0) || (n == 900 && failures.Load() == 1) {
					return errors.New("injected failure")
				}
				return nil
			})
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if failures.Load() != 2 {
				t.Fatalf("%d failed attempts, want 2", failures.Load())
			}
			if err := sameSet(readCommitted(t, cfg, "out"), prefixed(in, "out-")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSinkExactlyOnceRestore: a job checkpointing into a directory is
// cancelled mid-input; a new job (as the same command run again) restores
// from the directory's latest checkpoint and finishes: a read_committed
// consumer sees every expected record once.
func TestSinkExactlyOnceRestore(t *testing.T) {
	cfg := cluster(t, 4, "in", "out")
	in := produceSpread(t, cfg, "in", "r", 4, 1000)
	dir := t.TempDir()
	run := func(stopAfter int64) {
		src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 8})
		snk, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: ExactlyOnce, TransactionalIDPrefix: "job"}, ValueBytes())
		if err != nil {
			t.Fatal(err)
		}
		store, err := checkpoint.OpenDir(dir, checkpoint.DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		env := stream.New(stream.Options{Parallelism: 2, SourceRate: 4000, Restart: stream.NoRestart()})
		env.EnableCheckpointing(30 * time.Millisecond).Storage = store
		var count atomic.Int64
		pipe(env, src, snk, func(string) error { count.Add(1); return nil })
		j, err := env.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if stopAfter > 0 {
			waitFor(t, "records and a checkpoint", func() bool {
				return count.Load() >= stopAfter && len(j.Checkpoints().Completed) > 0
			})
			j.Cancel()
			j.Wait()
			return
		}
		if _, err := j.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	run(400)
	run(0)
	if err := sameSet(readCommitted(t, cfg, "out"), prefixed(in, "out-")); err != nil {
		t.Fatal(err)
	}
}

// TestSinkAtLeastOnceFailure: the job of TestSinkExactlyOnceFailure at
// least once: the topic holds every expected record, some perhaps twice,
// and nothing else.
func TestSinkAtLeastOnceFailure(t *testing.T) {
	cfg := cluster(t, 4, "in", "out")
	in := produceSpread(t, cfg, "in", "r", 4, 1000)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 8})
	snk, err := NewSink(cfg, SinkOptions{Topic: "out"}, ValueBytes())
	if err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int32
	var count atomic.Int64
	env := stream.New(stream.Options{Parallelism: 2, SourceRate: 4000, Restart: stream.FixedDelayRestart(3, 10*time.Millisecond),
		OnAttemptFailure: func(stream.AttemptFailure) { failures.Add(1) }})
	env.EnableCheckpointing(30 * time.Millisecond)
	pipe(env, src, snk, func(string) error {
		if count.Add(1) == 600 && failures.Load() == 0 {
			return errors.New("injected failure")
		}
		return nil
	})
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if failures.Load() != 1 {
		t.Fatalf("%d failed attempts, want 1", failures.Load())
	}
	got := readCommitted(t, cfg, "out")
	want := map[string]bool{}
	for _, v := range prefixed(in, "out-") {
		want[v] = true
	}
	have := map[string]bool{}
	for _, v := range got {
		if !want[v] {
			t.Fatalf("unexpected record %q", v)
		}
		have[v] = true
	}
	if len(have) != len(want) {
		t.Fatalf("%d distinct records of %d", len(have), len(want))
	}
}

// commitAll commits cs as the runtime does, failing on any outcome but a
// commit.
func commitAll(t *testing.T, s *Sink[string], cs []Committable) []error {
	t.Helper()
	c, err := s.CreateCommitter(sink.InitContext{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reqs := make([]*request, len(cs))
	view := make([]sink.CommitRequest[Committable], len(cs))
	for i := range cs {
		reqs[i] = &request{c: cs[i]}
		view[i] = reqs[i]
	}
	if err := c.Commit(view); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(cs))
	for i, r := range reqs {
		errs[i] = r.err
	}
	return errs
}

// request is a sink.CommitRequest that keeps its outcome.
type request struct {
	c   Committable
	err error
}

func (r *request) Committable() Committable                { return r.c }
func (r *request) NumberOfRetries() int                    { return 0 }
func (r *request) SignalFailedWithKnownReason(err error)   { r.err = err }
func (r *request) SignalFailedWithUnknownReason(err error) { r.err = err }
func (r *request) RetryLater()                             { r.err = errors.New("retry") }
func (r *request) UpdateAndRetryLater(c Committable)       { r.c, r.err = c, errors.New("retry") }
func (r *request) SignalAlreadyCommitted()                 {}

func write(t *testing.T, w sink.CommittingWriter[string, Committable], vs ...string) {
	t.Helper()
	for _, v := range vs {
		if err := w.Write(v, sink.Context{Timestamp: sink.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSinkLingeringTransaction: a writer prepares transaction 1 on a
// checkpoint (its state says the next is 2), then writes into transaction
// 2 and dies without closing it. The restored writer aborts transaction 2
// and fences its producer: the zombie's commit fails; the checkpoint's
// transaction commits (twice, as a restore may commit it again), and
// what the restored writer commits afterwards is visible behind it.
func TestSinkLingeringTransaction(t *testing.T) {
	cfg := cluster(t, 2, "out")
	s, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: ExactlyOnce, TransactionalIDPrefix: "p"}, ValueBytes())
	if err != nil {
		t.Fatal(err)
	}
	ctx0 := sink.InitContext{Subtask: 0, Parallelism: 1, Checkpointing: true}
	w, err := s.CreateWriter(ctx0)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, "a1", "a2", "a3")
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	cs, err := w.PrepareCommit(1)
	if err != nil || len(cs) != 1 || cs[0].TransactionalID != "p-0-1" {
		t.Fatalf("prepared %v, %v; want transaction p-0-1", cs, err)
	}
	states, err := w.(sink.StatefulWriter).SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, "lost1", "lost2")
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	zombie := w.(*writer[string]).cl // transaction p-0-2, left open

	restored := ctx0
	restored.Restored, restored.States = true, states
	w2, err := s.CreateWriter(restored)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := zombie.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the zombie producer committed its transaction after the restore")
	}
	zombie.Close()
	for _, err := range commitAll(t, s, append(cs, cs...)) {
		if err != nil {
			t.Fatalf("commit of the checkpoint's transaction: %v", err)
		}
	}
	write(t, w2, "b1", "b2")
	cs2, err := w2.PrepareCommit(2)
	if err != nil || len(cs2) != 1 || cs2[0].TransactionalID != "p-0-2" {
		t.Fatalf("restored writer prepared %v, %v; want p-0-2 again", cs2, err)
	}
	if errs := commitAll(t, s, cs2); errs[0] != nil {
		t.Fatal(errs[0])
	}
	// the old producer of p-0-2 is fenced: its transaction cannot commit
	if errs := commitAll(t, s, []Committable{{TransactionalID: "p-0-2", ProducerID: cs2[0].ProducerID, Epoch: cs2[0].Epoch - 1}}); errs[0] == nil ||
		!errors.Is(errs[0], ErrFenced) {
		t.Fatalf("commit with a fenced epoch: %v", errs[0])
	}
	if err := sameSet(readCommitted(t, cfg, "out"), []string{"a1", "a2", "a3", "b1", "b2"}); err != nil {
		t.Fatal(err)
	}
}

// blackhole accepts connections and never answers.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := (&netListen{}).listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ln.close)
	return ln.addr
}

// TestUnreachableBroker: a broker that accepts connections and never
// answers is a clear error within the configured timeout, for the
// source's job and for the sink's writer.
func TestUnreachableBroker(t *testing.T) {
	cfg := Config{Brokers: []string{blackhole(t)}, Timeout: 300 * time.Millisecond}
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true})
	env := stream.New(stream.Options{Parallelism: 1})
	stream.Collect(stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka"))
	start := time.Now()
	_, err := env.Execute(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), cfg.Brokers[0]) || !strings.Contains(err.Error(), "300ms") {
		t.Fatalf("source: error %v, want ErrUnreachable naming the broker and the timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("source: the error came after %v", d)
	}
	for _, d := range []Delivery{AtLeastOnce, ExactlyOnce} {
		s, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: d, TransactionalIDPrefix: "p"}, ValueBytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateWriter(sink.InitContext{Parallelism: 1}); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("%v sink: error %v, want ErrUnreachable", d, err)
		}
	}
}

// TestSinkPastEventTime: records whose event time (their Kafka timestamp)
// lies years in the past are written, exactly once and at least once,
// with those timestamps.
func TestSinkPastEventTime(t *testing.T) {
	for _, d := range []Delivery{AtLeastOnce, ExactlyOnce} {
		t.Run(d.String(), func(t *testing.T) {
			cfg := cluster(t, 2, "in", "out")
			in := produceSpread(t, cfg, "in", "r", 2, 200)
			src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true})
			snk, err := NewSink(cfg, SinkOptions{Topic: "out", Delivery: d, TransactionalIDPrefix: "past"}, ValueBytes())
			if err != nil {
				t.Fatal(err)
			}
			const past = 1_000_000_000_000 // 2001-09-09
			env := stream.New(stream.Options{Parallelism: 2})
			env.EnableCheckpointing(30 * time.Millisecond)
			strategy := watermark.ForBoundedOutOfOrderness[string](0).WithTimestampAssigner(func(string, int64) int64 { return past })
			stream.SinkTo(stream.FromSource(env, src, strategy, "kafka-in").UID("in"), snk).UID("kafka-out")
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := sameSet(readCommitted(t, cfg, "out"), in); err != nil {
				t.Fatal(err)
			}
			cl := client(t, cfg, kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				if !r.Attrs.IsControl() && r.Timestamp.UnixMilli() != past {
					t.Fatalf("record timestamp %d, want %d", r.Timestamp.UnixMilli(), past)
				}
			})
		})
	}
}
