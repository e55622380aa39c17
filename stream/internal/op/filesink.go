package op

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// The operator states of a FileSink subtask.
const (
	// WriterState names the union list state of a FileSink subtask's
	// writer state (its subtask and next part counter, Flink's bucket
	// state): union, so that a writer restored at any parallelism
	// continues after every old subtask's counter and cleans up after the
	// old subtasks it succeeds.
	WriterState = "FileSinkWriterState"
	// CommittablesState names the list state of the pending parts a
	// subtask closed at checkpoints that had not completed when it was
	// snapshotted (Flink's committer state); a restore commits them.
	CommittablesState = "FileSinkCommittables"
)

// FileCommit gathers the committables of a FileSink's subtasks.
type FileCommit struct {
	mu            sync.Mutex
	left          int // subtasks not finished
	checkpointing bool
	pending       []sink.Committable
	// final is what the subtasks of a checkpointing job handed over at the
	// end of input: the job commits it after its final snapshot holds it
	final []sink.Committable
}

// Reset prepares the commit of an attempt of p subtasks.
func (c *FileCommit) Reset(p int, checkpointing bool) {
	c.mu.Lock()
	c.left, c.pending, c.final, c.checkpointing = p, nil, nil, checkpointing
	c.mu.Unlock()
}

// TakeFinal returns what the subtasks of a checkpointing job handed over
// at the end of input, and forgets it.
func (c *FileCommit) TakeFinal() []sink.Committable {
	c.mu.Lock()
	defer c.mu.Unlock()
	final := c.final
	c.final = nil
	return final
}

// NewFileSink returns the operator of a subtask of fs, handing its parts
// to c at the end of input.
func NewFileSink[T any](fs *sink.FileSink[T], c *FileCommit) *FileSink[T] {
	return &FileSink[T]{fs: fs, commit: c, every: fs.CheckInterval()}
}

// EncodeCommittables writes cs as a FileSink subtask's operator state
// (FileSinkCommittables).
func EncodeCommittables(name string, cs []sink.Committable) ([]byte, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: CommittablesState})
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

// DecodeCommittables reads what EncodeCommittables wrote.
func DecodeCommittables(name string, b []byte) ([]sink.Committable, error) {
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: CommittablesState})
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

// FileSink is the operator of a file sink subtask (Flink's
// SinkWriterOperator with its committer): it writes its parts, closes the
// in-progress part on a checkpoint's barrier and commits what a checkpoint
// covers once it completed; at the end of a bounded input it hands its
// pending parts to the FileCommit of all the sink's subtasks.
type FileSink[T any] struct {
	task.Base
	fs       *sink.FileSink[T]
	name     string
	w        *sink.FileWriter[T]
	commit   *FileCommit
	s        *task.Setup
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
func (f *FileSink[T]) Open(s *task.Setup) error {
	f.s, f.name = s, s.Name
	f.next = s.Clock().Now().Add(f.every).UnixMilli()
	f.store = state.NewOperatorStore(state.OperatorOptions{Name: s.Name, Memory: s.Memory()})
	if snap := s.RestoredOne(); snap != nil {
		if err := f.store.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	var err error
	if f.writerStates, err = state.GetUnionListState(f.store, state.ListDescriptor[[]byte]{Name: WriterState}); err != nil {
		return err
	}
	if f.committables, err = state.GetOperatorListState(f.store, state.ListDescriptor[[]byte]{Name: CommittablesState}); err != nil {
		return err
	}
	if f.w, err = f.fs.Writer(s.Subtask(), s.Parallelism(), f.writerStates.Get()...); err != nil {
		return err
	}
	var restored []sink.Committable
	for _, b := range f.committables.Get() {
		var c sink.Committable
		if err := c.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("stream: %s: restore: %w", f.name, err)
		}
		restored = append(restored, c)
	}
	f.writerStates.Clear()
	f.committables.Clear()
	if restored, err = f.fs.Confine(restored); err != nil {
		return fmt.Errorf("stream: %s: restore: %w", f.name, err)
	}
	return sink.Commit(restored)
}

func (f *FileSink[T]) Push(b []core.Record[T]) error {
	f.vals = f.vals[:0]
	for i := range b {
		f.vals = append(f.vals, b[i].Value)
	}
	return f.w.Write(f.vals)
}

func (f *FileSink[T]) NextProcessingTime() (int64, bool) { return f.next, f.every > 0 }

func (f *FileSink[T]) OnProcessingTime(now int64) error {
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
func (f *FileSink[T]) Snapshot(id int64, w io.Writer) error {
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
func (f *FileSink[T]) NotifyCheckpointComplete(id int64) error {
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

func (f *FileSink[T]) EndInput() error {
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
		if c.checkpointing { // the job commits them once its final snapshot holds them
			c.final, all = all, nil
		}
	}
	c.mu.Unlock()
	if all != nil {
		return sink.Commit(all)
	}
	return nil
}

func (f *FileSink[T]) Close() error {
	var err error
	switch {
	case f.w == nil || f.finished:
	case f.s.Checkpointing():
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
