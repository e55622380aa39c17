package sink

import (
	"time"
)

// FileSink is a TwoPhaseSink: its writers prepare pending part files as
// Committables, its committer renames them (Commit), and its writer state
// is union state, so that a writer restored at any parallelism continues
// after every old subtask's part counter and cleans up after the old
// subtasks it succeeds.
var _ TwoPhaseSink[string, Committable] = (*FileSink[string])(nil)

// CreateWriter opens the writer of subtask ctx.Subtask (Writer, with the
// restored states).
func (s *FileSink[T]) CreateWriter(ctx InitContext) (CommittingWriter[T, Committable], error) {
	w, err := s.Writer(ctx.Subtask, ctx.Parallelism, ctx.States...)
	if err != nil {
		return nil, err
	}
	return &fileSinkWriter[T]{w: w, checkpointing: ctx.Checkpointing}, nil
}

// CreateCommitter returns the committer of the sink's parts.
func (s *FileSink[T]) CreateCommitter(InitContext) (Committer[Committable], error) {
	return fileCommitter{}, nil
}

// CommittableSerializer encodes a Committable with MarshalBinary and
// decodes it confined to the sink's directory (Confine): a restore
// renames only the sink's own parts.
func (s *FileSink[T]) CommittableSerializer() Serializer[Committable] { return fileSerializer[T]{s} }

// UnionWriterState is true: see CreateWriter.
func (s *FileSink[T]) UnionWriterState() bool { return true }

type fileSerializer[T any] struct{ s *FileSink[T] }

func (f fileSerializer[T]) Marshal(c Committable) ([]byte, error) { return c.MarshalBinary() }

func (f fileSerializer[T]) Unmarshal(b []byte) (Committable, error) {
	var c Committable
	if err := c.UnmarshalBinary(b); err != nil {
		return Committable{}, err
	}
	return f.s.confine(c, "")
}

// fileCommitter commits part files: Commit is idempotent, and a part
// missing with no committed file fails the job, unrecoverably.
type fileCommitter struct{}

func (fileCommitter) Commit(reqs []CommitRequest[Committable]) error {
	cs := make([]Committable, len(reqs))
	for i, r := range reqs {
		cs[i] = r.Committable()
	}
	return Commit(cs)
}

func (fileCommitter) Close() error { return nil }

// fileSinkWriter is a FileWriter behind the Writer contract. It keeps the
// committables it prepared for checkpoints not complete yet: a writer
// closed before the end of its input keeps their pending parts, which a
// restored job commits.
type fileSinkWriter[T any] struct {
	w             *FileWriter[T]
	checkpointing bool
	ended         bool
	finished      bool
	held          []Committable
	one           [1]T
}

func (f *fileSinkWriter[T]) Write(v T, _ Context) error {
	f.one[0] = v
	err := f.w.Write(f.one[:])
	var zero T
	f.one[0] = zero
	return err
}

func (f *fileSinkWriter[T]) WriteBatch(vals []T) error { return f.w.Write(vals) }

// Flush does nothing before the end of input: PrepareCommit closes the
// in-progress part.
func (f *fileSinkWriter[T]) Flush(endOfInput bool) error {
	f.ended = f.ended || endOfInput
	return nil
}

func (f *fileSinkWriter[T]) PrepareCommit(id int64) ([]Committable, error) {
	if f.ended {
		f.finished = true
		return f.w.Finish()
	}
	cs, err := f.w.PrepareCommit(id)
	f.held = append(f.held, cs...)
	return cs, err
}

func (f *fileSinkWriter[T]) SnapshotState(int64) ([][]byte, error) {
	return [][]byte{f.w.Snapshot()}, nil
}

func (f *fileSinkWriter[T]) TickInterval() time.Duration { return f.w.s.CheckInterval() }
func (f *fileSinkWriter[T]) Tick() error                 { return f.w.Tick() }

// NotifyCheckpointComplete forgets the parts of checkpoint id and earlier:
// they are committed.
func (f *fileSinkWriter[T]) NotifyCheckpointComplete(id int64) error {
	keep := f.held[:0]
	for _, c := range f.held {
		if c.Checkpoint > id {
			keep = append(keep, c)
		}
	}
	f.held = keep
	return nil
}

func (f *fileSinkWriter[T]) NotifyCheckpointAborted(int64) error { return nil }

// Close after the end of input leaves the parts to the commit; before it
// removes what the writer wrote, keeping, under checkpoints, the pending
// parts a checkpoint may hold (the restored writer cleans up the rest).
func (f *fileSinkWriter[T]) Close() error {
	switch {
	case f.finished:
		return nil
	case f.checkpointing:
		return f.w.AbortKeeping(f.held)
	default:
		return f.w.Abort()
	}
}
