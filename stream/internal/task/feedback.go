package task

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
	"github.com/weirdata/weir/stream/internal/core"
)

// FeedbackQueue is the channel from subtask i of an iteration's tail to
// subtask i of its head, in the same process (Flink's
// BlockingQueueBroker). The tail never waits for the head: the loop has
// no cycle of waits, and backpressure on the credit queues of the loop's
// body cannot deadlock it. The records in flight around the loop are held
// in memory within the task's budget and spilled past it.
//
// Checkpoint markers travel in it too: the tail marks where checkpoint n's
// barrier passed it, and the head, which logs the records fed back after
// its own barrier n, stops logging n when it reaches the marker.
type FeedbackQueue interface {
	// ready receives when records were added since the last take.
	ready() <-chan time.Time
	// drain delivers what was fed back to the head's target in batches of
	// at most size (each also to tap, when set), calling marker at each
	// checkpoint marker in order; it says whether any record came (markers
	// alone are not feedback).
	drain(size int, tap func(b any), marker func(id int64) error) (bool, error)
	// encode encodes a batch drain handed tap, for the head's log.
	encode(dst []byte, b any) ([]byte, error)
	// replay feeds encoded records (a restored log) to the head's target.
	replay(b []byte, size int) error
	// end makes later feedback a no-op (the head ended) and releases the
	// queue's memory and spill files.
	end() error
}

// feedbackChunk is the step in which a feedback queue grows its
// reservation.
const feedbackChunk = 32 << 10

// Feedback is the FeedbackQueue of records of type T. The tail pushes
// under the lock and never waits for the head; the head takes what was
// pushed under the lock and delivers it outside of it, so a tail chained
// into the head's own task can push while the head delivers.
//
// Records stay in memory while the queue's reservation grows (up to the
// manager's floor past the budget). When it cannot, the records go to a
// spill run, and so do all later ones until the head took every run, so
// the queue stays first in, first out:
//
//	tail ─▶ mem (reserved) ─────────────────────────────────▶ head: mem first,
//	   └──▶ run being written ─▶ finished runs (spill files) ─▶ then every run, in order
//
// Invariant under the lock: the records of mem precede those of runs and
// w, and whatever the head took precedes both. The head finishes the run
// being written when it takes the runs; it reads them with the record
// codec (value and timestamp) and removes each once delivered. An open
// writer holds Spill.WriterMemory and an open reader Spill.ReaderMemory,
// taken with Force: the queue needs them to make progress at all.
//
// Markers are positions in the sequence of records pushed (pushed counts
// them); the head counts what it delivered (taken) and stops at each.
type Feedback[T any] struct {
	owner    string
	codec    *memory.Codec[core.Record[T]]
	codecErr error
	fixed    int64 // the bytes of a Record[T]
	wake     chan time.Time
	target   core.Output[T]

	mu       sync.Mutex
	ended    bool
	env      resource.Env
	res      *memory.Reservation
	space    *spill.Space
	used     int64 // bytes of the records in mem
	reserved int64
	mem      []core.Record[T]
	w        *spill.Writer // the run being written, after runs
	runs     []spill.Handle
	scratch  []byte
	spilled  int64 // records spilled
	pushed   int64
	markers  []marker

	// the head's alone
	taken int64
	spare []core.Record[T]
	batch []core.Record[T]
}

type marker struct{ id, at int64 }

// NewFeedback returns the queue of records of type T of owner (a name for
// its reservation and spill files) into the head's target.
func NewFeedback[T any](owner string) *Feedback[T] {
	c, err := memory.NewCodec[core.Record[T]]()
	return &Feedback[T]{owner: owner, codec: c, codecErr: err,
		fixed: int64(unsafe.Sizeof(core.Record[T]{})), wake: make(chan time.Time, 1)}
}

// SetTarget sets the head's output the queue delivers to.
func (f *Feedback[T]) SetTarget(out core.Output[T]) { f.target = out }

// Push is the tail's input: it appends copies of b, in memory or to the
// spill, and returns the record bytes it spilled.
func (f *Feedback[T]) Push(env resource.Env, b []core.Record[T]) (int64, error) {
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return 0, nil // Flink's rule: feedback after the head's timeout is lost
	}
	if f.res == nil {
		f.env = env
		f.res = env.Memory.NewReservation("stream: " + f.owner)
		f.res.SetFloor(env.Memory.Floor())
	}
	var spilled int64
	var err error
	for i := range b {
		if f.w == nil && len(f.runs) == 0 && f.grow(f.size(&b[i])) {
			f.mem = append(f.mem, b[i])
			f.pushed++
			continue
		}
		var n int
		if n, err = f.spill(&b[i]); err != nil {
			break
		}
		f.pushed++
		spilled += int64(n)
	}
	f.mu.Unlock()
	f.signal()
	return spilled, err
}

// Mark records that the tail took its part of checkpoint id: the records
// pushed before were fed back before its barrier.
func (f *Feedback[T]) Mark(id int64) {
	f.mu.Lock()
	if !f.ended {
		f.markers = append(f.markers, marker{id: id, at: f.pushed})
	}
	f.mu.Unlock()
	f.signal()
}

func (f *Feedback[T]) signal() {
	select {
	case f.wake <- time.Time{}:
	default:
	}
}

// size estimates the bytes r holds: a Record[T], and what its pointers
// reach (the length of its codec form).
func (f *Feedback[T]) size(r *core.Record[T]) int64 {
	if f.codec == nil || f.codec.Flat() {
		return f.fixed
	}
	f.scratch = f.codec.Append(f.scratch[:0], r)
	return f.fixed + int64(len(f.scratch))
}

// grow counts n more bytes in memory, growing the reservation a chunk at a
// time; false says the budget has no room for them.
func (f *Feedback[T]) grow(n int64) bool {
	if f.used+n <= f.reserved {
		f.used += n
		return true
	}
	need := (f.used + n - f.reserved + feedbackChunk - 1) / feedbackChunk * feedbackChunk
	if f.res.Grow(need) != nil {
		return false
	}
	f.reserved += need
	f.used += n
	return true
}

// shrink uncounts n bytes, returning the unused chunks once two are free
// and all of them when nothing is left.
func (f *Feedback[T]) shrink(n int64) {
	f.used -= n
	if f.reserved-f.used < 2*feedbackChunk && f.used != 0 {
		return
	}
	target := (f.used + feedbackChunk - 1) / feedbackChunk * feedbackChunk
	f.res.Shrink(f.reserved - target)
	f.reserved = target
}

// spill appends r to the run being written, opening one if need be.
func (f *Feedback[T]) spill(r *core.Record[T]) (int, error) {
	if f.codecErr != nil {
		return 0, fmt.Errorf("stream: %s: the feedback exceeds the memory budget and cannot spill: %w", f.owner, f.codecErr)
	}
	if f.w == nil {
		if f.space == nil {
			f.space = spill.NewSpace(f.env.FS, f.owner, f.env.Spill)
		}
		w, err := f.space.Create()
		if err != nil {
			return 0, fmt.Errorf("stream: %s: %w", f.owner, err)
		}
		f.w = w
		f.res.Force(f.env.Spill.WriterMemory())
	}
	f.scratch = f.codec.Append(f.scratch[:0], r)
	if err := f.w.Append(f.scratch); err != nil {
		return 0, fmt.Errorf("stream: %s: %w", f.owner, err)
	}
	f.spilled++
	return len(f.scratch), nil
}

func (f *Feedback[T]) ready() <-chan time.Time { return f.wake }

// delivery is one drain's way of handing records to the head: in batches
// of at most size, to the tap too, stopping at the markers.
type delivery[T any] struct {
	f       *Feedback[T]
	size    int
	tap     func(b any)
	marker  func(id int64) error
	markers []marker
}

// push hands b to the head, calling the markers that fall within it.
func (d *delivery[T]) push(b []core.Record[T]) error {
	for len(b) > 0 {
		n := min(len(b), d.size)
		if len(d.markers) > 0 {
			n = int(min(int64(n), d.markers[0].at-d.f.taken))
		}
		if n > 0 {
			if d.tap != nil {
				d.tap(b[:n])
			}
			if err := d.f.target.Push(b[:n]); err != nil {
				return err
			}
			d.f.taken += int64(n)
			b = b[n:]
		}
		if err := d.due(); err != nil {
			return err
		}
	}
	return nil
}

// due calls the markers at the position reached.
func (d *delivery[T]) due() error {
	for len(d.markers) > 0 && d.markers[0].at <= d.f.taken {
		id := d.markers[0].id
		d.markers = d.markers[1:]
		d.f.mu.Lock()
		d.f.markers = d.f.markers[1:]
		d.f.mu.Unlock()
		if d.marker != nil {
			if err := d.marker(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// drain delivers one take: the records in memory if there are any, else
// every spilled run, and the markers among them. It signals ready again
// when more is left.
func (f *Feedback[T]) drain(size int, tap func(b any), onMarker func(id int64) error) (bool, error) {
	d := &delivery[T]{f: f, size: max(size, 1), tap: tap, marker: onMarker}
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return false, nil
	}
	d.markers = append([]marker(nil), f.markers...)
	if len(f.mem) > 0 {
		recs, bytes := f.mem, f.used
		f.mem, f.spare = f.spare[:0], nil
		f.mu.Unlock()
		err := d.push(recs)
		clear(recs)
		f.spare = recs[:0]
		f.mu.Lock()
		f.shrink(bytes)
		more := f.pending()
		f.mu.Unlock()
		if more {
			f.signal()
		}
		return true, err
	}
	if f.w != nil {
		w := f.w
		f.w = nil
		h, err := w.Finish()
		f.res.Shrink(f.env.Spill.WriterMemory())
		if err != nil {
			f.mu.Unlock()
			return true, fmt.Errorf("stream: %s: %w", f.owner, err)
		}
		f.runs = append(f.runs, h)
	}
	runs := f.runs
	f.runs = nil
	f.mu.Unlock()
	if len(runs) == 0 {
		// markers with no record before them: no feedback, which would
		// keep a head whose input ended from ending while checkpoints go
		// on
		return false, d.due()
	}
	for i, h := range runs {
		if err := f.replayRun(h, d); err != nil {
			f.mu.Lock()
			for _, h := range runs[i+1:] {
				_ = f.space.Remove(h) // end removes what is left, too
			}
			f.mu.Unlock()
			return true, err
		}
	}
	f.mu.Lock()
	more := f.pending()
	f.mu.Unlock()
	if more {
		f.signal()
	}
	return true, nil
}

// pending says whether records or markers wait in the queue; f.mu is
// held.
func (f *Feedback[T]) pending() bool {
	return len(f.mem) > 0 || f.w != nil || len(f.runs) > 0 || len(f.markers) > 0
}

// replayRun reads run h back and delivers its records; it removes the
// run.
func (f *Feedback[T]) replayRun(h spill.Handle, d *delivery[T]) (err error) {
	rmem := f.env.Spill.ReaderMemory()
	f.mu.Lock()
	f.res.Force(rmem)
	f.mu.Unlock()
	r, err := f.space.Open(h)
	defer func() {
		if r != nil {
			if cerr := r.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("stream: %s: %w", f.owner, cerr)
			}
		}
		f.mu.Lock()
		f.res.Shrink(rmem)
		if rerr := f.space.Remove(h); rerr != nil && err == nil {
			err = fmt.Errorf("stream: %s: %w", f.owner, rerr)
		}
		f.mu.Unlock()
	}()
	if err != nil {
		return fmt.Errorf("stream: %s: %w", f.owner, err)
	}
	if f.batch == nil {
		f.batch = make([]core.Record[T], 0, d.size)
	}
	for {
		b, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("stream: %s: %w", f.owner, err)
		}
		f.batch = f.batch[:len(f.batch)+1]
		if _, err := f.codec.Decode(b, &f.batch[len(f.batch)-1]); err != nil {
			return fmt.Errorf("stream: %s: %w", f.owner, err)
		}
		if len(f.batch) == cap(f.batch) {
			if err := f.flushBatch(d); err != nil {
				return err
			}
		}
	}
	return f.flushBatch(d)
}

func (f *Feedback[T]) flushBatch(d *delivery[T]) error {
	if len(f.batch) == 0 {
		return nil
	}
	err := d.push(f.batch)
	clear(f.batch)
	f.batch = f.batch[:0]
	return err
}

func (f *Feedback[T]) encode(dst []byte, b any) ([]byte, error) {
	if f.codecErr != nil {
		return nil, fmt.Errorf("stream: %s: a checkpoint logs the records fed back: %w", f.owner, f.codecErr)
	}
	return core.AppendRecords(f.codec, dst, b.([]core.Record[T])), nil
}

func (f *Feedback[T]) replay(b []byte, size int) error {
	if f.codecErr != nil {
		return fmt.Errorf("stream: %s: %w", f.owner, f.codecErr)
	}
	rs, err := core.DecodeRecords(f.codec, b)
	if err != nil {
		return fmt.Errorf("stream: %s: restore the records fed back: %w", f.owner, err)
	}
	for len(rs) > 0 {
		n := min(len(rs), max(size, 1))
		if err := f.target.Push(rs[:n]); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return nil
}

func (f *Feedback[T]) end() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return nil
	}
	f.ended = true
	clear(f.mem)
	f.mem, f.runs, f.w, f.markers = nil, nil, nil, nil
	var err error
	if f.space != nil {
		if cerr := f.space.Close(); cerr != nil {
			err = fmt.Errorf("stream: %s: %w", f.owner, cerr)
		}
	}
	if f.res != nil {
		if rerr := f.res.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("stream: %s: %w", f.owner, rerr)
		}
	}
	return err
}

// Tail is the operator of an iteration's tail: it pushes its input into
// the head's queue and marks there where each checkpoint's barrier passed.
type Tail[T any] struct {
	Base
	q  *Feedback[T]
	rt *Runtime
}

// NewTail returns the tail feeding q.
func NewTail[T any](q *Feedback[T]) *Tail[T] { return &Tail[T]{q: q} }

// Open keeps the runtime, for its memory and metrics.
func (t *Tail[T]) Open(s *Setup) error {
	t.rt = s.Runtime
	return nil
}

// Push feeds b back.
func (t *Tail[T]) Push(b []core.Record[T]) error {
	n, err := t.q.Push(t.rt.env, b)
	t.rt.Spilled(n)
	return err
}

// Snapshot marks the queue: what was fed back before precedes the barrier.
func (t *Tail[T]) Snapshot(id int64, _ io.Writer) error {
	t.q.Mark(id)
	return nil
}
