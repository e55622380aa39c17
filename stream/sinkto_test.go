package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// txnStore is an external store with transactions, as a two-phase sink
// sees one (a Kafka broker's): what a transaction holds is invisible until
// it commits, and committing a transaction twice changes nothing. Its
// committed records are the oracle of the tests: exactly once means each
// input record committed once.
type txnStore struct {
	mu        sync.Mutex
	seq       int
	open      map[string][]string // transaction id -> records
	committed map[string]bool
	records   []string // committed, in commit order
	commits   int      // commits that published a transaction
	recommits int      // commits of a transaction committed before
	// retry and failKnown make the committer ask for a retry on a
	// transaction's first n tries, or drop a transaction
	retry     int
	failKnown map[string]bool
	events    []string // what the writers and committers were asked, in order
}

func newTxnStore() *txnStore {
	return &txnStore{open: map[string][]string{}, committed: map[string]bool{}, failKnown: map[string]bool{}}
}

func (s *txnStore) log(format string, args ...any) {
	s.mu.Lock()
	s.events = append(s.events, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *txnStore) begin(subtask int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := fmt.Sprintf("txn-%d-%d", subtask, s.seq)
	s.open[id] = nil
	return id
}

func (s *txnStore) committedRecords() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

func (s *txnStore) takeEvents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.events
	s.events = nil
	return e
}

// txnSink is the two-phase sink of a txnStore: a writer writes into a
// transaction and, on a barrier, prepares it as its committable (the
// transaction's id) and begins the next; its state is the count of
// records it wrote, so a restored writer continues the count.
type txnSink struct{ s *txnStore }

func (k txnSink) CreateWriter(ctx sink.InitContext) (sink.CommittingWriter[string, string], error) {
	w := &txnWriter{s: k.s, subtask: ctx.Subtask}
	for _, b := range ctx.States {
		n, err := strconv.Atoi(string(b))
		if err != nil {
			return nil, err
		}
		w.count += n
	}
	k.s.log("open %d/%d restored=%v states=%d count=%d", ctx.Subtask, ctx.Parallelism, ctx.Restored, len(ctx.States), w.count)
	return w, nil
}

func (k txnSink) CreateCommitter(sink.InitContext) (sink.Committer[string], error) {
	return txnCommitter{k.s}, nil
}

func (k txnSink) CommittableSerializer() sink.Serializer[string] { return stringSerializer{} }

type stringSerializer struct{}

func (stringSerializer) Marshal(c string) ([]byte, error) { return []byte(c), nil }
func (stringSerializer) Unmarshal(b []byte) (string, error) {
	if !strings.HasPrefix(string(b), "txn-") {
		return "", fmt.Errorf("not a transaction: %q", b)
	}
	return string(b), nil
}

type txnWriter struct {
	s       *txnStore
	subtask int
	txn     string
	count   int
	ctxs    []sink.Context
}

func (w *txnWriter) Write(v string, ctx sink.Context) error {
	if w.txn == "" {
		w.txn = w.s.begin(w.subtask)
	}
	w.s.mu.Lock()
	w.s.open[w.txn] = append(w.s.open[w.txn], v)
	w.s.mu.Unlock()
	w.count++
	w.ctxs = append(w.ctxs, ctx)
	return nil
}

func (w *txnWriter) Flush(end bool) error {
	w.s.log("flush %d end=%v", w.subtask, end)
	return nil
}

func (w *txnWriter) PrepareCommit(id int64) ([]string, error) {
	w.s.log("prepare %d checkpoint=%d", w.subtask, id)
	if w.txn == "" {
		return nil, nil
	}
	txn := w.txn
	w.txn = ""
	return []string{txn}, nil
}

func (w *txnWriter) SnapshotState(id int64) ([][]byte, error) {
	return [][]byte{[]byte(strconv.Itoa(w.count))}, nil
}

func (w *txnWriter) WriteWatermark(wm int64) error {
	w.s.log("watermark %d %d", w.subtask, wm)
	return nil
}

func (w *txnWriter) NotifyCheckpointComplete(id int64) error {
	w.s.log("complete %d %d", w.subtask, id)
	return nil
}

func (w *txnWriter) NotifyCheckpointAborted(id int64) error {
	w.s.log("aborted %d %d", w.subtask, id)
	return nil
}

// Close abandons the open transaction: it stays invisible.
func (w *txnWriter) Close() error { return nil }

type txnCommitter struct{ s *txnStore }

func (c txnCommitter) Commit(reqs []sink.CommitRequest[string]) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, r := range reqs {
		id := r.Committable()
		c.s.events = append(c.s.events, "commit "+id)
		switch {
		case c.s.failKnown[id]:
			r.SignalFailedWithKnownReason(errors.New("fenced"))
		case r.NumberOfRetries() < c.s.retry:
			r.RetryLater()
		case c.s.committed[id]:
			c.s.recommits++
			r.SignalAlreadyCommitted()
		default:
			recs, ok := c.s.open[id]
			if !ok {
				r.SignalFailedWithUnknownReason(fmt.Errorf("transaction %s is gone", id))
				continue
			}
			delete(c.s.open, id)
			c.s.committed[id] = true
			c.s.records = append(c.s.records, recs...)
			c.s.commits++
		}
	}
	return nil
}

func (c txnCommitter) Close() error { return nil }

// txnOp is the operator of subtask i of p of a txnSink, opened from snap
// when not nil, with final gathering the end of input.
func txnOp(t *testing.T, s *txnStore, final *op.SinkCommit[string], i, p int, snap []byte, retries int) (*op.SinkWriter[string, string], *task.Runtime) {
	t.Helper()
	cfg := task.Config{}
	if snap != nil {
		cfg.Restore = &protocol.TaskRestore{Operators: []protocol.OperatorRestore{{ID: "sink", States: [][]byte{snap}}}}
	}
	rt := task.New(nil, cfg, i, p, nil)
	spec := op.TwoPhaseSpec[string, string](txnSink{s}, SinkWriterState, SinkCommittables)
	spec.Retries = retries
	o := op.NewSinkWriter(spec, final)
	rt.AddOperator(o, "sink", "Sink")
	if err := rt.Open(); err != nil {
		t.Fatal(err)
	}
	return o, rt
}

func pushTS(t *testing.T, o *op.SinkWriter[string, string], ts int64, vs ...string) {
	t.Helper()
	b := make([]Record[string], len(vs))
	for i, v := range vs {
		b[i] = Record[string]{Value: v, Timestamp: ts}
	}
	if err := o.Push(b); err != nil {
		t.Fatal(err)
	}
}

func snapOp(t *testing.T, o *op.SinkWriter[string, string], id int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := o.Snapshot(id, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSinkWriterPreparesOnBarrier ports SinkWriterOperatorTest's
// testEmitOnFlushWithCommitter and CommitterOperatorTest's
// testEmitCommittables: on a barrier the writer flushes, then prepares its
// committables; nothing is visible before the checkpoint completes, and
// its completion commits exactly that checkpoint's records, then tells the
// writer.
func TestSinkWriterPreparesOnBarrier(t *testing.T) {
	s := newTxnStore()
	o, _ := txnOp(t, s, nil, 0, 1, nil, 0)
	pushTS(t, o, 5, "a", "b")
	s.takeEvents()
	snapOp(t, o, 1)
	if e := s.takeEvents(); !slices.Equal(e, []string{"flush 0 end=false", "prepare 0 checkpoint=1"}) {
		t.Fatalf("on the barrier: %q", e)
	}
	pushTS(t, o, 6, "c")
	if got := s.committedRecords(); len(got) != 0 {
		t.Fatalf("committed %v before the checkpoint completed", got)
	}
	if err := o.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if got := s.committedRecords(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("committed %v after checkpoint 1, want a, b", got)
	}
	if e := s.takeEvents(); !slices.Equal(e, []string{"commit txn-0-1", "complete 0 1"}) {
		t.Fatalf("on completion: %q", e)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCommitterCommitsUpToCompletedCheckpoint: committables of checkpoints
// 1 and 2 wait; the completion of 1 commits 1's only; an aborted
// checkpoint's committables are committed with the next completed one
// (Flink's CommittableCollector commits every checkpoint up to the one
// completed); the writer hears of the abort.
func TestCommitterCommitsUpToCompletedCheckpoint(t *testing.T) {
	s := newTxnStore()
	o, rt := txnOp(t, s, nil, 0, 1, nil, 0)
	pushTS(t, o, 1, "a")
	snapOp(t, o, 1)
	pushTS(t, o, 2, "b")
	snapOp(t, o, 2)
	pushTS(t, o, 3, "c")
	snapOp(t, o, 3)
	pushTS(t, o, 4, "d")
	if err := rt.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if got := s.committedRecords(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after 1: %v", got)
	}
	s.takeEvents()
	if err := rt.NotifyCheckpointAborted(2); err != nil {
		t.Fatal(err)
	}
	if e := s.takeEvents(); !slices.Equal(e, []string{"aborted 0 2"}) {
		t.Fatalf("on the abort: %q", e)
	}
	if got := s.committedRecords(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after the abort of 2: %v", got)
	}
	if err := rt.NotifyCheckpointComplete(3); err != nil {
		t.Fatal(err)
	}
	if got := s.committedRecords(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after 3: %v", got)
	}
	// a late notification commits nothing twice
	if err := rt.NotifyCheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	if s.commits != 3 || s.recommits != 0 {
		t.Fatalf("%d commits, %d of them again; want 3, 0", s.commits, s.recommits)
	}
}

// TestCommitterStateRestore ports CommitterOperatorTest.testStateRestore
// and SinkWriterOperatorTest.testStateRestore: two subtasks snapshot at
// checkpoint 1 with committables whose completion never reached them, and
// then write on; restored at parallelism 1 and 3 the committables are
// committed at once, on open, each by the subtask that takes it over; the
// writers get the writer states (split: each old state to one new
// subtask); what the failed run wrote after the snapshot stays invisible.
// A second restore from the same snapshot commits again (the job fell
// back to it), which the idempotent committer turns into no change.
func TestCommitterStateRestore(t *testing.T) {
	for _, p := range []int{1, 3} {
		s := newTxnStore()
		var snaps [][]byte
		var want []string
		for i := range 2 {
			o, _ := txnOp(t, s, nil, i, 2, nil, 0)
			recs := words(fmt.Sprint("s", i, "-"), 2+i)
			want = append(want, recs...)
			pushTS(t, o, 0, recs...)
			snaps = append(snaps, snapOp(t, o, 1))
			pushTS(t, o, 0, "lost")
		}
		parts, err := state.RepartitionOperatorState(snaps, p)
		if err != nil {
			t.Fatal(err)
		}
		s.takeEvents()
		for round := range 2 {
			for i := range p {
				o, _ := txnOp(t, s, nil, i, p, parts[i], 0)
				if err := o.Close(); err != nil {
					t.Fatal(err)
				}
			}
			got := s.committedRecords()
			slices.Sort(got)
			if !slices.Equal(got, sortedCat(want)) {
				t.Fatalf("p=%d round %d: committed %v, want %v", p, round, got, sortedCat(want))
			}
		}
		if s.commits != 2 || s.recommits != 2 {
			t.Fatalf("p=%d: %d commits, %d again; want 2 and 2", p, s.commits, s.recommits)
		}
		var counts []string
		for _, e := range s.takeEvents() {
			if strings.HasPrefix(e, "open") {
				counts = append(counts, e[strings.Index(e, "states="):])
			}
		}
		// the states of two subtasks (counts 2 and 3: "lost" is after the
		// snapshot), each dealt to one of p subtasks, in each round
		slices.Sort(counts)
		wantCounts := map[int][]string{
			1: {"states=2 count=5", "states=2 count=5"},
			3: {"states=0 count=0", "states=0 count=0", "states=1 count=2", "states=1 count=2", "states=1 count=3", "states=1 count=3"},
		}[p]
		if !slices.Equal(counts, wantCounts) {
			t.Fatalf("p=%d: writers opened with %q, want %q", p, counts, wantCounts)
		}
	}
}

// TestCommitterNumberOfRetries ports CommitterOperatorTest.testNumberOfRetries:
// a committer that asks to retry once fails the commit when no retry is
// allowed, and commits when one is; a known failure drops the committable
// and the job goes on; an unknown one fails it.
func TestCommitterNumberOfRetries(t *testing.T) {
	for _, retries := range []int{0, 1} {
		s := newTxnStore()
		s.retry = 1
		o, _ := txnOp(t, s, nil, 0, 1, nil, retries)
		pushTS(t, o, 0, "a")
		snapOp(t, o, 1)
		err := o.NotifyCheckpointComplete(1)
		if retries == 0 {
			if err == nil || !strings.Contains(err.Error(), "failed to commit 1 committables after 0 retries") {
				t.Fatalf("retries 0: %v", err)
			}
			continue
		}
		if err != nil || !slices.Equal(s.committedRecords(), []string{"a"}) {
			t.Fatalf("retries 1: %v, committed %v", err, s.committedRecords())
		}
	}

	s := newTxnStore()
	o, _ := txnOp(t, s, nil, 0, 1, nil, 3)
	pushTS(t, o, 0, "a")
	snapOp(t, o, 1)
	s.failKnown["txn-0-1"] = true
	pushTS(t, o, 0, "b")
	snapOp(t, o, 2)
	if err := o.NotifyCheckpointComplete(2); err != nil {
		t.Fatalf("a known failure failed the commit: %v", err)
	}
	if got := s.committedRecords(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("committed %v, want b alone", got)
	}
	pushTS(t, o, 0, "c")
	snapOp(t, o, 3)
	s.mu.Lock()
	delete(s.open, "txn-0-3")
	s.mu.Unlock()
	if err := o.NotifyCheckpointComplete(3); err == nil || !strings.Contains(err.Error(), "transaction txn-0-3 is gone") {
		t.Fatalf("an unknown failure: %v", err)
	}
}

// TestSinkEndOfInput ports testHandleEndInputInStreamingMode and
// testEmitCommittablesBatch: at the end of input each writer flushes with
// endOfInput and prepares its last committables (EndOfInput); without
// checkpoints the last subtask to finish commits every subtask's, those
// of checkpoints not complete included; with checkpoints nothing is
// committed and the job takes them for its final snapshot. A notification
// after the end commits nothing again.
func TestSinkEndOfInput(t *testing.T) {
	for _, checkpointing := range []bool{false, true} {
		s := newTxnStore()
		final := &op.SinkCommit[string]{}
		final.Reset(2, checkpointing)
		o0, _ := txnOp(t, s, final, 0, 2, nil, 0)
		o1, _ := txnOp(t, s, final, 1, 2, nil, 0)
		pushTS(t, o0, 0, "a")
		snapOp(t, o0, 1) // never completes
		pushTS(t, o0, 0, "b")
		pushTS(t, o1, 0, "c")
		s.takeEvents()
		if err := o0.EndInput(); err != nil {
			t.Fatal(err)
		}
		if e := s.takeEvents(); !slices.Equal(e, []string{"flush 0 end=true", fmt.Sprint("prepare 0 checkpoint=", sink.EndOfInput)}) {
			t.Fatalf("at the end of input: %q", e)
		}
		if got := s.committedRecords(); len(got) != 0 {
			t.Fatalf("committed %v before every subtask finished", got)
		}
		if err := o1.EndInput(); err != nil {
			t.Fatal(err)
		}
		got := s.committedRecords()
		slices.Sort(got)
		taken := final.TakeFinal()
		if checkpointing {
			slices.Sort(taken)
			if len(got) != 0 || !slices.Equal(taken, []string{"txn-0-1", "txn-0-2", "txn-1-3"}) {
				t.Fatalf("checkpointing: committed %v, final %v", got, taken)
			}
			continue
		}
		if !slices.Equal(got, []string{"a", "b", "c"}) || taken != nil {
			t.Fatalf("committed %v (final %v), want a, b, c", got, taken)
		}
		if err := o0.NotifyCheckpointComplete(1); err != nil || s.commits != 3 {
			t.Fatalf("a notification after the end: %v, %d commits", err, s.commits)
		}
	}
}

// TestSinkWriterContext ports testWatermarkPropagatedToSinkWriter and the
// context of testTimeBasedBufferingSinkWriter: Write gets each record's
// timestamp and the watermark before it; WriteWatermark each watermark.
func TestSinkWriterContext(t *testing.T) {
	s := newTxnStore()
	var w *txnWriter
	spec := op.TwoPhaseSpec[string, string](txnSink{s}, SinkWriterState, SinkCommittables)
	inner := spec.NewWriter
	spec.NewWriter = func(ctx sink.InitContext) (sink.Writer[string], error) {
		x, err := inner(ctx)
		w, _ = x.(*txnWriter)
		return x, err
	}
	rt := task.New(nil, task.Config{}, 0, 1, nil)
	o := op.NewSinkWriter(spec, nil)
	rt.AddOperator(o, "sink", "Sink")
	if err := rt.Open(); err != nil {
		t.Fatal(err)
	}
	if err := o.Push([]Record[string]{{Value: "a", Timestamp: watermark.Min}, {Value: "b", Timestamp: 7}}); err != nil {
		t.Fatal(err)
	}
	s.takeEvents()
	if err := rt.ForwardWatermark(10); err != nil {
		t.Fatal(err)
	}
	pushTS(t, o, 12, "c")
	want := []sink.Context{{Timestamp: sink.NoTimestamp, Watermark: watermark.Min}, {Timestamp: 7, Watermark: watermark.Min}, {Timestamp: 12, Watermark: 10}}
	if !slices.Equal(w.ctxs, want) || w.ctxs[0].HasTimestamp() || !w.ctxs[1].HasTimestamp() {
		t.Fatalf("contexts %+v, want %+v", w.ctxs, want)
	}
	if e := s.takeEvents(); !slices.Equal(e, []string{"watermark 0 10"}) {
		t.Fatalf("watermarks: %q", e)
	}
}

// plainSink is a sink without commits whose writers append to a shared
// log on Flush (a buffering writer, as Flink's
// testTimeBasedBufferingSinkWriter's), with the records buffered as state.
type plainSink struct {
	mu      sync.Mutex
	flushed []string
	flushes int
}

func (p *plainSink) CreateWriter(ctx sink.InitContext) (sink.Writer[string], error) {
	w := &plainWriter{p: p}
	for _, b := range ctx.States {
		w.buf = append(w.buf, strings.Split(string(b), ",")...)
	}
	return w, nil
}

type plainWriter struct {
	p   *plainSink
	buf []string
}

func (w *plainWriter) Write(v string, _ sink.Context) error { w.buf = append(w.buf, v); return nil }
func (w *plainWriter) Close() error                         { return nil }
func (w *plainWriter) Flush(end bool) error {
	w.p.mu.Lock()
	w.p.flushed = append(w.p.flushed, w.buf...)
	w.p.flushes++
	w.p.mu.Unlock()
	w.buf = w.buf[:0]
	return nil
}

// TestSinkWithoutCommitter ports testNotEmitCommittablesWithoutCommitter:
// a plain sink's writer is flushed on the barrier and at the end of
// input; its subtask snapshot holds no committables; a job writes
// every record through it.
func TestSinkWithoutCommitter(t *testing.T) {
	p := &plainSink{}
	rt := task.New(nil, task.Config{}, 0, 1, nil)
	o := op.NewSinkWriter(op.WriterSpec[string](p), nil)
	rt.AddOperator(o, "sink", "SinkWriter")
	if err := rt.Open(); err != nil {
		t.Fatal(err)
	}
	if err := o.Push([]Record[string]{{Value: "a"}, {Value: "b"}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := o.Snapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.flushed, []string{"a", "b"}) {
		t.Fatalf("flushed %v on the barrier", p.flushed)
	}
	secs, err := state.DescribeSnapshot(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secs.Sections {
		if sec.Name == SinkCommittables && sec.Entries != 0 {
			t.Fatalf("a sink without committer snapshotted %d committables", sec.Entries)
		}
	}

	env := New(Options{Parallelism: 2})
	q := &plainSink{}
	in := words("w", 50)
	SinkToWriter(FromSlice(env, in), q).SetParallelism(2)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(q.flushed)
	if !slices.Equal(q.flushed, sortedCat(in)) || q.flushes != 2 {
		t.Fatalf("the job flushed %d times: %v", q.flushes, q.flushed)
	}
}

// TestTwoPhaseSinkExactlyOnce: a job writes n records through a txnSink
// while two checkpoints complete; a task fails twice after the second
// (whose completion may or may not have reached the sink), and the job
// restarts from it each time, so its committables are committed again.
// The store's committed records are each input record exactly once: the
// transactions of the failed attempts after their last checkpoint stay
// invisible, and those a restore commits again are not published twice.
func TestTwoPhaseSinkExactlyOnce(t *testing.T) {
	const n = 300
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			s := newTxnStore()
			src := newGated(ints(n))
			env := New(Options{Parallelism: p, Clock: manual(), Restart: FixedDelayRestart(3, 0)})
			env.EnableCheckpointing(time.Hour).Storage = checkpoint.NewMemory(1)
			// the first failure comes at the 130th record processed, after
			// the second checkpoint (120 records before it); the second at
			// a subtask's 40th record of the restarted attempt
			var fails, builds atomic.Int32
			var seen atomic.Int64
			ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
			ds = Map(ds, func(v int) int { return v }).Rebalance()
			lines := Process(ds, func() ProcessFunction[int, string] {
				attempt, mine := (builds.Add(1)-1)/int32(p), 0
				return ProcessFunction[int, string]{ProcessElement: func(v int, _ *Context, out Collector[string]) error {
					mine++
					n := seen.Add(1)
					if attempt == 0 && n == 130 && fails.CompareAndSwap(0, 1) || attempt == 1 && mine == 40 && fails.CompareAndSwap(1, 2) {
						return errors.New("injected failure")
					}
					out.Collect(strconv.Itoa(v))
					return nil
				}}
			}).UID("lines")
			SinkTo(lines, txnSink{s}).UID("txn")
			jobs := make(chan *Job, 1)
			env.opts.Started = func(j *Job) { jobs <- j }
			done := make(chan error, 1)
			go func() {
				_, err := env.Execute(context.Background())
				done <- err
			}()
			j := <-jobs
			for k := range 2 {
				src.release(60)
				waitUntil(t, "the records before a checkpoint", func() bool { return seen.Load() == int64(60*(k+1)) })
				if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			src.open()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if fails.Load() != 2 {
				t.Fatalf("%d failures injected, want 2", fails.Load())
			}
			got := s.committedRecords()
			slices.Sort(got)
			want := make([]string, n)
			for i := range want {
				want[i] = strconv.Itoa(i)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("committed %d records, want each of the %d once", len(got), n)
			}
			if h := j.Checkpoints(); h.Restarts != 2 {
				t.Fatalf("%d restarts, want 2", h.Restarts)
			}
			// the second restore, if not the first, committed checkpoint 2's
			// transactions again
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.recommits == 0 {
				t.Fatal("no transaction committed again: the restores committed nothing they held")
			}
		})
	}
}

// TestTwoPhaseSinkFinishedJobRestored: a bounded job under checkpoints
// ends; its final snapshot holds the last committables, which the job
// committed. Run again from that snapshot, the job finds itself finished
// and commits them again, which publishes nothing twice.
func TestTwoPhaseSinkFinishedJobRestored(t *testing.T) {
	s := newTxnStore()
	store := checkpoint.NewMemory(1)
	in := words("r", 40)
	run := func() {
		env := New(Options{Parallelism: 2, Clock: manual()})
		env.EnableCheckpointing(time.Hour).Storage = store
		SinkTo(FromSlice(env, in), txnSink{s}).UID("txn")
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run()
	got := s.committedRecords()
	slices.Sort(got)
	if !slices.Equal(got, sortedCat(in)) {
		t.Fatalf("committed %v", got)
	}
	if snap, _, _ := store.Latest(); snap == nil || !snap.Finished {
		t.Fatalf("latest snapshot %+v, want the finished one", snap)
	}
	commits := s.commits
	run()
	if got := s.committedRecords(); len(got) != len(in) || s.commits != commits || s.recommits != commits {
		t.Fatalf("run again: %d records, %d commits (%d before), %d again", len(got), s.commits, commits, s.recommits)
	}
}

// TestSinkToNil: a nil sink is a build error naming the caller.
func TestSinkToNil(t *testing.T) {
	env := New(Options{})
	SinkTo[string, sink.Committable](FromSlice(env, []string{"a"}), (*sink.FileSink[string])(nil))
	SinkToWriter[string](FromSlice(env, []string{"a"}), nil)
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "SinkTo: nil sink") || !strings.Contains(err.Error(), "SinkToWriter: nil sink") ||
		!strings.Contains(err.Error(), "sinkto_test.go") {
		t.Fatalf("err = %v", err)
	}
}

// countSink is a sink without commits whose writers count records and sum
// their timestamps, allocating nothing; batch makes its writers
// BatchWriters.
type countSink struct{ batch bool }

type countWriter struct{ n, ts int64 }

func (w *countWriter) Write(_ int64, ctx sink.Context) error {
	w.n++
	w.ts += ctx.Timestamp
	return nil
}
func (w *countWriter) Flush(bool) error { return nil }
func (w *countWriter) Close() error     { return nil }

type countBatchWriter struct{ countWriter }

func (w *countBatchWriter) WriteBatch(vals []int64) error {
	for _, v := range vals {
		w.n++
		w.ts += v
	}
	return nil
}

func (c countSink) CreateWriter(sink.InitContext) (sink.Writer[int64], error) {
	if c.batch {
		return &countBatchWriter{}, nil
	}
	return &countWriter{}, nil
}

func openCountOp(tb testing.TB, batch bool) *op.SinkWriter[int64, struct{}] {
	rt := task.New(nil, task.Config{}, 0, 1, nil)
	o := op.NewSinkWriter(op.WriterSpec[int64](countSink{batch}), nil)
	rt.AddOperator(o, "sink", "SinkWriter")
	if err := rt.Open(); err != nil {
		tb.Fatal(err)
	}
	return o
}

// TestSinkWriterAllocs: pushing a batch through the sink operator, record
// by record or as a batch, allocates nothing; every record arrives.
func TestSinkWriterAllocs(t *testing.T) {
	b := make([]Record[int64], 1024)
	for i := range b {
		b[i] = Record[int64]{Value: int64(i), Timestamp: int64(i)}
	}
	for _, batch := range []bool{false, true} {
		o := openCountOp(t, batch)
		if err := o.Push(b); err != nil { // the batch path's buffer grows once
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() {
			if err := o.Push(b); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("batch=%v: %v allocations per batch", batch, a)
		}
	}
}

func BenchmarkSinkWriterPush(b *testing.B) {
	recs := make([]Record[int64], 1024)
	for i := range recs {
		recs[i] = Record[int64]{Value: int64(i), Timestamp: int64(i)}
	}
	for _, batch := range []bool{false, true} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			o := openCountOp(b, batch)
			b.ReportAllocs()
			for b.Loop() {
				if err := o.Push(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}
