package task

import (
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/watermark"
)

// taskCheckpoints is a task's side of the job's checkpoints: its id, its
// mailbox from the coordinator, and the options of the checkpoint whose
// snapshots are being taken.
type taskCheckpoints struct {
	cfg *Checkpoints
	id  protocol.TaskID
	mb  *mailbox
	// the checkpoint being snapshotted and whether it is a savepoint
	current   int64
	savepoint bool
}

// BarrierMeta is the Meta of a checkpoint barrier's flow.Event: when the
// checkpoint was triggered (Unix ms) and whether it is a savepoint.
func BarrierMeta(triggered int64, savepoint bool) int64 {
	m := triggered << 1
	if savepoint {
		m |= 1
	}
	return m
}

func metaSavepoint(m int64) bool        { return m&1 == 1 }
func metaTriggered(m int64) time.Time   { return time.UnixMilli(m >> 1) }
func barrier(id, meta int64) flow.Event { return flow.Event{Kind: flow.Barrier, Value: id, Meta: meta} }
func (c *taskCheckpoints) finished()    { c.cfg.Coordinator.Finish(protocol.Finished{Task: c.id}) }
func (c *taskCheckpoints) begin(id int64, meta int64) {
	c.current, c.savepoint = id, metaSavepoint(meta)
}

// IsSavepoint reports whether checkpoint id, whose snapshots are being
// taken, is a savepoint: its snapshots are full and in the canonical
// format whatever the state backend (as Flink's savepoints), so that any
// backend restores it.
func (s *Setup) IsSavepoint(id int64) bool {
	return s.ck != nil && s.ck.current == id && s.ck.savepoint
}

// register makes the task known to the job's checkpoint coordinator.
func (rt *Runtime) register() {
	c := rt.cfg.Checkpoints
	if c == nil {
		return
	}
	rt.ck = &taskCheckpoints{cfg: c, mb: rt.mb,
		id: protocol.TaskID{Job: rt.cfg.Job, Attempt: rt.cfg.Attempt, Vertex: rt.cfg.Vertex, Subtask: rt.subtask}}
	c.Coordinator.Register(rt.ck.id, rt.ck.mb)
}

// mailWake returns the channel that receives when mail arrives.
func (rt *Runtime) mailWake() <-chan time.Time { return rt.mb.wake }

// drainMail handles the operators' mail (Mail), then what the coordinators
// posted: a trigger (in a source task), completed and aborted checkpoints,
// the task's own note that an asynchronous snapshot was written, and an
// aligned source's bound.
func (rt *Runtime) drainMail() error {
	if rt.mb.opMail.Swap(false) {
		if _, err := rt.runMail(0); err != nil {
			return err
		}
	}
	if rt.ck == nil && rt.align == nil {
		return nil // no coordinator posts to this task
	}
	for _, m := range rt.mb.take() {
		if m.asyncDone {
			rt.ackAsync()
			continue
		}
		switch x := m.m.(type) {
		case protocol.WatermarkAlignment:
			if rt.align != nil {
				if err := rt.align(x); err != nil {
					return err
				}
			}
		case protocol.Trigger:
			if rt.trigger != nil {
				if err := rt.trigger(x); err != nil {
					return err
				}
			}
		case protocol.Resume:
			if rt.resume != nil {
				rt.resume()
			}
		case protocol.Complete:
			if err := rt.NotifyCheckpointComplete(x.Checkpoint); err != nil {
				return err
			}
			if rt.logs != nil {
				rt.logs.drop(x.Checkpoint)
			}
			if x.Confirm {
				rt.ck.cfg.Coordinator.Notified(protocol.Notified{Task: rt.ck.id, Checkpoint: x.Checkpoint})
			}
		case protocol.Abort:
			if err := rt.NotifyCheckpointAborted(x.Checkpoint); err != nil {
				return err
			}
			if rt.logs != nil {
				rt.logs.drop(x.Checkpoint)
			}
		}
	}
	return nil
}

// NotifyCheckpointComplete tells every operator, in chain order, that
// checkpoint id completed.
func (rt *Runtime) NotifyCheckpointComplete(id int64) error {
	for i, op := range rt.ops {
		if err := op.NotifyCheckpointComplete(id); err != nil {
			return rt.operatorError(i, id, err)
		}
	}
	return nil
}

// NotifyCheckpointAborted tells every AbortListener, in chain order, that
// checkpoint id was aborted.
func (rt *Runtime) NotifyCheckpointAborted(id int64) error {
	for i, op := range rt.ops {
		if l, ok := op.(AbortListener); ok {
			if err := l.NotifyCheckpointAborted(id); err != nil {
				return rt.operatorError(i, id, err)
			}
		}
	}
	return nil
}

// Checkpoint takes the task's part of checkpoint id on its barrier (Flink's
// SubtaskCheckpointCoordinatorImpl.checkpointState): every operator of the
// chain writes its snapshot, or captures its keyed state for an
// asynchronous write, the barrier goes to every output, and the task goes
// on processing; it acknowledges with its snapshots once they are written.
// Without checkpoints the barrier is only forwarded.
func (rt *Runtime) checkpoint(id, meta int64, alignment time.Duration) error {
	if rt.ck == nil {
		return rt.event(barrier(id, meta))
	}
	rt.ck.begin(id, meta)
	if rt.async.on {
		return rt.checkpointAsync(id, meta, alignment)
	}
	states, err := rt.snapshotOperators(id)
	if err != nil {
		return err
	}
	wm := rt.watermark
	if err := rt.event(barrier(id, meta)); err != nil {
		return err
	}
	if rt.logs != nil {
		rt.logs.start(id, states, wm, nil, alignment)
		return nil
	}
	rt.ack(id, states, wm, nil, alignment)
	return nil
}

// snapshotOperators writes every operator's snapshot for checkpoint id
// into a buffer of its own, in the order of the operators, with the
// shared files they name.
func (rt *Runtime) snapshotOperators(id int64) (*snapshots, error) {
	s := &snapshots{states: make([][]byte, len(rt.ops))}
	rt.shared = &sharedNames{id: id, names: make([][]string, len(rt.ops))}
	defer func() { rt.shared = nil }()
	for i, op := range rt.ops {
		var buf bytesBuffer
		if err := op.Snapshot(id, &buf); err != nil {
			return nil, rt.operatorError(i, id, err)
		}
		s.states[i] = buf
	}
	s.shared = rt.shared.names
	return s, nil
}

// Snapshot writes every operator's snapshot for checkpoint id, by
// operator id (a test harness's snapshot).
func (rt *Runtime) Snapshot(id int64) ([]protocol.OperatorSnapshot, error) {
	s, err := rt.snapshotOperators(id)
	if err != nil {
		return nil, err
	}
	out := make([]protocol.OperatorSnapshot, len(rt.setups))
	for i, st := range rt.setups {
		out[i] = protocol.OperatorSnapshot{ID: st.ID, State: s.states[i], Shared: s.shared[i], Watermark: rt.watermark}
	}
	return out, nil
}

// snapshots are a task's operators' snapshots for one checkpoint, in the
// order of the operators.
type snapshots struct {
	states [][]byte
	shared [][]string
}

// ack acknowledges checkpoint id with the operators' snapshots, the
// watermark they were taken at and the channel state.
func (rt *Runtime) ack(id int64, s *snapshots, wm int64, inflight []byte, alignment time.Duration) {
	a := protocol.Ack{Task: rt.ck.id, Checkpoint: id, InFlight: inflight, Alignment: alignment}
	for i, st := range rt.setups {
		var shared []string
		if s.shared != nil {
			shared = s.shared[i]
		}
		if len(s.states[i]) == 0 && len(shared) == 0 && wm == watermark.Min {
			continue
		}
		a.Operators = append(a.Operators, protocol.OperatorSnapshot{ID: st.ID, State: s.states[i], Shared: shared, Watermark: wm})
	}
	rt.ck.cfg.Coordinator.Acknowledge(a)
}

// decline declines checkpoint id: the task's part of it failed.
func (rt *Runtime) decline(id int64, err error) {
	rt.ck.cfg.Coordinator.Decline(protocol.Decline{Task: rt.ck.id, Checkpoint: id, Reason: err.Error()})
}

// bytesBuffer is an io.Writer appending to a slice.
type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
