package stream

import (
	"fmt"

	"github.com/weirdata/weir/metrics"
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
	FileSinkWriterState = "FileSinkWriterState"
	// FileSinkCommittables names the list state of the pending parts a
	// subtask closed at checkpoints that had not completed when it was
	// snapshotted (Flink's committer state); a restore commits them.
	FileSinkCommittables = "FileSinkCommittables"
)

// The operator states of the subtasks of any other sink.
const (
	// SinkWriterState names the list state of a sink's writer states
	// (sink.StatefulWriter): split among the subtasks on a restore, or
	// union when the sink implements sink.UnionState.
	SinkWriterState = op.SinkWriterState
	// SinkCommittables names the list state of the committables a two-phase
	// sink's subtask prepared at checkpoints whose commit had not happened
	// when it was snapshotted (Flink's committer state); a restore commits
	// them.
	SinkCommittables = op.SinkCommittables
)

// SinkTo adds a sink writing ds through the two-phase commit of s (Flink's
// sinkTo with a Sink that supports committing; sink.FileSink is one): each
// subtask writes with its own writer; on a checkpoint's barrier the writer
// flushes, prepares its committables and snapshots its state, and the
// subtask's snapshot holds both (operator states SinkCommittables and
// SinkWriterState, FileSinkCommittables and FileSinkWriterState for a
// FileSink); once the checkpoint completed, the subtask's committer commits
// the committables of that checkpoint and the earlier ones. A subtask
// restored from a snapshot commits at once the committables it holds,
// which an earlier attempt may have committed: commits are idempotent.
//
// At the end of a bounded input every subtask flushes and prepares its last
// committables and hands them over, and the last subtask to finish commits
// them all (under checkpoints the job commits them once its final snapshot
// holds them), so nothing of the last stretch is visible before the whole
// input is written. A job restored after it finished commits again what
// its final snapshot holds.
func SinkTo[T, C any](ds DataStream[T], s sink.TwoPhaseSink[T, C]) DataStreamSink {
	kind, ws, cst := "Sink", op.SinkWriterState, op.SinkCommittables
	fs, isFile := any(s).(*sink.FileSink[T])
	if isFile {
		kind, ws, cst = "FileSink", FileSinkWriterState, FileSinkCommittables
	}
	n := addNode[struct{}](ds.env, kind, kind, ds.edge())
	n.Sink = true
	if s == nil || isFile && fs == nil {
		ds.env.fail(caller(1), fmt.Errorf("SinkTo: nil sink"))
		return DataStreamSink{ds.env, n}
	}
	spec := op.TwoPhaseSpec(s, ws, cst)
	c := &op.SinkCommit[C]{}
	checkpointing := ds.env.ck != nil
	n.Reset = func(p int) { c.Reset(p, checkpointing) }
	n.Build = func(b *graph.Build, _ map[string]any) ([]any, task.Operator, error) {
		o := op.NewSinkWriter(spec, c)
		o.Metrics = b.Metrics
		return []any{o}, o, nil
	}
	commit := func(cs []C) error {
		cm, err := s.CreateCommitter(sink.InitContext{Parallelism: 1, Restored: true, Checkpointing: checkpointing,
			MetricGroup: metrics.NewGroup(nil, n.Name, "commit")})
		if err != nil {
			return err
		}
		err = op.CommitAll(cm, cs, spec.Retries)
		if cerr := cm.Close(); err == nil {
			err = cerr
		}
		return err
	}
	n.Finalize = func() ([]byte, func() error, error) {
		final := c.TakeFinal()
		if final == nil {
			return nil, nil, nil
		}
		b, err := op.EncodeCommittables(n.Name, cst, spec.Serializer, final)
		return b, func() error { return commit(final) }, err
	}
	n.CommitFinal = func(b []byte) error {
		cs, err := op.DecodeCommittables(n.Name, cst, spec.Serializer, b)
		if err != nil {
			return err
		}
		return commit(cs)
	}
	return DataStreamSink{ds.env, n}
}

// SinkToWriter adds a sink writing ds with the writers of s, a sink
// without commits (Flink's sinkTo with a plain Sink): each subtask writes
// with its own writer, which flushes on every checkpoint's barrier and at
// the end of input, so that under checkpoints no record before a
// completed checkpoint is lost (at least once: a restore writes the
// records after it again). A sink.StatefulWriter's states go into the
// subtask's snapshot (operator state SinkWriterState) and come back to the
// writer a restore opens.
func SinkToWriter[T any](ds DataStream[T], s sink.Sink[T]) DataStreamSink {
	n := addNode[struct{}](ds.env, "SinkWriter", "SinkWriter", ds.edge())
	n.Sink = true
	if s == nil {
		ds.env.fail(caller(1), fmt.Errorf("SinkToWriter: nil sink"))
		return DataStreamSink{ds.env, n}
	}
	spec := op.WriterSpec(s)
	n.Build = func(b *graph.Build, _ map[string]any) ([]any, task.Operator, error) {
		o := op.NewSinkWriter(spec, nil)
		o.Metrics = b.Metrics
		return []any{o}, o, nil
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
