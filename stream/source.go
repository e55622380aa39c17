package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

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
		enum, err = src.Enumerator(p, nil)
		return err
	}
	n.build = func(rt *taskRuntime, outs map[string]any) ([]any, operator, error) {
		out, _ := outs[""].(output[T])
		if out == nil {
			out = discard[T]{}
		}
		sr := &sourceRun[T]{src: src, strategy: strategy, enum: enum, out: newEmitter(out, rt.batchSize)}
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
	reader   source.Reader[T]
	err      error // of a watermark output
}

func (s *sourceRun[T]) close() error {
	if s.reader == nil {
		return nil
	}
	err := s.reader.Close()
	s.reader = nil
	return err
}

func (s *sourceRun[T]) run(rt *taskRuntime) error {
	s.rt = rt
	tc := rt.tc
	r, err := s.src.Reader(source.ReaderContext{Subtask: tc.Subtask, Parallelism: tc.Parallelism, Splits: s.enum})
	if err != nil {
		return err
	}
	s.reader = r
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
	next := time.Now().Add(every)
	deadline := func(t time.Time) (context.Context, context.CancelFunc) { return context.WithDeadline(jobCtx, t) }
	ctx, cancel := deadline(next)
	defer func() { cancel() }()
	for {
		if err := rt.processingTime(); err != nil {
			return err
		}
		if !time.Now().Before(next) {
			if err := s.out.flush(); err != nil {
				return err
			}
			// a split assigned but silent gets its generator too (Flink makes
			// them when splits are added), so idleness can release it
			for _, sp := range r.Positions() {
				if _, err := splits.Split(sp.ID); err != nil {
					return err
				}
			}
			splits.EmitPeriodic()
			if s.err != nil {
				return s.err
			}
			cancel()
			next = time.Now().Add(every)
			ctx, cancel = deadline(next)
		}
		b, err := r.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			if err := s.out.flush(); err != nil {
				return err
			}
			if err := rt.forwardWatermark(watermark.Max); err != nil {
				return err
			}
			return rt.finish()
		case err != nil && jobCtx.Err() == nil && ctx.Err() != nil:
			continue // the periodic deadline
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
		for i := range b.Records {
			if err := sp.Collect(b.Records[i], NoTimestamp, emit); err != nil {
				return fmt.Errorf("stream: split %s: %w", b.Split, err)
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
