package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// FileWriter writes one subtask's part files (Flink's FileWriter with a
// single bucket). It is used by one goroutine: Write, Tick, PrepareCommit,
// Snapshot, Finish and Abort are never called at once.
type FileWriter[T any] struct {
	s       *FileSink[T]
	subtask int
	next    uint64 // counter of the next part to open
	start   uint64 // next when the writer was opened: Abort removes parts from here
	nonce   string // ends the names of its hidden files
	cur     *part[T]
	pending []Committable // closed since the last PrepareCommit
	buf     []byte
	done    bool // after Finish or Abort
}

// errDone reports a call after Finish or Abort.
var errDone = errors.New("writer is finished or aborted")

// Write writes a batch to the in-progress part, opening one when there is
// none and rolling it when the policy says so before a record. The batch's
// processing time is read once.
func (w *FileWriter[T]) Write(batch []T) error {
	if w.done {
		return fmt.Errorf("stream/sink: write %s: %w", w.s.dir, errDone)
	}
	if len(batch) == 0 {
		return nil
	}
	now := w.s.cfg.clock.Now()
	policy := w.s.cfg.policy
	if w.s.bulk != nil {
		if err := w.rollIf(policy, now); err != nil {
			return err
		}
		if err := w.cur.fw.Write(batch); err != nil {
			return errorf("write", w.cur.path, err)
		}
		w.cur.info.LastUpdate = now
		return nil
	}
	for i := range batch {
		if err := w.rollIf(policy, now); err != nil {
			return err
		}
		w.buf = w.s.encode(w.buf[:0], batch[i])
		if _, err := w.cur.bw.Write(w.buf); err != nil {
			return errorf("write", w.cur.path, err)
		}
		w.cur.info.Size += int64(len(w.buf))
		w.cur.info.LastUpdate = now
	}
	return nil
}

// rollIf opens a part when there is none, or closes the current one and
// opens the next when the policy asks for it before an event.
func (w *FileWriter[T]) rollIf(policy RollingPolicy, now time.Time) error {
	if w.cur != nil && !policy.ShouldRollOnEvent(w.cur.info) {
		return nil
	}
	if err := w.closePart(); err != nil {
		return err
	}
	p, err := w.s.openPart(w.subtask, w.next, w.nonce, PartInfo{Created: now, LastUpdate: now})
	if err != nil {
		return err
	}
	w.next++
	w.cur = p
	return nil
}

// closePart completes the in-progress part, if any, and renames it to its
// pending name.
func (w *FileWriter[T]) closePart() error {
	p := w.cur
	if p == nil {
		return nil
	}
	w.cur = nil
	if err := p.finish(); err != nil {
		return err
	}
	pend := pendingPath(w.s.dir, p.name, w.nonce)
	if err := os.Rename(p.path, pend); err != nil {
		os.Remove(p.path)
		return errorf("close", p.path, err)
	}
	w.pending = append(w.pending, Committable{Pending: pend, Final: filepath.Join(w.s.dir, p.name)})
	return nil
}

// Tick is Flink's bucket inspection timer: the runtime calls it every
// CheckInterval, and it closes the in-progress part when the policy asks
// for it at the clock's time (a rollover interval or inactivity).
func (w *FileWriter[T]) Tick() error {
	if w.done || w.cur == nil {
		return nil
	}
	if w.s.cfg.policy.ShouldRollOnProcessingTime(w.cur.info, w.s.cfg.clock.Now()) {
		return w.closePart()
	}
	return nil
}

// PrepareCommit is the writer's part of checkpoint id, called before
// Snapshot: it closes the in-progress part and returns every part closed
// since the last PrepareCommit, pending, for Commit once the checkpoint is
// complete. It returns nil when nothing was written.
func (w *FileWriter[T]) PrepareCommit(id int64) ([]Committable, error) {
	if w.done {
		return nil, fmt.Errorf("stream/sink: prepare commit %s: %w", w.s.dir, errDone)
	}
	if err := w.closePart(); err != nil {
		return nil, err
	}
	out := w.pending
	w.pending = nil
	for k := range out {
		out[k].Checkpoint = id
	}
	return out, nil
}

// Finish ends a bounded input: it closes the in-progress part and returns
// the pending parts, which the job commits when every subtask has finished.
func (w *FileWriter[T]) Finish() ([]Committable, error) {
	out, err := w.PrepareCommit(EndOfInput)
	w.done = true
	return out, err
}

// Snapshot returns the writer's state: its subtask and the counter of the
// next part. A checkpoint takes it after PrepareCommit.
func (w *FileWriter[T]) Snapshot() []byte { return encodeState(w.subtask, w.next) }

// Abort ends a job that will not be restored: it removes the in-progress
// part and every hidden part of this writer's subtask from the counter it
// started at, pending or not; committed parts stay.
func (w *FileWriter[T]) Abort() error { return w.AbortKeeping(nil) }

// AbortKeeping ends a writer whose job checkpoints and may be restored: as
// Abort, but the pending parts that keep names stay, for the restored job
// commits them (the committables of checkpoints that may have completed).
func (w *FileWriter[T]) AbortKeeping(keep []Committable) error {
	w.done = true
	var err error
	if w.cur != nil {
		err = w.cur.abort()
		w.cur = nil
	}
	w.pending = nil
	kept := map[string]bool{}
	for _, c := range keep {
		kept[filepath.Base(c.Pending)] = true
	}
	// only its own files: another writer of the subtask (a zombie attempt's,
	// or the attempt that replaced this one) may be writing beside it
	rerr := w.s.scanNonces(func(name string, sub int, c uint64, _ partKind, nonce string) bool {
		return sub == w.subtask && c >= w.start && nonce == w.nonce && !kept[name]
	})
	return errors.Join(err, rerr)
}
