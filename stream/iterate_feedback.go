package stream

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
)

// feedbackQueue is the channel from subtask i of an iteration's tail to
// subtask i of its head, in the same process (Flink's BlockingQueueBroker).
// The tail never waits for the head: the loop has no cycle of waits, and
// backpressure on the credit queues of the loop's body cannot deadlock it.
// The records in flight around the loop are held in memory within the
// task's budget and spilled past it.
type feedbackQueue interface {
	// ready receives when records were added since the last take.
	ready() <-chan time.Time
	// drain pushes what was fed back to target, an output[T], in batches
	// of at most size, and says whether there was anything.
	drain(target any, size int) (bool, error)
	// end makes later feedback a no-op (the head ended) and releases the
	// queue's memory and spill files.
	end() error
}

// feedbackChunk is the step in which a feedback queue grows its
// reservation.
const feedbackChunk = 32 << 10

// feedbackChan is the feedbackQueue of records of type T. The tail pushes
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
type feedbackChan[T any] struct {
	owner    string
	codec    *memory.Codec[Record[T]]
	codecErr error
	fixed    int64 // the bytes of a Record[T]
	wake     chan time.Time

	mu       sync.Mutex
	ended    bool
	env      resource.Env
	res      *memory.Reservation
	space    *spill.Space
	used     int64 // bytes of the records in mem
	reserved int64
	mem      []Record[T]
	w        *spill.Writer // the run being written, after runs
	runs     []spill.Handle
	scratch  []byte
	spilled  int64 // records spilled

	// the head's alone
	spare []Record[T]
	batch []Record[T]
}

func newFeedback[T any](owner string) *feedbackChan[T] {
	c, err := memory.NewCodec[Record[T]]()
	return &feedbackChan[T]{owner: owner, codec: c, codecErr: err,
		fixed: int64(unsafe.Sizeof(Record[T]{})), wake: make(chan time.Time, 1)}
}

// testFeedbackEnded, when set by a test, is called when a feedback queue
// ended, with its spill FS, the names of the spill files it held and the
// records it spilled.
var testFeedbackEnded func(fs spill.FS, files []string, spilled int64)

// push is the tail's input: it appends copies of b, in memory or to the
// spill, and returns the record bytes it spilled.
func (f *feedbackChan[T]) push(env resource.Env, b []Record[T]) (int64, error) {
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
			continue
		}
		var n int
		if n, err = f.spill(&b[i]); err != nil {
			break
		}
		spilled += int64(n)
	}
	f.mu.Unlock()
	f.signal()
	return spilled, err
}

func (f *feedbackChan[T]) signal() {
	select {
	case f.wake <- time.Time{}:
	default:
	}
}

// size estimates the bytes r holds: a Record[T], and what its pointers
// reach (the length of its codec form).
func (f *feedbackChan[T]) size(r *Record[T]) int64 {
	if f.codec == nil || f.codec.Flat() {
		return f.fixed
	}
	f.scratch = f.codec.Append(f.scratch[:0], r)
	return f.fixed + int64(len(f.scratch))
}

// grow counts n more bytes in memory, growing the reservation a chunk at a
// time; false says the budget has no room for them.
func (f *feedbackChan[T]) grow(n int64) bool {
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
func (f *feedbackChan[T]) shrink(n int64) {
	f.used -= n
	if f.reserved-f.used < 2*feedbackChunk && f.used != 0 {
		return
	}
	target := (f.used + feedbackChunk - 1) / feedbackChunk * feedbackChunk
	f.res.Shrink(f.reserved - target)
	f.reserved = target
}

// spill appends r to the run being written, opening one if need be.
func (f *feedbackChan[T]) spill(r *Record[T]) (int, error) {
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

func (f *feedbackChan[T]) ready() <-chan time.Time { return f.wake }

// drain delivers one take: the records in memory if there are any, else
// every spilled run. It signals ready again when more is left.
func (f *feedbackChan[T]) drain(target any, size int) (bool, error) {
	out := target.(output[T])
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return false, nil
	}
	if len(f.mem) > 0 {
		recs, bytes := f.mem, f.used
		f.mem, f.spare = f.spare[:0], nil
		f.mu.Unlock()
		var err error
		for b := recs; len(b) > 0 && err == nil; {
			n := min(len(b), size)
			err = out.push(b[:n])
			b = b[n:]
		}
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
		return false, nil
	}
	for i, h := range runs {
		if err := f.replay(h, out, size); err != nil {
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

// pending says whether records wait in the queue; f.mu is held.
func (f *feedbackChan[T]) pending() bool { return len(f.mem) > 0 || f.w != nil || len(f.runs) > 0 }

// replay reads run h back and pushes its records to out in batches of at
// most size; it removes the run.
func (f *feedbackChan[T]) replay(h spill.Handle, out output[T], size int) (err error) {
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
		f.batch = make([]Record[T], 0, size)
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
			if err := f.flushBatch(out); err != nil {
				return err
			}
		}
	}
	return f.flushBatch(out)
}

func (f *feedbackChan[T]) flushBatch(out output[T]) error {
	if len(f.batch) == 0 {
		return nil
	}
	err := out.push(f.batch)
	clear(f.batch)
	f.batch = f.batch[:0]
	return err
}

func (f *feedbackChan[T]) end() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return nil
	}
	f.ended = true
	clear(f.mem)
	f.mem, f.runs, f.w = nil, nil, nil
	var err error
	if f.space != nil {
		files := f.space.Files()
		if cerr := f.space.Close(); cerr != nil {
			err = fmt.Errorf("stream: %s: %w", f.owner, cerr)
		}
		if testFeedbackEnded != nil {
			testFeedbackEnded(f.env.FS, files, f.spilled)
		}
	}
	if f.res != nil {
		if rerr := f.res.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("stream: %s: %w", f.owner, rerr)
		}
	}
	return err
}
