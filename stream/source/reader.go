package source

import (
	"context"
	"errors"
	"io"
	"math"
	"time"

	"github.com/weirdata/weir/clock"
)

// splitReader reads one split; each source has its own.
type splitReader[T any] interface {
	// next returns the next records, at most the batch size and at most
	// limit (a reader that reads whole blocks, as Parquet row groups, may
	// return more), in a slice the reader reuses at the next call. With no record ready it returns an
	// empty batch and how long to wait before asking again. It returns io.EOF
	// at the split's end.
	next(ctx context.Context, limit int) (batch []T, wait time.Duration, err error)
	// position is the split after the records next has returned.
	position() Split
	close() error
}

// opener opens a split at its position.
type opener[T any] func(ctx context.Context, s Split) (splitReader[T], error)

// reader is the one Reader of every source: it asks the enumerator for a
// split whenever it holds none. Of a bounded source it reads the splits it
// holds one after another in the order it got them, as Flink's
// IteratorSourceReader and FileSourceReader do; of an unbounded source a
// batch from each in turn. Either way a split with nothing to read now (a
// quiet socket) does not hold up the others.
type reader[T any] struct {
	rc      ReaderContext
	open    opener[T]
	clock   clock.Clock
	fair    bool             // take turns between splits (unbounded sources)
	waiting []Split          // added, not yet opened
	active  []splitReader[T] // opened, not finished
	turn    int              // the active split to ask first
	noMore  bool             // the enumerator has no more splits for this reader
	retry   time.Time        // do not ask the enumerator before this
	pace    *Throttle        // nil: no ReaderContext.Rate
	paused  map[string]bool  // splits not to read (watermark alignment), by id
}

func newReader[T any](rc ReaderContext, c config, kind Boundedness, open opener[T]) *reader[T] {
	r := &reader[T]{rc: rc, open: open, clock: c.clock, fair: kind == Unbounded}
	if rc.Rate > 0 {
		clk := rc.Clock
		if clk == nil {
			clk = c.clock
		}
		r.pace = NewThrottle(rc.Rate, clk)
	}
	return r
}

// AddSplits queues splits to read from their positions.
func (r *reader[T]) AddSplits(splits []Split) { r.waiting = append(r.waiting, splits...) }

// PauseOrResumeSplits stops reading the splits named in pause and reads
// those named in resume again.
func (r *reader[T]) PauseOrResumeSplits(pause, resume []string) {
	for _, id := range resume {
		delete(r.paused, id)
	}
	if len(pause) > 0 && r.paused == nil {
		r.paused = map[string]bool{}
	}
	for _, id := range pause {
		r.paused[id] = true
	}
}

// readable counts the active splits that are not paused.
func (r *reader[T]) readable() int {
	if len(r.paused) == 0 {
		return len(r.active)
	}
	n := 0
	for _, a := range r.active {
		if !r.paused[a.position().ID] {
			n++
		}
	}
	return n
}

// Positions returns the positions of the splits held.
func (r *reader[T]) Positions() []Split {
	out := make([]Split, 0, len(r.active)+len(r.waiting))
	for _, a := range r.active {
		out = append(out, a.position())
	}
	return append(out, r.waiting...)
}

// Next returns the next batch.
func (r *reader[T]) Next(ctx context.Context) (Batch[T], error) {
	for {
		if err := ctx.Err(); err != nil {
			return Batch[T]{}, err
		}
		// A bounded source's splits are opened one at a time, when the one
		// before is finished or paused.
		for len(r.waiting) > 0 && (r.fair || r.readable() == 0) {
			s := r.waiting[0]
			sr, err := r.open(ctx, s)
			if err != nil {
				return Batch[T]{}, err
			}
			r.waiting = r.waiting[1:]
			r.active = append(r.active, sr)
		}
		wait := time.Duration(-1)
		if len(r.active) == 0 && !r.noMore {
			if now := r.clock.Now(); now.Before(r.retry) {
				wait = r.retry.Sub(now)
			} else {
				g, err := r.rc.Splits.Request(r.rc.Subtask)
				if err != nil {
					return Batch[T]{}, err
				}
				switch g.Status {
				case Assigned:
					r.waiting = append(r.waiting, g.Split)
					continue
				case NoMore:
					r.noMore = true
				case Later:
					r.retry = now.Add(g.Retry)
					wait = g.Retry
				}
			}
		}
		if len(r.active) == 0 && r.noMore {
			return Batch[T]{}, io.EOF
		}
		if len(r.active) > 0 && r.readable() == 0 && len(r.waiting) == 0 {
			// every split is paused: wait for the runtime to resume one
			<-ctx.Done()
			return Batch[T]{}, ctx.Err()
		}
		if !r.fair {
			r.turn = 0
		}
		limit := math.MaxInt
		if r.pace != nil && len(r.active) > 0 {
			n, w := r.pace.Allowance()
			if n == 0 {
				if err := r.sleep(ctx, w); err != nil {
					return Batch[T]{}, err
				}
				continue
			}
			limit = n
		}
		for range len(r.active) {
			i := r.turn % len(r.active)
			sr := r.active[i]
			if len(r.paused) > 0 && r.paused[sr.position().ID] {
				r.turn = i + 1
				continue
			}
			batch, w, err := sr.next(ctx, limit)
			if errors.Is(err, io.EOF) {
				pos := sr.position()
				delete(r.paused, pos.ID)
				r.active = append(r.active[:i], r.active[i+1:]...)
				if err := sr.close(); err != nil {
					return Batch[T]{}, err
				}
				return Batch[T]{Split: pos.ID, First: pos.Records, End: true}, nil
			}
			if err != nil {
				return Batch[T]{}, err
			}
			if len(batch) > 0 {
				if r.fair {
					r.turn = i + 1
				}
				if r.pace != nil {
					r.pace.Took(len(batch))
				}
				pos := sr.position()
				return Batch[T]{Split: pos.ID, First: pos.Records - int64(len(batch)), Records: batch}, nil
			}
			r.turn = i + 1
			if wait < 0 || w < wait {
				wait = w
			}
		}
		if wait > 0 {
			if err := r.sleep(ctx, wait); err != nil {
				return Batch[T]{}, err
			}
		}
	}
}

// sleep waits d on the reader's clock, counted as idle time.
func (r *reader[T]) sleep(ctx context.Context, d time.Duration) error {
	clk := r.clock
	if r.pace != nil {
		clk = r.pace.clock
	}
	since := time.Now()
	err := clock.Sleep(ctx, clk, d)
	if r.rc.Idle != nil {
		r.rc.Idle(time.Since(since))
	}
	return err
}

// Close closes every open split.
func (r *reader[T]) Close() error {
	var errs []error
	for _, sr := range r.active {
		errs = append(errs, sr.close())
	}
	r.active = nil
	return errors.Join(errs...)
}
