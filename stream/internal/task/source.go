package task

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// ReaderState names the operator list state in which a source subtask
// keeps its reader's split positions, as Flink's SourceOperator does
// (split-distribute: a restore at another parallelism deals the splits out
// evenly).
const ReaderState = "SourceReaderState"

// SplitWatermarks names the union list state in which a source subtask
// keeps the watermark each of its splits reached: after a restore a split
// starts there, wherever it is assigned, so that the subtask's watermark
// does not fall back (a record late before a failure stays late).
const SplitWatermarks = "SourceSplitWatermarks"

// Source is a source subtask, Flink's SourceOperator in a
// SourceOperatorStreamTask: the operator that holds the reader's split
// positions and the input of its task's loop, which reads batches, runs a
// watermark generator per split and takes the subtask's part of a
// checkpoint when triggered.
type Source[T any] struct {
	Base
	src      source.Source[T]
	strategy watermark.Strategy[T]
	enum     source.Enumerator
	out      *core.Emitter[T]
	name     string
	metrics  *metrics.Group
	rt       *Runtime
	reader   source.Reader[T]
	state    *readerState
	splits   *watermark.Splits[T]
	err      error   // of a watermark output
	ts       []int64 // the timestamps of a batch (watermark.Split.Stamp)
	every    time.Duration
	next     time.Time
	ctx      context.Context // ends at the next periodic tick
	cancel   context.CancelFunc
	// noSplit: the subtask marked itself idle because its reader holds no
	// split; its next records make it active again
	noSplit bool
	// splitless counts the periodic ticks in a row that found the reader
	// without a split
	splitless int
	// stopped: the subtask emitted the barrier of a stop-with-savepoint and
	// reads nothing more
	stopped bool
	// restored are the split positions the reader starts from, and the
	// watermarks splits had reached
	restored   []source.Split
	restoredWM map[string]int64
	// aligner and align: watermark alignment, nil without
	aligner Aligner
	align   *alignment
}

// NewSource returns the source subtask of src, its splits' watermarks made
// by strategy, reading the splits enum assigns, emitting into out.
func NewSource[T any](src source.Source[T], strategy watermark.Strategy[T], enum source.Enumerator, out core.Output[T], name string, batchSize int) *Source[T] {
	return &Source[T]{src: src, strategy: strategy, enum: enum, out: core.NewEmitter(out, batchSize), name: name}
}

// WithMetrics gives the source's reader the operator's metric group g.
func (s *Source[T]) WithMetrics(g *metrics.Group) *Source[T] {
	s.metrics = g
	return s
}

// Align makes the source align its watermark through a (its source's
// coordinator of watermark alignment); call it before the task runs.
func (s *Source[T]) Align(a Aligner) { s.aligner = a }

// Open restores the reader's split positions.
func (s *Source[T]) Open(st *Setup) error {
	s.rt = st.Runtime
	rs, restored, wms, err := openReaderState(s.name, st.Memory(), st.RestoredOne())
	if err != nil {
		return err
	}
	s.state, s.restored, s.restoredWM = rs, restored, wms
	return nil
}

// Close closes the reader and the operator state.
func (s *Source[T]) Close() error {
	var err error
	if s.cancel != nil {
		s.cancel()
	}
	if s.reader != nil {
		err = s.reader.Close()
		s.reader = nil
	}
	if s.state != nil {
		err = errors.Join(err, s.state.close())
		s.state = nil
	}
	return err
}

// Snapshot writes the positions of the reader's splits into the operator
// list state ReaderState and the operator state to w, between two batches.
func (s *Source[T]) Snapshot(id int64, w io.Writer) error {
	if s.state == nil || s.reader == nil {
		return fmt.Errorf("stream: %s: snapshot of a source that is not running", s.name)
	}
	positions := s.reader.Positions()
	if l, ok := s.reader.(source.CheckpointListener); ok {
		l.Checkpointed(id, positions)
	}
	return s.state.snapshot(positions, s.splits, w)
}

// NotifyCheckpointComplete tells a reader that is a
// source.CheckpointListener.
func (s *Source[T]) NotifyCheckpointComplete(id int64) error {
	if l, ok := s.reader.(source.CheckpointListener); ok {
		return l.NotifyCheckpointComplete(id)
	}
	return nil
}

// clockDeadline returns a context that ends when the job's clock reaches t,
// or with parent.
func clockDeadline(parent context.Context, c clock.Clock, t time.Time) (context.Context, context.CancelFunc) {
	if _, ok := c.(clock.System); ok {
		return context.WithDeadline(parent, t)
	}
	ctx, cancel := context.WithCancel(parent)
	tm := c.Timer(t)
	go func() {
		select {
		case <-tm.C():
			cancel()
		case <-ctx.Done():
			tm.Stop()
		}
	}()
	return ctx, cancel
}

func (s *Source[T]) start(rt *Runtime) error {
	tc := rt.tc
	rc := source.ReaderContext{Subtask: rt.subtask, Parallelism: rt.parallelism, Splits: s.enum, Metrics: s.metrics}
	if tc != nil {
		rc.Idle = tc.Metrics.AddIdle
	}
	if rate := rt.cfg.SourceRate; rate > 0 {
		rc.Rate, rc.Clock = rate/float64(rt.parallelism), rt.clock
	}
	r, err := s.src.Reader(rc)
	if err != nil {
		return err
	}
	s.reader = r
	r.AddSplits(s.restored)
	if s.splits, err = watermark.NewSplits(s.strategy, watermark.Context{Clock: rt.clock}, s); err != nil {
		return err
	}
	for _, sp := range s.restored {
		if wm, ok := s.restoredWM[sp.ID]; ok {
			if err := s.splits.Restore(sp.ID, wm); err != nil {
				return err
			}
		}
	}
	s.restored, s.restoredWM = nil, nil
	s.every = rt.cfg.AutoWatermarkInterval
	if rt.cfg.Batch || s.every <= 0 {
		s.every = 100 * 365 * 24 * time.Hour // no watermarks before the end
	}
	if s.aligner != nil && !rt.cfg.Batch {
		a := newAlignment(s.aligner)
		a.id = protocol.TaskID{Job: rt.cfg.Job, Attempt: rt.cfg.Attempt, Vertex: rt.cfg.Vertex, Subtask: rt.subtask}
		a.pauser, _ = r.(source.SplitPauser)
		a.next = rt.clock.Now().Add(a.every)
		s.align = a
		a.coord.Register(rt.subtask, rt.mb)
		rt.align = s.onAlignment
	}
	s.tick()
	rt.trigger = func(t protocol.Trigger) error {
		if err := s.out.Flush(); err != nil {
			return err
		}
		meta := BarrierMeta(t.Timestamp, t.Savepoint)
		var err error
		if rt.unalignedFromStart() {
			// a source has no input: its channel state is its output's
			if err = rt.startUnaligned(t.Checkpoint, meta); err == nil {
				err = rt.finishUnaligned(nil, t.Checkpoint)
			}
		} else {
			err = rt.checkpoint(t.Checkpoint, meta, 0)
		}
		s.stopped = s.stopped || t.Stop
		return err
	}
	rt.resume = func() { s.stopped = false }
	return nil
}

// tick sets the next periodic tick and the read context that ends at it.
func (s *Source[T]) tick() {
	s.next = s.rt.clock.Now().Add(s.every)
	s.rearm()
}

// rearm makes the read context end at the next periodic tick or report,
// whichever comes first.
func (s *Source[T]) rearm() {
	if s.cancel != nil {
		s.cancel()
	}
	at := s.next
	if s.align != nil && s.align.next.Before(at) {
		at = s.align.next
	}
	s.ctx, s.cancel = clockDeadline(s.rt.Context(), s.rt.clock, at)
}

func (s *Source[T]) step(rt *Runtime) (bool, error) {
	jobCtx := rt.Context()
	if s.stopped { // until the job is cancelled, or the savepoint aborted
		select {
		case <-rt.mailWake():
		case <-jobCtx.Done():
			return false, jobCtx.Err()
		}
		return false, nil
	}
	if !rt.clock.Now().Before(s.next) {
		if err := s.periodic(rt); err != nil {
			return false, err
		}
	}
	if a := s.align; a != nil {
		s.reportIfDue()
		if a.waiting { // until an announcement, a tick or the end of the job
			since := time.Now()
			select {
			case <-rt.mailWake():
			case <-s.ctx.Done():
			}
			if rt.tc != nil {
				rt.tc.Metrics.AddIdle(time.Since(since))
			}
			return false, jobCtx.Err()
		}
	}
	if rt.ck != nil && rt.ck.cfg.Unaligned {
		// read only with the outputs available, so that a trigger never
		// waits for credit (Flink's output availability)
		if blocked := rt.outputsBlocked(); blocked != nil {
			select {
			case <-blocked:
			case <-rt.mailWake():
			case <-s.ctx.Done():
			}
			return false, jobCtx.Err()
		}
	}
	readCtx := s.ctx
	var readCancel context.CancelFunc
	if rt.ck != nil || rt.mails != nil || rt.align != nil {
		// mail ends the read, so that a trigger or an aligned source's
		// bound waits for no record and an operator's mail (an async
		// result) for no batch
		readCtx, readCancel = context.WithCancel(s.ctx)
		if !rt.mb.reading(readCancel) {
			readCancel()
		}
	}
	b, err := s.reader.Next(readCtx)
	// the read was cut short (by the periodic deadline or by mail) only if
	// it ended with its context's error while that context was done: a
	// reader's own error, a bad record, is the job's
	interrupted := err != nil && readCtx.Err() != nil &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	if readCancel != nil {
		rt.mb.reading(nil)
		readCancel()
	}
	switch {
	case errors.Is(err, io.EOF):
		if err := s.out.Flush(); err != nil {
			return false, err
		}
		if a := s.align; a != nil { // an ended subtask holds no one back
			a.latest = watermark.Max
			a.report(false)
		}
		if err := rt.drainMail(); err != nil { // a trigger before the end
			return false, err
		}
		if err := rt.ForwardWatermark(watermark.Max); err != nil {
			return false, err
		}
		return true, rt.Finish()
	case interrupted && jobCtx.Err() == nil:
		return false, nil // the periodic deadline, or mail
	case err != nil:
		return false, err
	case b.End:
		s.splits.Release(b.Split)
		if s.align != nil {
			delete(s.align.paused, b.Split)
		}
		return false, nil
	}
	if err := s.emit(b); err != nil {
		return false, err
	}
	if s.align != nil {
		return false, s.maybePause(b.Split)
	}
	return false, nil
}

// periodic flushes what is pending and asks the splits' generators for
// their watermarks; a subtask without a split marks itself idle.
func (s *Source[T]) periodic(rt *Runtime) error {
	if err := s.out.Flush(); err != nil {
		return err
	}
	// a split assigned but silent gets its generator too (Flink makes
	// them when splits are added), so idleness can release it
	held := s.reader.Positions()
	for _, sp := range held {
		if _, err := s.splits.Split(sp.ID); err != nil {
			return err
		}
		if s.align != nil && s.align.waiting {
			s.splits.SetPaused(sp.ID, true) // a split added while waiting
		}
	}
	s.splits.EmitPeriodic()
	// a subtask without a split (more subtasks than splits) does not hold
	// back the watermark downstream, as Flink's SourceOperator; it must
	// have had none for a whole interval, so that a reader between two
	// splits of a bounded source stays active
	if len(held) > 0 {
		s.splitless = 0
	} else if s.splitless++; s.splitless >= 2 && !rt.cfg.Batch && !s.noSplit {
		s.noSplit = true
		s.MarkIdle()
	}
	if s.err != nil {
		return s.err
	}
	if s.align != nil { // the splits' watermarks moved
		for _, sp := range held {
			if err := s.maybePause(sp.ID); err != nil {
				return err
			}
		}
	}
	s.tick()
	return nil
}

// emit stamps a batch of one split and emits it.
func (s *Source[T]) emit(b source.Batch[T]) error {
	sp, err := s.splits.Split(b.Split)
	if err != nil {
		return err
	}
	if s.noSplit {
		s.noSplit = false
		s.MarkActive()
	}
	if sp.Passthrough() {
		s.out.EmitAll(b.Records, watermark.Min)
	} else if sp.Batches() {
		s.ts = slices.Grow(s.ts[:0], len(b.Records))[:len(b.Records)]
		n, err := sp.Stamp(b.Records, watermark.Min, s.ts)
		for lo := 0; lo < n; { // Ahead may emit a watermark between two parts
			hi := lo + sp.Ahead(s.ts[lo:n])
			s.out.EmitStamped(b.Records[lo:hi], s.ts[lo:hi])
			sp.Observe(s.ts[lo:hi])
			lo = hi
		}
		if err != nil {
			return fmt.Errorf("stream: split %s: %w", b.Split, err)
		}
	} else {
		emit := func(v T, ts int64) { s.out.Emit(v, ts) }
		for i := range b.Records {
			if err := sp.Collect(b.Records[i], watermark.Min, emit); err != nil {
				return fmt.Errorf("stream: split %s: %w", b.Split, err)
			}
		}
	}
	if err := s.out.Flush(); err != nil {
		return err
	}
	return s.err
}

// The watermark.Output of the splits' multiplexer: watermarks and
// idleness go through the chain after the records before them.

// EmitWatermark forwards wm through the chain.
func (s *Source[T]) EmitWatermark(wm int64) {
	if s.err != nil {
		return
	}
	if s.err = s.out.Flush(); s.err != nil {
		return
	}
	if s.err = s.rt.ForwardStatus(false); s.err != nil {
		return
	}
	s.err = s.rt.ForwardWatermark(wm)
	if a := s.align; a != nil && wm > a.latest {
		a.latest = wm // Flink's updateCurrentEffectiveWatermark
		s.checkWaiting()
	}
}

// MarkIdle marks the subtask idle.
func (s *Source[T]) MarkIdle() {
	if s.err == nil {
		if s.err = s.out.Flush(); s.err == nil {
			s.err = s.rt.ForwardStatus(true)
		}
	}
}

// MarkActive marks the subtask active again.
func (s *Source[T]) MarkActive() {
	if s.err == nil {
		s.err = s.rt.ForwardStatus(false)
	}
}

// readerState is a source subtask's operator state: the positions of the
// splits its reader holds, each a source.Split's MarshalBinary form.
type readerState struct {
	store  *state.OperatorStore
	splits state.ListState[[]byte]
	wms    state.ListState[[]byte]
}

// openReaderState makes the operator state of a source subtask, restored
// from snap when it is not nil, and returns the splits to hand the reader
// and the watermarks splits had reached.
func openReaderState(name string, mem *memory.Manager, snap []byte) (*readerState, []source.Split, map[string]int64, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name, Memory: mem})
	r := &readerState{store: store}
	fail := func(err error) (*readerState, []source.Split, map[string]int64, error) {
		store.Dispose()
		return nil, nil, nil, err
	}
	if snap != nil {
		if err := store.Restore(bytes.NewReader(snap)); err != nil {
			return fail(err)
		}
	}
	var err error
	if r.splits, err = state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: ReaderState}); err != nil {
		return fail(err)
	}
	if r.wms, err = state.GetUnionListState(store, state.ListDescriptor[[]byte]{Name: SplitWatermarks}); err != nil {
		return fail(err)
	}
	var splits []source.Split
	for _, b := range r.splits.Get() {
		var s source.Split
		if err := s.UnmarshalBinary(b); err != nil {
			return fail(fmt.Errorf("stream: %s: restore: %w", name, err))
		}
		splits = append(splits, s)
	}
	wms := map[string]int64{}
	for _, b := range r.wms.Get() {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return fail(fmt.Errorf("stream: %s: restore: %w", name, state.ErrCorruptSnapshot))
		}
		wm, j := binary.Varint(b[k+int(n):])
		if j <= 0 {
			return fail(fmt.Errorf("stream: %s: restore: %w", name, state.ErrCorruptSnapshot))
		}
		wms[string(b[k:k+int(n)])] = wm
	}
	r.splits.Clear()
	r.wms.Clear()
	return r, splits, wms, nil
}

// snapshot writes the positions of the reader's splits (Flink's
// SourceOperator.snapshotState: the reader's snapshotState into
// ReaderState) and the rest of the operator state to w.
func (r *readerState) snapshot(positions []source.Split, splits interface{ Watermark(string) int64 }, w io.Writer) error {
	enc := make([][]byte, len(positions))
	var wms [][]byte
	for i, s := range positions {
		b, err := s.MarshalBinary()
		if err != nil {
			return err
		}
		enc[i] = b
		if wm := splits.Watermark(s.ID); wm != watermark.Min {
			e := binary.AppendUvarint(nil, uint64(len(s.ID)))
			e = append(e, s.ID...)
			wms = append(wms, binary.AppendVarint(e, wm))
		}
	}
	r.splits.Update(enc)
	r.wms.Update(wms)
	err := r.store.Snapshot(w)
	r.splits.Clear()
	r.wms.Clear()
	if err == nil {
		err = r.store.Err()
	}
	return err
}

func (r *readerState) close() error { return r.store.Dispose() }
