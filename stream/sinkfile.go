package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// The operator states of a FileSink subtask.
const (
	// FileSinkWriterState names the union list state of a FileSink
	// subtask's writer state (its subtask and next part counter, Flink's
	// bucket state): union, so that a writer restored at any parallelism
	// continues after every old subtask's counter and cleans up after the
	// old subtasks it succeeds.
	FileSinkWriterState = "FileSinkWriterState"
	// FileSinkCommittables names the list state of the pending parts a
	// subtask closed at checkpoints that had not completed when it was
	// snapshotted (Flink's committer state); a restore commits them.
	FileSinkCommittables = "FileSinkCommittables"
)

// SinkTo adds a sink writing ds into fs's rolling part files (Flink's
// FileSink): each subtask writes its parts, closing them as fs's rolling
// policy says (checked every fs.CheckInterval of processing time); at the
// end of a bounded input every subtask hands its pending parts over, and
// the last subtask to finish commits them all, so the directory shows the
// committed parts only once the whole input is written. A subtask that
// fails or is cancelled removes what it did not commit, except, under
// checkpoints, the parts a checkpoint named.
//
// Under checkpoints a subtask's snapshot closes its in-progress part and
// keeps the pending parts in the operator state FileSinkCommittables and its
// writer state in FileSinkWriterState; the parts are committed when the
// checkpoint completes. A subtask restored from a snapshot commits the
// parts it names and removes what the failed run wrote after it.
func SinkTo[T any](ds DataStream[T], fs *sink.FileSink[T]) {
	c := &fileCommit{}
	n := addSink(ds, "FileSink", nil)
	n.prepare = func(p int) error {
		c.mu.Lock()
		c.left, c.pending, c.final = p, nil, nil
		c.mu.Unlock()
		return nil
	}
	n.build = func(rt *taskRuntime, _ map[string]any) ([]any, operator, error) {
		op := &fileSinkOp[T]{fs: fs, node: n, commit: c, every: fs.CheckInterval(), rt: rt}
		return []any{op}, op, nil
	}
	n.finalize = func() ([]byte, func() error, error) {
		c.mu.Lock()
		final := c.final
		c.final = nil
		c.mu.Unlock()
		if final == nil {
			return nil, nil, nil
		}
		b, err := encodeCommittables(n.name, final)
		return b, func() error { return sink.Commit(final) }, err
	}
	n.commitFinal = func(b []byte) error {
		cs, err := decodeCommittables(n.name, b)
		if err == nil {
			cs, err = fs.Confine(cs)
		}
		if err != nil {
			return err
		}
		return sink.Commit(cs)
	}
}

// fileCommit gathers the committables of a FileSink's subtasks.
type fileCommit struct {
	mu      sync.Mutex
	left    int // subtasks not finished
	pending []sink.Committable
	// final is what the subtasks of a checkpointing job handed over at the
	// end of input: the job commits it after its final snapshot holds it
	final []sink.Committable
}

// encodeCommittables writes cs as a FileSink subtask's operator state
// (FileSinkCommittables).
func encodeCommittables(name string, cs []sink.Committable) ([]byte, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: FileSinkCommittables})
	if err != nil {
		return nil, err
	}
	enc := make([][]byte, len(cs))
	for i, c := range cs {
		if enc[i], err = c.MarshalBinary(); err != nil {
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

// decodeCommittables reads what encodeCommittables wrote.
func decodeCommittables(name string, b []byte) ([]sink.Committable, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: FileSinkCommittables})
	if err != nil {
		return nil, err
	}
	var cs []sink.Committable
	for _, e := range list.Get() {
		var c sink.Committable
		if err := c.UnmarshalBinary(e); err != nil {
			return nil, fmt.Errorf("stream: %s: final snapshot: %w", name, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

type fileSinkOp[T any] struct {
	base
	fs       *sink.FileSink[T]
	node     *node
	w        *sink.FileWriter[T]
	commit   *fileCommit
	rt       *taskRuntime
	every    time.Duration
	next     int64
	vals     []T
	finished bool

	store        *state.OperatorStore
	writerStates state.ListState[[]byte]
	committables state.ListState[[]byte]
	held         []sink.Committable // prepared at checkpoints not yet complete
}

// open restores the operator state, opens the writer after every restored
// part counter, and commits the restored committables: a job restores from
// a completed checkpoint, and Commit is idempotent (Flink's
// CommitterOperator commits what it restored at once).
func (f *fileSinkOp[T]) open(rt *taskRuntime) error {
	f.next = rt.clock.Now().Add(f.every).UnixMilli()
	f.store = state.NewOperatorStore(state.OperatorOptions{Name: f.node.name, Memory: rt.mem})
	if snap := rt.restoredFor(f.node); snap != nil {
		if err := f.store.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	var err error
	if f.writerStates, err = state.GetUnionListState(f.store, state.ListDescriptor[[]byte]{Name: FileSinkWriterState}); err != nil {
		return err
	}
	if f.committables, err = state.GetOperatorListState(f.store, state.ListDescriptor[[]byte]{Name: FileSinkCommittables}); err != nil {
		return err
	}
	if f.w, err = f.fs.Writer(rt.subtask, rt.parallelism, f.writerStates.Get()...); err != nil {
		return err
	}
	var restored []sink.Committable
	for _, b := range f.committables.Get() {
		var c sink.Committable
		if err := c.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("stream: %s: restore: %w", f.node.name, err)
		}
		restored = append(restored, c)
	}
	f.writerStates.Clear()
	f.committables.Clear()
	if restored, err = f.fs.Confine(restored); err != nil {
		where := "the snapshot"
		if rt.p != nil && rt.p.env.restore != nil {
			where = rt.p.env.restore.where
		}
		return fmt.Errorf("stream: %s: restore of %s: %w", f.node.name, where, err)
	}
	return sink.Commit(restored)
}

func (f *fileSinkOp[T]) push(b []Record[T]) error {
	f.vals = f.vals[:0]
	for i := range b {
		f.vals = append(f.vals, b[i].Value)
	}
	return f.w.Write(f.vals)
}

func (f *fileSinkOp[T]) nextProcessingTime() (int64, bool) { return f.next, f.every > 0 }

func (f *fileSinkOp[T]) onProcessingTime(now int64) error {
	if f.every <= 0 || now < f.next {
		return nil
	}
	f.next = now + f.every.Milliseconds()
	return f.w.Tick()
}

// snapshot is the sink's part of checkpoint id (Flink's SinkWriterOperator
// prepareSnapshotPreBarrier and snapshotState): the in-progress part is
// closed, and the pending parts of this and earlier incomplete checkpoints
// and the writer state go into the operator state written to w.
func (f *fileSinkOp[T]) snapshot(id int64, w io.Writer) error {
	cs, err := f.w.PrepareCommit(id)
	if err != nil {
		return err
	}
	f.held = append(f.held, cs...)
	enc := make([][]byte, len(f.held))
	for i, c := range f.held {
		if enc[i], err = c.MarshalBinary(); err != nil {
			return err
		}
	}
	f.committables.Update(enc)
	f.writerStates.Update([][]byte{f.w.Snapshot()})
	err = f.store.Snapshot(w)
	f.committables.Clear()
	f.writerStates.Clear()
	return errors.Join(err, f.store.Err())
}

// notifyCheckpointComplete commits the parts of checkpoint id and earlier.
func (f *fileSinkOp[T]) notifyCheckpointComplete(id int64) error {
	var done, keep []sink.Committable
	for _, c := range f.held {
		if c.Checkpoint <= id {
			done = append(done, c)
		} else {
			keep = append(keep, c)
		}
	}
	if err := sink.Commit(done); err != nil {
		return err
	}
	f.held = keep
	return nil
}

func (f *fileSinkOp[T]) endInput() error {
	cs, err := f.w.Finish()
	if err != nil {
		return err
	}
	cs = append(f.held, cs...)
	f.held = nil
	f.finished = true
	c := f.commit
	c.mu.Lock()
	c.pending = append(c.pending, cs...)
	c.left--
	var all []sink.Committable
	if c.left == 0 {
		all, c.pending = c.pending, nil
		if f.rt.ck != nil { // the job commits them once its final snapshot holds them
			c.final, all = all, nil
		}
	}
	c.mu.Unlock()
	if all != nil {
		return sink.Commit(all)
	}
	return nil
}

func (f *fileSinkOp[T]) close() error {
	var err error
	switch {
	case f.w == nil || f.finished:
	case f.rt.p != nil && f.rt.p.coord != nil:
		// the job may restore from a checkpoint whose committables name
		// the held parts: they stay, and the restored writer cleans up
		// what this one wrote after it
		err = f.w.AbortKeeping(f.held)
	default:
		err = f.w.Abort()
	}
	if f.store != nil {
		err = errors.Join(err, f.store.Dispose())
		f.store = nil
	}
	return err
}
