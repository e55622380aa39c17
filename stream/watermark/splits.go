package watermark

// Splits generates the watermarks of one source subtask per split, as
// Flink's source operator does: every split gets its own generator from a
// Strategy and an output of a Multiplexer into the subtask's Output; events
// go to the split's generator with the immediate output, and EmitPeriodic
// asks every split's generator with the deferred output, then combines once.
// Not safe for concurrent use.
type Splits[T any] struct {
	strategy Strategy[T]
	ctx      Context
	mux      *Multiplexer
	byID     map[string]*Split[T]
	order    []*Split[T] // creation order, for EmitPeriodic
}

// Split is one split's timestamp assigner and generator.
type Split[T any] struct {
	id                  string
	assigner            Assigner[T]
	gen                 Generator[T]
	before              BeforeEventGenerator[T]   // gen, when it is one
	ahead               BeforeTimestampsGenerator // gen, when it is one
	immediate, periodic Output
}

// NewSplits returns the per-split watermarks of strategy s emitting to out.
func NewSplits[T any](s Strategy[T], c Context, out Output) (*Splits[T], error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	return &Splits[T]{strategy: s, ctx: c, mux: NewMultiplexer(out), byID: map[string]*Split[T]{}}, nil
}

// Split returns the split named id, creating it (and its generator) when it
// is new.
func (s *Splits[T]) Split(id string) (*Split[T], error) {
	if sp, ok := s.byID[id]; ok {
		return sp, nil
	}
	gen, err := s.strategy.NewGenerator(s.ctx)
	if err != nil {
		return nil, err
	}
	if err := s.mux.Register(id); err != nil {
		return nil, err
	}
	imm, _ := s.mux.Immediate(id)
	def, _ := s.mux.Deferred(id)
	sp := &Split[T]{id: id, assigner: s.strategy.Assigner(), gen: gen, immediate: imm, periodic: def}
	sp.before, _ = gen.(BeforeEventGenerator[T])
	sp.ahead, _ = gen.(BeforeTimestampsGenerator)
	s.byID[id] = sp
	s.order = append(s.order, sp)
	return sp, nil
}

// Restore creates the split named id starting at watermark wm (what it had
// reached when its position was snapshotted), so that the subtask's
// watermark does not fall back below it after a restore.
func (s *Splits[T]) Restore(id string, wm int64) error {
	if _, err := s.Split(id); err != nil {
		return err
	}
	return s.mux.Seed(id, wm)
}

// Watermark returns the watermark the split named id reached (Min when it
// has none), for a snapshot.
func (s *Splits[T]) Watermark(id string) int64 { return s.mux.Watermark(id) }

// Idle reports whether the split named id is idle: its generator marked
// it so (WithIdleness) and no event came since.
func (s *Splits[T]) Idle(id string) bool { return s.mux.OutputIdle(id) }

// SetPaused says whether the split named id is paused (watermark
// alignment): while it is, the time that passes does not count towards
// its idleness (WithIdleness), so that a split that is not read because it
// ran ahead does not go idle and release the watermark of the others.
func (s *Splits[T]) SetPaused(id string, paused bool) {
	if sp, ok := s.byID[id]; ok {
		if p, ok := sp.gen.(interface{ setPaused(bool) }); ok {
			p.setPaused(paused)
		}
	}
}

// Release forgets the split named id (it finished): it no longer holds the
// watermark back from the next update on.
func (s *Splits[T]) Release(id string) {
	sp, ok := s.byID[id]
	if !ok {
		return
	}
	delete(s.byID, id)
	for i, q := range s.order {
		if q == sp {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.mux.Unregister(id)
}

// EmitPeriodic asks every split's generator for its watermark, then
// combines: call it every auto-watermark interval.
func (s *Splits[T]) EmitPeriodic() {
	for _, sp := range s.order {
		sp.gen.OnPeriodicEmit(sp.periodic)
	}
	s.mux.OnPeriodicEmit()
}

// Multiplexer returns the multiplexer combining the splits.
func (s *Splits[T]) Multiplexer() *Multiplexer { return s.mux }

// Collect assigns event its timestamp (from the timestamp it carries,
// recordTimestamp), passes both to emit, and then to the split's generator,
// so a watermark the event causes follows it; a BeforeEventGenerator sees
// them before emit too. An assigner's failure is returned as a
// *TimestampError and nothing is emitted.
func (sp *Split[T]) Collect(event T, recordTimestamp int64, emit func(event T, timestamp int64)) error {
	ts, err := sp.assigner.Extract(event, recordTimestamp)
	if err != nil {
		return err
	}
	if sp.before != nil {
		sp.before.OnBeforeEvent(event, ts, sp.immediate)
	}
	emit(event, ts)
	sp.gen.OnEvent(event, ts, sp.immediate)
	return nil
}

// Batches reports whether the split's generator takes the timestamps of a
// batch at once (a TimestampGenerator, and a BeforeTimestampsGenerator if it
// is a BeforeEventGenerator): the source may then, for a batch of events,
// call Stamp, and then Ahead, emit the events it allows and Observe them
// until none is left, instead of Collect for each.
func (sp *Split[T]) Batches() bool {
	_, ok := sp.gen.(TimestampGenerator)
	return ok && (sp.before == nil || sp.ahead != nil)
}

// Ahead emits what the generator must send before the events of timestamps
// ts (BeforeTimestampsGenerator) and returns how many of them may be
// emitted and observed before Ahead is asked again for the rest: all of them
// for other generators.
func (sp *Split[T]) Ahead(ts []int64) int {
	if sp.ahead == nil || len(ts) == 0 {
		return len(ts)
	}
	return min(max(sp.ahead.OnBeforeTimestamps(ts, sp.immediate), 1), len(ts))
}

// Stamp sets ts[i] to the timestamp of events[i] (carrying
// recordTimestamp), as Collect would, and returns how many it set: all of
// them, or those before the event whose timestamp fails, with the error.
func (sp *Split[T]) Stamp(events []T, recordTimestamp int64, ts []int64) (int, error) {
	ts = ts[:len(events)]
	if sp.assigner.fn == nil {
		for i := range ts {
			ts[i] = recordTimestamp
		}
		return len(events), nil
	}
	for i := range events {
		t, err := sp.assigner.Extract(events[i], recordTimestamp)
		if err != nil {
			return i, err
		}
		ts[i] = t
	}
	return len(events), nil
}

// Observe passes the timestamps Stamp set, of events emitted, to the
// generator, when Batches.
func (sp *Split[T]) Observe(ts []int64) {
	sp.gen.(TimestampGenerator).OnTimestamps(ts)
}

// Passthrough reports whether the split leaves events as they come: no
// timestamp assigner (an event keeps the timestamp it carries) and a
// generator that ignores events (NoWatermarks). A source may then hand a
// whole batch on without calling Collect per event.
func (sp *Split[T]) Passthrough() bool {
	_, none := sp.gen.(noWatermarks[T])
	return none && sp.assigner.fn == nil
}
