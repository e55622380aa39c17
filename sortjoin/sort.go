package sortjoin

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// DefaultMaxFanIn is SortOptions.MaxFanIn when it is zero.
const DefaultMaxFanIn = 64

// ctxCheckMask makes loops over records check the context once per 4096 records.
const ctxCheckMask = 4095

// errAborted stops a background spill when its Sorter is closed.
var errAborted = errors.New("sortjoin: spill aborted by Close")

// SortOptions configures a Sorter.
type SortOptions struct {
	// Name is the operator name used for reservations, spill files and errors
	// ("sort" if empty).
	Name string
	// MaxFanIn is the most inputs merged at once (DefaultMaxFanIn if zero, at least
	// 2); more runs than that are merged in several passes.
	MaxFanIn int
	// Async sorts and spills a full buffer in a background goroutine while Add fills
	// the other one; each buffer then has half the memory. A sorter whose half of
	// Memory could not hold a spill writer and a segment runs synchronously.
	Async bool
	// Memory is the most bytes the sorter reserves: buffers, index and spill I/O
	// buffers. Zero means as much as the manager grants. Sorters that share a
	// Manager set it to their share so that none of them starves the others.
	Memory int64
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o SortOptions) EnsureDefaults() SortOptions {
	if o.Name == "" {
		o.Name = "sort"
	}
	if o.MaxFanIn == 0 {
		o.MaxFanIn = DefaultMaxFanIn
	}
	o.MaxFanIn = max(o.MaxFanIn, 2)
	if o.Memory <= 0 {
		o.Memory = memory.Unlimited
	}
	return o
}

// SortStats describes a sort.
type SortStats struct {
	Records      int64 // records added
	Runs         int   // runs spilled while adding (the last buffer included if it was spilled)
	MergePasses  int   // intermediate merges, each writing one run from at most MaxFanIn runs
	SpilledBytes int64 // bytes written to spill files, runs and intermediate merges
	FanIn        int   // inputs of the final merge; 1 when the sort stayed in memory
}

// sortState is where a Sorter is in its life.
type sortState uint8

const (
	sortFilling  sortState = iota // Add accepts records
	sortFinished                  // Finish handed every resource to its Iterator
	sortClosed                    // Close (or a failed Finish) released everything
)

// Sorter is an external merge sort of (key, value) records by key, in ascending
// bytes.Compare order (not stable). It follows Flink's UnilateralSortMerger:
//
//	Add ──► sortBuffer (RecordBuffer + index) ──full──► radix sort ──► spill run ─┐
//	         ▲ sync: the same buffer, reset                                      │
//	         └ async: the other buffer, while a goroutine sorts and spills       │
//	Finish ─► no run: sort the buffer, iterate it from memory                    │
//	        └► runs: [intermediate merges of ≤ MaxFanIn runs] ─► loser tree ◄────┘
//	                                         (+ the last buffer, from memory)
//
// States: filling (Add) → finished (the Iterator owns everything) or closed.
//
// Memory (all from env.Memory, at most SortOptions.Memory): while filling, one
// buffer (two halves when Async) holding records, index and one spill writer's
// buffers. At Finish, the buffer not in use is released; the last buffer stays in
// memory as a merge input if the runs plus it fit in one merge (else it is spilled
// too), and the rest of the memory buys merge readers (spill.Options.ReaderMemory
// each) and, for intermediate merges, one writer. The fixed minimum, taken past the
// budget if need be: the manager's floor (memory.Manager.Floor, halved per buffer
// when Async), so that runs are never tiny whatever other operators hold, or
// one spill writer, 16 index slots and one record's segments if more, per
// buffer while filling; while merging, one writer and readers worth the floor
// (at least two), so that the fan-in under a tight budget costs passes over the
// data, not a pass per two runs.
//
// A Sorter is used by one goroutine. Call Add any number of times, then Finish
// once; Close may be called at any point and more than once. After a successful
// Finish, closing the returned Iterator releases everything (Close is then a
// no-op); after a failed one, everything is already released.
type Sorter struct {
	env   resource.Env
	opts  SortOptions
	state sortState
	err   error // sticky error of a failed spill

	bufs  [2]*sortBuffer // bufs[cur] is being filled; bufs[cur^1] exists only when Async
	cur   int
	space *spill.Space // created by the first spill
	runs  []spill.Handle
	job   *spillJob // Async: the spill in flight
	stats SortStats
}

// spillJob is one background spill of a full buffer.
type spillJob struct {
	done  chan struct{}
	abort atomic.Bool
	h     spill.Handle
	err   error
}

// NewSorter returns an empty Sorter.
func NewSorter(env resource.Env, opts SortOptions) *Sorter {
	s := &Sorter{env: env, opts: opts.EnsureDefaults()}
	if s.opts.Async && s.opts.Memory != memory.Unlimited &&
		s.opts.Memory/2 < env.Spill.WriterMemory()+int64(env.Memory.SegmentSize()) {
		s.opts.Async = false
	}
	s.bufs[0] = s.newBuffer(0)
	return s
}

func (s *Sorter) newBuffer(i int) *sortBuffer {
	limit := s.opts.Memory
	if s.opts.Async && limit != memory.Unlimited {
		limit /= 2
	}
	floor := s.env.Memory.Floor()
	if s.opts.Async {
		floor /= 2
	}
	owner := fmt.Sprintf("%s/buffer%d", s.opts.Name, i)
	return newSortBuffer(s.env.Memory, owner, limit, s.env.Spill.WriterMemory(), floor)
}

// Stats returns what the sort did so far; after Finish it is complete.
func (s *Sorter) Stats() SortStats { return s.stats }

func (s *Sorter) stateErr(op string) error {
	return fmt.Errorf("sortjoin: %s: %s after Finish or Close", s.opts.Name, op)
}

// Add appends one record; key and val are copied. When the buffer is full it is
// sorted and spilled (Async: handed to a background goroutine) first. An error from
// a spill is returned here and by every later call.
func (s *Sorter) Add(key, val []byte) error {
	if s.state != sortFilling {
		return s.stateErr("Add")
	}
	if s.err != nil {
		return s.err
	}
	if s.bufs[s.cur].add(key, val) {
		s.stats.Records++
		return nil
	}
	if err := s.spill(); err != nil {
		s.err = err
		return err
	}
	s.bufs[s.cur].add(key, val) // an empty buffer takes any record
	s.stats.Records++
	return nil
}

// spill writes the full current buffer as a run (Async: starts writing it in the
// background and switches buffers).
func (s *Sorter) spill() error {
	if s.space == nil {
		if s.env.FS == nil {
			return fmt.Errorf("sortjoin: %s: memory exhausted and no spill file system", s.opts.Name)
		}
		s.space = spill.NewSpace(s.env.FS, s.opts.Name, s.env.Spill)
	}
	b := s.bufs[s.cur]
	if !s.opts.Async {
		h, err := writeRun(s.space, s.opts.Name, b, len(s.runs), nil)
		b.reset()
		if err != nil {
			return err
		}
		s.addRun(h)
		return nil
	}
	if err := s.wait(); err != nil {
		return err
	}
	j := &spillJob{done: make(chan struct{})}
	space, name, run := s.space, s.opts.Name, len(s.runs)
	go func() {
		defer close(j.done)
		j.h, j.err = writeRun(space, name, b, run, &j.abort)
		b.reset()
	}()
	s.job = j
	s.cur ^= 1
	if s.bufs[s.cur] == nil {
		s.bufs[s.cur] = s.newBuffer(s.cur)
	}
	return nil
}

// wait waits for the background spill, if any, and records its run.
func (s *Sorter) wait() error {
	j := s.job
	if j == nil {
		return nil
	}
	<-j.done
	s.job = nil
	if j.err != nil {
		return j.err
	}
	s.addRun(j.h)
	return nil
}

func (s *Sorter) addRun(h spill.Handle) {
	s.runs = append(s.runs, h)
	s.stats.Runs++
	s.stats.SpilledBytes += h.Bytes
}

// writeRun sorts b and writes it to a new spill file of space as run number run of
// the operator name. abort, if not nil, is checked once per 4096 records.
func writeRun(space *spill.Space, name string, b *sortBuffer, run int, abort *atomic.Bool) (spill.Handle, error) {
	b.sort()
	w, err := space.Create()
	if err != nil {
		return spill.Handle{}, fmt.Errorf("sortjoin: %s: create run %d: %w", name, run, err)
	}
	var ks, vs [fetchBatch][]byte
	for i := 0; i < b.len(); {
		if i&ctxCheckMask < fetchBatch && abort != nil && abort.Load() {
			w.Abort()
			return spill.Handle{}, errAborted
		}
		n := b.fetch(i, &ks, &vs)
		for j := 0; j < n; j++ {
			if err := w.AppendKV(ks[j], vs[j]); err != nil {
				w.Abort()
				return spill.Handle{}, fmt.Errorf("sortjoin: %s: write run %d: %w", name, run, err)
			}
		}
		i += n
	}
	h, err := w.Finish()
	if err != nil {
		w.Abort()
		return spill.Handle{}, fmt.Errorf("sortjoin: %s: finish run %d: %w", name, run, err)
	}
	return h, nil
}

// Finish ends the input and returns the records in key order. The Iterator takes
// over the sorter's memory and spill files. Intermediate merges, if any, happen
// here; ctx is checked once per 4096 records in them and in the Iterator. On error
// everything is released.
func (s *Sorter) Finish(ctx context.Context) (Iterator, error) {
	if s.state != sortFilling {
		return nil, s.stateErr("Finish")
	}
	it, err := s.finish(ctx)
	if err != nil {
		_ = s.release()
		s.state = sortClosed
		return nil, err
	}
	s.state = sortFinished
	return it, nil
}

func (s *Sorter) finish(ctx context.Context) (Iterator, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sortjoin: %s: finish: %w", s.opts.Name, err)
	}
	if o := s.bufs[s.cur^1]; o != nil {
		o.release()
		s.bufs[s.cur^1] = nil
	}
	b := s.bufs[s.cur]
	s.bufs[s.cur] = nil
	if b.len() == 0 && len(s.runs) > 0 {
		b.release()
		b = nil
	} else {
		b.sort()
	}
	m := &mergeIter{
		ctx:   ctx,
		name:  s.opts.Name,
		opts:  s.opts,
		spill: s.env.Spill,
		res:   s.env.Memory.NewReservation(s.opts.Name + "/merge"),
		space: s.space,
		mem:   b,
		stats: &s.stats,
	}
	s.space = nil
	runs := s.runs
	s.runs = nil
	if err := m.start(runs); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// Close releases the sorter's memory and removes its spill files, stopping a
// background spill. It is idempotent, and a no-op after a successful Finish.
func (s *Sorter) Close() error {
	if s.state != sortFilling {
		return nil
	}
	s.state = sortClosed
	return s.release()
}

func (s *Sorter) release() error {
	if j := s.job; j != nil {
		j.abort.Store(true)
		<-j.done
		s.job = nil
	}
	for i, b := range s.bufs {
		if b != nil {
			b.release()
			s.bufs[i] = nil
		}
	}
	s.runs = nil
	if s.space != nil {
		sp := s.space
		s.space = nil
		if err := sp.Close(); err != nil {
			return fmt.Errorf("sortjoin: %s: remove spill files: %w", s.opts.Name, err)
		}
	}
	return nil
}
