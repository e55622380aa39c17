package op

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// SinkSpec is a sink as its operator runs it: a sink.Sink (Committer nil)
// or a sink.TwoPhaseSink, with the names of its operator states.
type SinkSpec[T, C any] struct {
	// NewWriter opens a subtask's writer; with a committer it is a
	// sink.CommittingWriter[T, C].
	NewWriter func(ctx sink.InitContext) (sink.Writer[T], error)
	// NewCommitter opens a committer; nil for a sink without commits.
	NewCommitter func(ctx sink.InitContext) (sink.Committer[C], error)
	Serializer   sink.Serializer[C]
	// WriterState and CommittableState name the operator states of the
	// writer states and of the committables not committed yet.
	WriterState, CommittableState string
	// Union makes the writer state union state (sink.UnionState).
	Union bool
	// Retries is how often a committable is retried (sink.CommitRetries).
	Retries int
}

// The operator states of a sink subtask that names none of its own.
const (
	// SinkWriterState names the list state of a sink writer's states.
	SinkWriterState = "SinkWriterState"
	// SinkCommittables names the list state of the committables prepared
	// at checkpoints whose commit had not happened when the subtask was
	// snapshotted (Flink's committer state); a restore commits them.
	SinkCommittables = "SinkCommittables"
)

// TwoPhaseSpec returns the spec of a two-phase sink.
func TwoPhaseSpec[T, C any](s sink.TwoPhaseSink[T, C], writerState, committableState string) SinkSpec[T, C] {
	u, _ := s.(sink.UnionState)
	return SinkSpec[T, C]{
		NewWriter: func(ctx sink.InitContext) (sink.Writer[T], error) {
			w, err := s.CreateWriter(ctx)
			if err != nil || w == nil {
				return nil, errors.Join(err, errNilWriter(w == nil && err == nil))
			}
			return w, nil
		},
		NewCommitter:     s.CreateCommitter,
		Serializer:       s.CommittableSerializer(),
		WriterState:      writerState,
		CommittableState: committableState,
		Union:            u != nil && u.UnionWriterState(),
		Retries:          sink.DefaultCommitRetries,
	}
}

// WriterSpec returns the spec of a sink without commits.
func WriterSpec[T any](s sink.Sink[T]) SinkSpec[T, struct{}] {
	u, _ := s.(sink.UnionState)
	return SinkSpec[T, struct{}]{NewWriter: s.CreateWriter, WriterState: SinkWriterState, CommittableState: SinkCommittables,
		Union: u != nil && u.UnionWriterState()}
}

func errNilWriter(nilWriter bool) error {
	if nilWriter {
		return errors.New("stream: the sink created a nil writer")
	}
	return nil
}

// SinkCommit gathers what the subtasks of a two-phase sink prepared at
// the end of a bounded input, so that it is committed once every subtask
// finished: by the last subtask to finish, or, under checkpoints, by the
// job once its final snapshot holds it.
type SinkCommit[C any] struct {
	mu            sync.Mutex
	left          int // subtasks not finished
	checkpointing bool
	pending       []C
	final         []C
}

// Reset prepares the commit of an attempt of p subtasks.
func (c *SinkCommit[C]) Reset(p int, checkpointing bool) {
	c.mu.Lock()
	c.left, c.pending, c.final, c.checkpointing = p, nil, nil, checkpointing
	c.mu.Unlock()
}

// TakeFinal returns what the subtasks of a checkpointing job handed over
// at the end of input, and forgets it.
func (c *SinkCommit[C]) TakeFinal() []C {
	c.mu.Lock()
	defer c.mu.Unlock()
	final := c.final
	c.final = nil
	return final
}

// hand adds a finished subtask's committables and returns every
// subtask's when this was the last one of a job without checkpoints.
func (c *SinkCommit[C]) hand(cs []C) []C {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, cs...)
	c.left--
	if c.left > 0 {
		return nil
	}
	all := c.pending
	c.pending = nil
	if c.checkpointing { // the job commits them once its final snapshot holds them
		c.final, all = all, nil
	}
	return all
}

// commitRequest is a committable under commit (Flink's CommitRequestImpl).
type commitRequest[C any] struct {
	c       C
	retries int
	state   commitState
	err     error
}

type commitState uint8

const (
	requestReceived commitState = iota
	requestCommitted
	requestRetry
	requestFailedKnown
	requestFailedUnknown
)

func (r *commitRequest[C]) Committable() C       { return r.c }
func (r *commitRequest[C]) NumberOfRetries() int { return r.retries }
func (r *commitRequest[C]) SignalFailedWithKnownReason(err error) {
	r.state, r.err = requestFailedKnown, err
}
func (r *commitRequest[C]) SignalFailedWithUnknownReason(err error) {
	r.state, r.err = requestFailedUnknown, err
}
func (r *commitRequest[C]) RetryLater()             { r.state = requestRetry; r.retries++ }
func (r *commitRequest[C]) UpdateAndRetryLater(c C) { r.c = c; r.RetryLater() }
func (r *commitRequest[C]) SignalAlreadyCommitted() { r.state = requestCommitted }

// CommitAll commits cs with committer as Flink's
// CheckpointCommittableManagerImpl.commit: the requests a commit asks to
// retry are committed again at once, up to retries times; a request still
// asking after that, or one failed with an unknown reason, fails the
// commit; those failed with a known reason are dropped.
func CommitAll[C any](committer sink.Committer[C], cs []C, retries int) error {
	if len(cs) == 0 {
		return nil
	}
	reqs := make([]*commitRequest[C], len(cs))
	for i := range cs {
		reqs[i] = &commitRequest[C]{c: cs[i]}
	}
	view := make([]sink.CommitRequest[C], 0, len(reqs))
	for try := 0; len(reqs) > 0 && try <= retries; try++ {
		view = view[:0]
		for _, r := range reqs {
			r.state = requestReceived
			view = append(view, r)
		}
		if err := committer.Commit(view); err != nil {
			return err
		}
		left := reqs[:0]
		for _, r := range reqs {
			switch r.state {
			case requestFailedUnknown:
				return fmt.Errorf("stream: failed to commit %v: %w", r.c, r.err)
			case requestRetry:
				left = append(left, r)
			}
		}
		reqs = left
	}
	if len(reqs) > 0 {
		return fmt.Errorf("stream: failed to commit %d committables after %d retries", len(reqs), retries)
	}
	return nil
}

// held is a committable prepared at a checkpoint and not committed yet.
type held[C any] struct {
	checkpoint int64
	c          C
}

// SinkWriter is the operator of a sink subtask: Flink's SinkWriterOperator
// with its CommitterOperator chained after it, in one operator. On a
// barrier the writer flushes, prepares its committables and snapshots its
// state; the committables go into the operator state until their
// checkpoint completes, when the committer commits them. A restore commits
// at once the committables it restores (Flink's CommitterOperator does),
// so commits must be idempotent. At the end of a bounded input the writer
// flushes, prepares its last committables, and hands them with those not
// committed yet to the SinkCommit of all the sink's subtasks.
type SinkWriter[T, C any] struct {
	task.Base
	// Metrics is the operator's metric group, which the writer and the
	// committer open with (nil: one of the subtask's that nothing reads).
	Metrics   *metrics.Group
	spec      SinkSpec[T, C]
	final     *SinkCommit[C]
	s         *task.Setup
	w         sink.Writer[T]
	prep      sink.CommittingWriter[T, C]
	batch     sink.BatchWriter[T]
	wmw       sink.WatermarkWriter
	stateful  sink.StatefulWriter
	listener  sink.CheckpointListener
	ticker    sink.Ticker
	committer sink.Committer[C]
	wm        *int64
	vals      []T
	every     int64 // ms between ticks, 0 for none
	next      int64
	finished  bool

	store        *state.OperatorStore
	writerStates state.ListState[[]byte]
	committables state.ListState[[]byte]
	held         []held[C]
}

// NewSinkWriter returns the operator of a subtask of the sink spec
// describes; final gathers the committables of its subtasks at the end
// of input (nil without a committer).
func NewSinkWriter[T, C any](spec SinkSpec[T, C], final *SinkCommit[C]) *SinkWriter[T, C] {
	return &SinkWriter[T, C]{spec: spec, final: final}
}

// Open restores the operator state, opens the writer with its restored
// states and the committer, and commits the restored committables.
func (o *SinkWriter[T, C]) Open(s *task.Setup) error {
	o.s, o.wm = s, s.Watermark()
	o.store = state.NewOperatorStore(state.OperatorOptions{Name: s.Name, Memory: s.Memory()})
	snap := s.RestoredOne()
	if snap != nil {
		if err := o.store.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	var err error
	desc := state.ListDescriptor[[]byte]{Name: o.spec.WriterState}
	if o.spec.Union {
		o.writerStates, err = state.GetUnionListState(o.store, desc)
	} else {
		o.writerStates, err = state.GetOperatorListState(o.store, desc)
	}
	if err != nil {
		return err
	}
	if o.committables, err = state.GetOperatorListState(o.store, state.ListDescriptor[[]byte]{Name: o.spec.CommittableState}); err != nil {
		return err
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewGroup(s.Clock(), s.Name, strconv.Itoa(s.Subtask()))
	}
	ctx := sink.InitContext{Subtask: s.Subtask(), Parallelism: s.Parallelism(), Restored: snap != nil,
		States: o.writerStates.Get(), Checkpointing: s.Checkpointing(), MetricGroup: o.Metrics}
	var restored []C
	for i, b := range o.committables.Get() {
		c, err := o.spec.Serializer.Unmarshal(b)
		if err != nil {
			return fmt.Errorf("stream: %s: restore: %s entry %d: %w", s.Name, o.spec.CommittableState, i, err)
		}
		restored = append(restored, c)
	}
	o.writerStates.Clear()
	o.committables.Clear()
	if o.w, err = o.spec.NewWriter(ctx); err != nil {
		return err
	}
	o.batch, _ = o.w.(sink.BatchWriter[T])
	o.wmw, _ = o.w.(sink.WatermarkWriter)
	o.stateful, _ = o.w.(sink.StatefulWriter)
	o.listener, _ = o.w.(sink.CheckpointListener)
	if o.ticker, _ = o.w.(sink.Ticker); o.ticker != nil {
		o.every = o.ticker.TickInterval().Milliseconds()
		o.next = s.Now() + o.every
	}
	if o.spec.NewCommitter == nil {
		return nil
	}
	var ok bool
	if o.prep, ok = o.w.(sink.CommittingWriter[T, C]); !ok {
		return fmt.Errorf("stream: %s: the writer of a two-phase sink prepares no commits", s.Name)
	}
	ctx.States = nil
	if o.committer, err = o.spec.NewCommitter(ctx); err != nil {
		return err
	}
	if err := CommitAll(o.committer, restored, o.spec.Retries); err != nil {
		return fmt.Errorf("stream: %s: restore: %w", s.Name, err)
	}
	return nil
}

// Push writes b: the batch's values at once to a BatchWriter, else each
// record with its timestamp and the watermark.
func (o *SinkWriter[T, C]) Push(b []core.Record[T]) error {
	if o.batch != nil {
		o.vals = o.vals[:0]
		for i := range b {
			o.vals = append(o.vals, b[i].Value)
		}
		return o.batch.WriteBatch(o.vals)
	}
	ctx := sink.Context{Watermark: *o.wm}
	for i := range b {
		ctx.Timestamp = b[i].Timestamp
		if err := o.w.Write(b[i].Value, ctx); err != nil {
			return err
		}
	}
	return nil
}

// OnWatermark tells a WatermarkWriter.
func (o *SinkWriter[T, C]) OnWatermark(wm int64) error {
	if o.wmw != nil {
		return o.wmw.WriteWatermark(wm)
	}
	return nil
}

func (o *SinkWriter[T, C]) NextProcessingTime() (int64, bool) { return o.next, o.every > 0 }

// OnProcessingTime ticks a Ticker once its interval passed.
func (o *SinkWriter[T, C]) OnProcessingTime(now int64) error {
	if o.every <= 0 || now < o.next {
		return nil
	}
	o.next = now + o.every
	return o.ticker.Tick()
}

// Snapshot is the sink's part of checkpoint id (Flink's
// SinkWriterOperator.prepareSnapshotPreBarrier and snapshotState, then
// the committer's snapshotState): the writer flushes and prepares its
// committables, and its state and the committables of this and earlier
// checkpoints not committed yet go into the operator state written to w.
func (o *SinkWriter[T, C]) Snapshot(id int64, w io.Writer) error {
	if err := o.w.Flush(false); err != nil {
		return err
	}
	if o.prep != nil {
		cs, err := o.prep.PrepareCommit(id)
		if err != nil {
			return err
		}
		for _, c := range cs {
			o.held = append(o.held, held[C]{id, c})
		}
	}
	if o.stateful != nil {
		st, err := o.stateful.SnapshotState(id)
		if err != nil {
			return err
		}
		o.writerStates.Update(st)
	}
	if len(o.held) > 0 {
		enc := make([][]byte, len(o.held))
		for i, h := range o.held {
			b, err := o.spec.Serializer.Marshal(h.c)
			if err != nil {
				return fmt.Errorf("stream: %s: checkpoint %d: %w", o.s.Name, id, err)
			}
			enc[i] = b
		}
		o.committables.Update(enc)
	}
	err := o.store.Snapshot(w)
	o.committables.Clear()
	o.writerStates.Clear()
	return errors.Join(err, o.store.Err())
}

// NotifyCheckpointComplete commits the committables of checkpoint id and
// earlier (Flink's CommitterOperator.notifyCheckpointComplete), then tells
// a writer that listens.
func (o *SinkWriter[T, C]) NotifyCheckpointComplete(id int64) error {
	if o.committer != nil && len(o.held) > 0 {
		var done []C
		keep := o.held[:0]
		for _, h := range o.held {
			if h.checkpoint <= id {
				done = append(done, h.c)
			} else {
				keep = append(keep, h)
			}
		}
		if err := CommitAll(o.committer, done, o.spec.Retries); err != nil {
			return err
		}
		clear(o.held[len(keep):])
		o.held = keep
	}
	if o.listener != nil && !o.finished {
		return o.listener.NotifyCheckpointComplete(id)
	}
	return nil
}

// NotifyCheckpointAborted tells a writer that listens; the committables
// of an aborted checkpoint are committed with the next one to complete.
func (o *SinkWriter[T, C]) NotifyCheckpointAborted(id int64) error {
	if o.listener != nil && !o.finished {
		return o.listener.NotifyCheckpointAborted(id)
	}
	return nil
}

// EndInput flushes the writer at the end of its input and hands its last
// committables, with those not committed yet, over to the sink's commit.
func (o *SinkWriter[T, C]) EndInput() error {
	if err := o.w.Flush(true); err != nil {
		return err
	}
	if o.prep == nil {
		o.finished = true
		return nil
	}
	cs, err := o.prep.PrepareCommit(sink.EndOfInput)
	if err != nil {
		return err
	}
	mine := make([]C, 0, len(o.held)+len(cs))
	for _, h := range o.held {
		mine = append(mine, h.c)
	}
	mine = append(mine, cs...)
	o.held = nil
	o.finished = true
	if all := o.final.hand(mine); all != nil {
		if err := CommitAll(o.committer, all, o.spec.Retries); err != nil {
			return fmt.Errorf("stream: %s: end of input: %w", o.s.Name, err)
		}
	}
	return nil
}

// Close closes the writer and the committer and disposes of the state.
func (o *SinkWriter[T, C]) Close() error {
	var err error
	if o.w != nil {
		err = o.w.Close()
		o.w = nil
	}
	if o.committer != nil {
		err = errors.Join(err, o.committer.Close())
		o.committer = nil
	}
	if o.store != nil {
		err = errors.Join(err, o.store.Dispose())
		o.store = nil
	}
	return err
}

// EncodeCommittables writes cs as the operator state of a sink's
// committables (the final snapshot of a finished job).
func EncodeCommittables[C any](name, stateName string, ser sink.Serializer[C], cs []C) ([]byte, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: stateName})
	if err != nil {
		return nil, err
	}
	enc := make([][]byte, len(cs))
	for i, c := range cs {
		if enc[i], err = ser.Marshal(c); err != nil {
			return nil, err
		}
	}
	list.Update(enc)
	var buf bytes.Buffer
	if err := store.Snapshot(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), store.Err()
}

// DecodeCommittables reads what EncodeCommittables wrote.
func DecodeCommittables[C any](name, stateName string, ser sink.Serializer[C], b []byte) ([]C, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: stateName})
	if err != nil {
		return nil, err
	}
	var cs []C
	for i, e := range list.Get() {
		c, err := ser.Unmarshal(e)
		if err != nil {
			return nil, fmt.Errorf("stream: %s: final snapshot: %s entry %d: %w", name, stateName, i, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}
