package stream

import (
	"errors"
	"sync"
	"time"

	"github.com/weirdata/weir/stream/sink"
)

// SinkTo adds a sink writing ds into fs's rolling part files (Flink's
// FileSink): each subtask writes its parts, closing them as fs's rolling
// policy says (checked every fs.CheckInterval of processing time); at the
// end of a bounded input every subtask hands its pending parts over, and
// the last subtask to finish commits them all, so the directory shows the
// committed parts only once the whole input is written. A subtask that
// fails or is cancelled removes what it did not commit.
func SinkTo[T any](ds DataStream[T], fs *sink.FileSink[T]) {
	c := &fileCommit{}
	n := addSink(ds, "FileSink", nil)
	n.prepare = func(p int) error {
		c.mu.Lock()
		c.left, c.pending = p, nil
		c.mu.Unlock()
		return nil
	}
	n.build = func(rt *taskRuntime, _ map[string]any) ([]any, operator, error) {
		w, err := fs.Writer(rt.subtask, rt.parallelism)
		if err != nil {
			return nil, nil, err
		}
		op := &fileSinkOp[T]{w: w, commit: c, every: fs.CheckInterval(), rt: rt}
		return []any{op}, op, nil
	}
}

// fileCommit gathers the committables of a FileSink's subtasks.
type fileCommit struct {
	mu      sync.Mutex
	left    int // subtasks not finished
	pending []sink.Committable
}

type fileSinkOp[T any] struct {
	base
	w        *sink.FileWriter[T]
	commit   *fileCommit
	rt       *taskRuntime
	every    time.Duration
	next     int64
	vals     []T
	finished bool
}

func (f *fileSinkOp[T]) open(rt *taskRuntime) error {
	f.next = rt.clock.Now().Add(f.every).UnixMilli()
	return nil
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

func (f *fileSinkOp[T]) endInput() error {
	cs, err := f.w.Finish()
	if err != nil {
		return err
	}
	f.finished = true
	c := f.commit
	c.mu.Lock()
	c.pending = append(c.pending, cs...)
	c.left--
	var all []sink.Committable
	if c.left == 0 {
		all, c.pending = c.pending, nil
	}
	c.mu.Unlock()
	if all != nil {
		return sink.Commit(all)
	}
	return nil
}

func (f *fileSinkOp[T]) close() error {
	if f.finished {
		return nil
	}
	return errors.Join(f.w.Abort())
}
