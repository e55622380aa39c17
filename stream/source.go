package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// FromSource adds a source: every subtask runs a reader of src, one
// watermark generator per split (watermark.Splits) made by strategy, asked
// for watermarks every AutoWatermarkInterval. A bounded source ends with
// the maximal watermark, so every event-time timer fires.
func FromSource[T any](env *Env, src source.Source[T], strategy watermark.Strategy[T], name string) DataStream[T] {
	n := addNode[T](env, name)
	n.source = true
	if src == nil {
		env.fail(caller(1), fmt.Errorf("%s: nil source", name))
		return DataStream[T]{n: n}
	}
	if err := strategy.Err(); err != nil {
		env.fail(caller(1), fmt.Errorf("%s: %w", name, err))
	}
	n.bounded = src.Boundedness() == source.Bounded
	var enum source.Enumerator
	n.prepare = func(p int) (err error) {
		enum, err = src.Enumerator(p, env.restore.enumerator(n))
		n.valve = nil
		if err == nil && env.ck != nil {
			n.valve = newSplitValve(enum, p)
			enum = n.valve
		}
		return err
	}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		out, _ := outs[""].(output[T])
		if out == nil {
			out = discard[T]{}
		}
		sr := &sourceRun[T]{src: src, strategy: strategy, enum: enum, out: newEmitter(out, rt.batchSize), node: n}
		rt.source = sr
		return nil, sr, nil
	}
	return DataStream[T]{n: n}
}

// FromSlice adds a bounded source of items, without timestamps, split
// over the subtasks in order.
func FromSlice[T any](env *Env, items []T) DataStream[T] {
	return FromSource(env, source.FromSlice(items), watermark.NoWatermarks[T](), "FromSlice")
}

// FromSeq adds a bounded source of the values of seq, read by one subtask.
func FromSeq[T any](env *Env, seq iter.Seq[T]) DataStream[T] {
	return FromSource(env, source.FromSeq(seq), watermark.NoWatermarks[T](), "FromSeq").SetParallelism(1)
}

// discard is the output of a port without consumers.
type discard[T any] struct{}

func (discard[T]) push([]Record[T]) error { return nil }

// sourceRun is a source subtask: its reader, its splits' watermark
// generators, and the chain it feeds.
type sourceRun[T any] struct {
	base
	src      source.Source[T]
	strategy watermark.Strategy[T]
	enum     source.Enumerator
	out      *emitter[T]
	rt       *taskRuntime
	node     *node
	reader   source.Reader[T]
	state    *readerState
	err      error   // of a watermark output
	ts       []int64 // the timestamps of a batch (watermark.Split.Stamp)
	// noSplit: the subtask marked itself idle because its reader holds no
	// split; its next records make it active again
	noSplit bool
	// splitless counts the periodic ticks in a row that found the reader
	// without a split
	splitless int
	// stopped: the subtask emitted the barrier of a stop-with-savepoint and
	// reads nothing more
	stopped bool
}

func (s *sourceRun[T]) close() error {
	var err error
	if s.reader != nil {
		err = s.reader.Close()
		s.reader = nil
	}
	if s.state != nil {
		err = errors.Join(err, s.state.close())
		s.state = nil
	}
	return err
}

// snapshot writes the positions of the reader's splits into the operator
// list state SourceReaderState and the operator state to w, between two
// batches of the subtask's loop.
func (s *sourceRun[T]) snapshot(_ int64, w io.Writer) error {
	if s.state == nil || s.reader == nil {
		return fmt.Errorf("stream: %s: snapshot of a source that is not running", s.node.name)
	}
	return s.state.snapshot(s.reader.Positions(), w)
}

// readerClock is the job's clock as a source reader paces by it.
type readerClock struct{ c flow.Clock }

func (r readerClock) Now() time.Time { return r.c.Now() }

func (r readerClock) Sleep(ctx context.Context, d time.Duration) error {
	t := r.c.Timer(r.c.Now().Add(d))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clockDeadline returns a context that ends when the job's clock reaches t,
// or with parent.
func clockDeadline(parent context.Context, c flow.Clock, t time.Time) (context.Context, context.CancelFunc) {
	if _, ok := c.(flow.SystemClock); ok {
		return context.WithDeadline(parent, t)
	}
	ctx, cancel := context.WithCancel(parent)
	tm := c.Timer(t)
	go func() {
		select {
		case <-tm.C():
			cancel()
		case <-ctx.Done():
			tm.Stop()
		}
	}()
	return ctx, cancel
}

func (s *sourceRun[T]) run(rt *taskRuntime) error {
	s.rt = rt
	tc := rt.tc
	rc := source.ReaderContext{Subtask: tc.Subtask, Parallelism: tc.Parallelism, Splits: s.enum,
		Idle: tc.Metrics.AddIdle}
	if rate := rt.p.env.opts.SourceRate; rate > 0 {
		rc.Rate, rc.Clock = rate/float64(tc.Parallelism), readerClock{rt.clock}
	}
	r, err := s.src.Reader(rc)
	if err != nil {
		return err
	}
	s.reader = r
	st, restored, err := openReaderState(s.node.name, rt.mem, rt.restoredFor(s.node))
	if err != nil {
		return err
	}
	s.state = st
	r.AddSplits(restored)
	splits, err := watermark.NewSplits(s.strategy, watermark.Context{Clock: rt.clock}, s)
	if err != nil {
		return err
	}
	emit := func(v T, ts int64) { s.out.emit(v, ts) }
	every := rt.p.env.opts.AutoWatermarkInterval
	if rt.batch() {
		every = 100 * 365 * 24 * time.Hour // no watermarks before the end
	}
	jobCtx := tc.Context()
	clock := rt.clock
	next := clock.Now().Add(every)
	deadline := func(t time.Time) (context.Context, context.CancelFunc) { return clockDeadline(jobCtx, clock, t) }
	ctx, cancel := deadline(next)
	defer func() { cancel() }()
	if rt.ck != nil {
		rt.ck.trigger = func(id int64, stop bool) error {
			if err := s.out.flush(); err != nil {
				return err
			}
			err := rt.checkpoint(id, 0)
			s.node.valve.open(rt.subtask)
			s.stopped = s.stopped || stop
			return err
		}
		rt.ck.resume = func() { s.stopped = false }
	}
	for {
		if err := rt.drainMail(); err != nil {
			return err
		}
		if err := rt.processingTime(); err != nil {
			return err
		}
		if s.stopped { // until the job is cancelled, or the savepoint aborted
			select {
			case <-rt.ck.mb.wake:
			case <-jobCtx.Done():
				return jobCtx.Err()
			}
			continue
		}
		if !clock.Now().Before(next) {
			if err := s.out.flush(); err != nil {
				return err
			}
			// a split assigned but silent gets its generator too (Flink makes
			// them when splits are added), so idleness can release it
			held := r.Positions()
			for _, sp := range held {
				if _, err := splits.Split(sp.ID); err != nil {
					return err
				}
			}
			splits.EmitPeriodic()
			// a subtask without a split (more subtasks than splits) does not
			// hold back the watermark downstream, as Flink's SourceOperator;
			// it must have had none for a whole interval, so that a reader
			// between two splits of a bounded source stays active
			if len(held) > 0 {
				s.splitless = 0
			} else if s.splitless++; s.splitless >= 2 && !rt.batch() && !s.noSplit {
				s.noSplit = true
				s.MarkIdle()
			}
			if s.err != nil {
				return s.err
			}
			cancel()
			next = clock.Now().Add(every)
			ctx, cancel = deadline(next)
		}
		if rt.ck != nil && rt.ck.c.cfg.Unaligned {
			// read only with the outputs available, so that a trigger never
			// waits for credit (Flink's output availability)
			if blocked := rt.outputsBlocked(); blocked != nil {
				select {
				case <-blocked:
				case <-rt.ck.mb.wake:
				case <-ctx.Done():
				}
				if err := jobCtx.Err(); err != nil {
					return err
				}
				continue
			}
		}
		readCtx := ctx
		var readCancel context.CancelFunc
		if rt.ck != nil { // mail ends the read, so that a trigger waits for no record
			readCtx, readCancel = context.WithCancel(ctx)
			if !rt.ck.mb.reading(readCancel) {
				readCancel()
			}
		}
		b, err := r.Next(readCtx)
		if readCancel != nil {
			rt.ck.mb.reading(nil)
			readCancel()
		}
		switch {
		case errors.Is(err, io.EOF):
			if err := s.out.flush(); err != nil {
				return err
			}
			if err := rt.drainMail(); err != nil { // a trigger before the end
				return err
			}
			if err := rt.forwardWatermark(watermark.Max); err != nil {
				return err
			}
			return rt.finish()
		case err != nil && jobCtx.Err() == nil && readCtx.Err() != nil:
			continue // the periodic deadline, or mail
		case err != nil:
			return err
		case b.End:
			splits.Release(b.Split)
			continue
		}
		sp, err := splits.Split(b.Split)
		if err != nil {
			return err
		}
		if s.noSplit {
			s.noSplit = false
			s.MarkActive()
		}
		if sp.Passthrough() {
			s.out.emitAll(b.Records, NoTimestamp)
		} else if sp.Batches() {
			s.ts = slices.Grow(s.ts[:0], len(b.Records))[:len(b.Records)]
			n, err := sp.Stamp(b.Records, NoTimestamp, s.ts)
			s.out.emitStamped(b.Records[:n], s.ts[:n])
			sp.Observe(s.ts[:n])
			if err != nil {
				return fmt.Errorf("stream: split %s: %w", b.Split, err)
			}
		} else {
			for i := range b.Records {
				if err := sp.Collect(b.Records[i], NoTimestamp, emit); err != nil {
					return fmt.Errorf("stream: split %s: %w", b.Split, err)
				}
			}
		}
		if err := s.out.flush(); err != nil {
			return err
		}
		if s.err != nil {
			return s.err
		}
	}
}

// The watermark.Output of the splits' multiplexer: watermarks and
// idleness go through the chain after the records before them.

func (s *sourceRun[T]) EmitWatermark(wm int64) {
	if s.err != nil {
		return
	}
	if s.err = s.out.flush(); s.err != nil {
		return
	}
	if s.err = s.rt.forwardStatus(false); s.err != nil {
		return
	}
	s.err = s.rt.forwardWatermark(wm)
}

func (s *sourceRun[T]) MarkIdle() {
	if s.err == nil {
		if s.err = s.out.flush(); s.err == nil {
			s.err = s.rt.forwardStatus(true)
		}
	}
}

func (s *sourceRun[T]) MarkActive() {
	if s.err == nil {
		s.err = s.rt.forwardStatus(false)
	}
}
