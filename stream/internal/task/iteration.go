package task

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/state"
)

// LogState names the operator list state in which an iteration head keeps
// the records fed back between its barrier and the barrier's return
// through the loop: a restore feeds them in again, at any parallelism
// (split-distribute).
const LogState = "IterationFeedbackLog"

// Head is the operator of an iteration's head: its input goes on as it
// comes (Flink's StreamIterationHead forwards both), and it holds what a
// checkpoint logged of the feedback.
type Head struct {
	Base
	q       FeedbackQueue
	name    string
	restore [][]byte
}

// HeadOf is the head operator of an iteration over records of type T:
// what its input delivers goes on to out.
type HeadOf[T any] struct {
	h   *Head
	out core.Output[T]
}

// NewHead returns the head operator fed back by q, passing its input on
// to out.
func NewHead[T any](q FeedbackQueue, out core.Output[T], name string) HeadOf[T] {
	return HeadOf[T]{h: &Head{q: q, name: name}, out: out}
}

// Head returns the head's iteration part.
func (h HeadOf[T]) Head() *Head { return h.h }

// Push passes b on.
func (h HeadOf[T]) Push(b []core.Record[T]) error { return h.out.Push(b) }

// The lifecycle of the head.
func (h HeadOf[T]) Open(s *Setup) error                  { return h.h.Open(s) }
func (h HeadOf[T]) OnWatermark(int64) error              { return nil }
func (h HeadOf[T]) OnProcessingTime(int64) error         { return nil }
func (h HeadOf[T]) NextProcessingTime() (int64, bool)    { return 0, false }
func (h HeadOf[T]) Snapshot(int64, io.Writer) error      { return nil }
func (h HeadOf[T]) NotifyCheckpointComplete(int64) error { return nil }
func (h HeadOf[T]) EndInput() error                      { return nil }
func (h HeadOf[T]) Close() error                         { return nil }

// Open takes the logs the head restores, fed in again when its task
// starts.
func (h *Head) Open(s *Setup) error {
	snap := s.RestoredOne()
	if snap == nil {
		return nil
	}
	store := state.NewOperatorStore(state.OperatorOptions{Name: h.name, Memory: s.Memory()})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(snap)); err != nil {
		return err
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: LogState})
	if err != nil {
		return err
	}
	h.restore = list.Get()
	return nil
}

// encodeLog writes a checkpoint's log as the head's operator state.
func (h *Head) encodeLog(batches [][]byte) ([]byte, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: h.name})
	defer store.Dispose()
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: LogState})
	if err != nil {
		return nil, err
	}
	list.Update(batches)
	var buf bytes.Buffer
	if err := store.Snapshot(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), store.Err()
}

// feedbackLogs are an iteration head's checkpoints waiting for their
// barrier to come back through the loop: their snapshots, taken on the
// barrier, and the records fed back since.
type feedbackLogs struct {
	head *Head
	q    FeedbackQueue
	open []*feedbackLog
}

type feedbackLog struct {
	id        int64
	snaps     *snapshots
	wm        int64
	inflight  []byte
	alignment time.Duration
	batches   [][]byte
}

func (l *feedbackLogs) start(id int64, s *snapshots, wm int64, inflight []byte, alignment time.Duration) {
	l.open = append(l.open, &feedbackLog{id: id, snaps: s, wm: wm, inflight: inflight, alignment: alignment})
}

// tap logs a batch fed back into every open log.
func (l *feedbackLogs) tap(b any) error {
	for _, lg := range l.open {
		enc, err := l.q.encode(nil, b)
		if err != nil {
			return err
		}
		lg.batches = append(lg.batches, enc)
	}
	return nil
}

// marker acknowledges checkpoint id, whose barrier came back through the
// loop: the head's state is its log.
func (l *feedbackLogs) marker(rt *Runtime, id int64) error {
	for i, lg := range l.open {
		if lg.id != id {
			continue
		}
		l.open = append(l.open[:i], l.open[i+1:]...)
		st, err := l.head.encodeLog(lg.batches)
		if err != nil {
			rt.decline(id, fmt.Errorf("stream: %s: checkpoint %d: %w", l.head.name, id, err))
			return nil
		}
		lg.snaps.states[0] = st
		rt.ack(id, lg.snaps, lg.wm, lg.inflight, lg.alignment)
		return nil
	}
	return nil // a marker of a checkpoint the head did not take (declined, or before a restore)
}

// drop forgets the log of checkpoint id (aborted, or completed without it).
func (l *feedbackLogs) drop(id int64) {
	for i, lg := range l.open {
		if lg.id == id {
			l.open = append(l.open[:i], l.open[i+1:]...)
			return
		}
	}
}

// Iteration returns the input of an iteration head's task, Flink's
// StreamIterationHead with the original input read in the same task: the
// gate's batches, watermarks and statuses pass as in any task, and the
// records the tail fed back go into the chain between them. Watermarks
// come from the original input only: fed-back records carry their
// timestamps but no watermark (Flink's head emits the maximal watermark at
// once, so that the loop never holds event time back; downstream sees the
// input's watermarks alone in both). Once the input ended, the head keeps
// reading the feedback and ends the loop when none came for maxWait
// (never, for zero): Flink's timeout, counted from the input's end; later
// feedback is dropped, as in Flink. Then the chain's end of input is
// called.
func Iteration(ins []NetworkInput, head *Head, maxWait time.Duration) Input {
	return &iterationInput{gate: gateInput{ins: ins, extra: head.q.ready()}, head: head, maxWait: max(maxWait, 0)}
}

type iterationInput struct {
	gate     gateInput
	head     *Head
	maxWait  time.Duration
	inEnded  bool
	deadline time.Time
}

func (in *iterationInput) start(rt *Runtime) error {
	if err := in.gate.start(rt); err != nil {
		return err
	}
	rt.async.on = false // the head acknowledges once its barrier came back
	if rt.ck != nil {
		rt.logs = &feedbackLogs{head: in.head, q: in.head.q}
	}
	for _, b := range in.head.restore {
		if err := in.head.q.replay(b, rt.cfg.BatchSize); err != nil {
			return err
		}
	}
	in.head.restore = nil
	return nil
}

// drain delivers what was fed back, logging it for the checkpoints in
// progress.
func (in *iterationInput) drain(rt *Runtime) (bool, error) {
	var tap func(any)
	var tapErr error
	if rt.logs != nil && len(rt.logs.open) > 0 {
		tap = func(b any) {
			if tapErr == nil {
				tapErr = rt.logs.tap(b)
			}
		}
	}
	got, err := in.head.q.drain(rt.cfg.BatchSize, tap, func(id int64) error {
		if rt.logs == nil {
			return nil
		}
		return rt.logs.marker(rt, id)
	})
	return got, errors.Join(err, tapErr)
}

func (in *iterationInput) step(rt *Runtime) (bool, error) {
	ctx := rt.Context()
	if err := ctx.Err(); err != nil {
		return false, err // records circling forever never let a wait see the end
	}
	got, err := in.drain(rt)
	if err != nil {
		return false, err
	}
	if !in.inEnded {
		ended, err := in.gate.poll(rt)
		if err != nil || !ended {
			return false, err
		}
		in.inEnded = true
		in.deadline = time.Now().Add(in.maxWait)
		in.triggered(rt)
		return false, nil
	}
	if got {
		in.deadline = time.Now().Add(in.maxWait)
		return false, nil
	}
	quiet, err := in.waitFeedback(rt)
	if err != nil || !quiet {
		return false, err
	}
	if got, err = in.drain(rt); err != nil || got {
		in.deadline = time.Now().Add(in.maxWait)
		return false, err
	}
	return true, rt.Finish()
}

// triggered makes the head, whose input ended, take its barriers from
// the coordinator's triggers, as a source: the loop still carries records
// whose checkpoints no barrier through the input marks any more. A
// trigger of a checkpoint the head began (its barrier came before the
// input's end) is one it has.
func (in *iterationInput) triggered(rt *Runtime) {
	if rt.ck == nil {
		return
	}
	rt.trigger = func(t protocol.Trigger) error {
		if t.Checkpoint <= rt.ck.current {
			return nil
		}
		meta := BarrierMeta(t.Timestamp, t.Savepoint)
		if rt.unalignedFromStart() {
			if err := rt.startUnaligned(t.Checkpoint, meta); err != nil {
				return err
			}
			return rt.finishUnaligned(nil, t.Checkpoint)
		}
		return rt.checkpoint(t.Checkpoint, meta, 0)
	}
	rt.ck.cfg.Coordinator.InputsEnded(protocol.InputsEnded{Task: rt.ck.id})
}

// waitFeedback waits for feedback, the chain's next processing-time timer,
// mail or the deadline (none when maxWait is zero); quiet says the
// deadline passed.
func (in *iterationInput) waitFeedback(rt *Runtime) (quiet bool, err error) {
	var expire <-chan time.Time
	if in.maxWait > 0 {
		t := time.NewTimer(time.Until(in.deadline))
		defer t.Stop()
		expire = t.C
	}
	timer, stop := rt.timer(0, false)
	defer stop()
	ctx := rt.Context()
	select {
	case <-in.head.q.ready():
	case <-timer:
	case <-rt.mailWake():
	case <-expire:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return false, nil
}

// close ends the loop's queue, whatever became of the task.
func (in *iterationInput) close() error { return in.head.q.end() }
