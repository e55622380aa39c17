package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
)

// The operator states of a FileSink subtask.
const (
	// FileSinkWriterState names the union list state of a FileSink
	// subtask's writer state (its subtask and next part counter, Flink's
	// bucket state): union, so that a writer restored at any parallelism
	// continues after every old subtask's counter and cleans up after the
	// old subtasks it succeeds.
	FileSinkWriterState = op.WriterState
	// FileSinkCommittables names the list state of the pending parts a
	// subtask closed at checkpoints that had not completed when it was
	// snapshotted (Flink's committer state); a restore commits them.
	FileSinkCommittables = op.CommittablesState
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
func SinkTo[T any](ds DataStream[T], fs *sink.FileSink[T]) DataStreamSink {
	c := &op.FileCommit{}
	n := addSink(ds, "FileSink", nil)
	if fs == nil {
		ds.env.fail(caller(1), fmt.Errorf("SinkTo: nil sink"))
		return DataStreamSink{ds.env, n}
	}
	checkpointing := ds.env.ck != nil
	n.Reset = func(p int) { c.Reset(p, checkpointing) }
	n.Build = func(b *graph.Build, _ map[string]any) ([]any, task.Operator, error) {
		o := op.NewFileSink(fs, c)
		return []any{o}, o, nil
	}
	n.Finalize = func() ([]byte, func() error, error) {
		final := c.TakeFinal()
		if final == nil {
			return nil, nil, nil
		}
		b, err := op.EncodeCommittables(n.Name, final)
		return b, func() error { return sink.Commit(final) }, err
	}
	n.CommitFinal = func(b []byte) error {
		cs, err := op.DecodeCommittables(n.Name, b)
		if err == nil {
			cs, err = fs.Confine(cs)
		}
		if err != nil {
			return err
		}
		return sink.Commit(cs)
	}
	return DataStreamSink{ds.env, n}
}

// DataStreamSink is a sink of a program (Flink's DataStreamSink): give it a
// stable id, a name and a parallelism.
type DataStreamSink struct {
	env *Env
	n   *graph.Node
}

// UID sets the sink's stable id, as DataStream.UID.
func (s DataStreamSink) UID(uid string) DataStreamSink {
	setUID(s.env, s.n, uid, caller(1))
	return s
}

// Name names the sink (in metrics and errors).
func (s DataStreamSink) Name(name string) DataStreamSink {
	s.n.Name = name
	return s
}

// SetParallelism sets the number of the sink's subtasks.
func (s DataStreamSink) SetParallelism(p int) DataStreamSink {
	if p <= 0 {
		s.env.fail(caller(1), fmt.Errorf("%s: parallelism %d must be positive", s.n.Name, p))
		return s
	}
	s.n.Parallelism = p
	return s
}
