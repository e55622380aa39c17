package stream

import (
	"fmt"
	"math"
	"slices"

	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// windowOp is Flink's WindowOperator (and EvictingWindowOperator when an
// evictor is set): elements go into the windows the assigner gives them,
// kept in keyed state with the window as namespace; the trigger decides
// per element and timer whether a window fires and/or purges; a cleanup
// timer at the window's end plus the allowed lateness drops its state.
type windowOp[T any, K comparable, W window.Window, IN, O any] struct {
	keyedBase[K]
	key       func(T) K
	assigner  window.Assigner[W]
	merging   window.MergingAssigner[W]
	eventTime bool
	trigger   window.Trigger[W]
	evictor   window.Evictor[W]
	lateness  int64
	lateTag   *OutputTag[T]
	mk        func(*state.Backend[K]) (contents[W, T, IN], error)
	fold      func([]T) []IN
	fn        ProcessWindowFunction[K, W, IN, O]

	acc      contents[W, T, IN]           // without an evictor
	list     *state.List[K, W, Record[T]] // with an evictor
	mappings *state.Value[K, state.Void, []window.Mapping[W]]
	timers   *state.Timers[K, W]
	tctx     triggerCtx[K, W]
	pctx     WindowContext[K, W]
	late     Context
	wm       int64
	out      *emitter[O]
	col      Collector[O]
	flushers []flusher
	wins     []W
	elems    evictElems[T]
	// known: the timers an element registers are registered already when
	// its window held contents before it (see addAndTrigger)
	known bool
}

func (p *windowOp[T, K, W, IN, O]) open(rt *taskRuntime) error {
	p.wm = NoTimestamp
	if err := p.openBackend(rt); err != nil {
		return err
	}
	var err error
	if p.evictor != nil {
		p.list, err = newListState[K, W, T](p.backend)
	} else {
		p.acc, err = p.mk(p.backend)
	}
	if err != nil {
		return err
	}
	if p.merging != nil {
		p.mappings, err = state.NewValue[K, state.Void, []window.Mapping[W]](p.backend,
			state.ValueDescriptor[[]window.Mapping[W]]{Name: "merging-window-set"})
		if err != nil {
			return err
		}
	}
	if p.timers, err = state.NewTimers[K, W](p.backend, "window-timers", p); err != nil {
		return err
	}
	p.wm = p.timers.CurrentWatermark()
	_, ett := any(p.trigger).(window.EventTimeTrigger)
	p.known = ett && p.eventTime && p.merging == nil && p.list == nil
	p.tctx = triggerCtx[K, W]{op: p.backend, timers: p.timers, now: p.pctx.now, states: map[string]*state.Value[K, W, []byte]{}}
	p.pctx.backend = p.backend
	if p.fn.Open != nil {
		return p.fn.Open(&p.pctx)
	}
	return nil
}

func (p *windowOp[T, K, W, IN, O]) close() error {
	var err error
	if p.fn.Close != nil && p.backend != nil {
		err = p.fn.Close()
	}
	if cerr := p.keyedBase.close(); err == nil {
		err = cerr
	}
	return err
}

// CurrentProcessingTime is the assigner's and evictor's context.
func (p *windowOp[T, K, W, IN, O]) CurrentProcessingTime() int64 { return p.pctx.now() }

// CurrentWatermark is the evictor's context.
func (p *windowOp[T, K, W, IN, O]) CurrentWatermark() int64 { return p.wm }

func (p *windowOp[T, K, W, IN, O]) push(b []Record[T]) error {
	for i := range b {
		if err := p.element(&b[i]); err != nil {
			return err
		}
	}
	return p.done()
}

func (p *windowOp[T, K, W, IN, O]) done() error {
	if p.tctx.err != nil {
		return p.tctx.err
	}
	if err := p.backend.Err(); err != nil {
		return err
	}
	return flushAll(p.flushers)
}

// setWindow points the contents at state window w.
func (p *windowOp[T, K, W, IN, O]) setWindow(w W) {
	if p.list != nil {
		p.list.SetNamespace(w)
	} else {
		p.acc.setWindow(w)
	}
}

// add adds r to the contents, reporting whether they held any before.
func (p *windowOp[T, K, W, IN, O]) add(r *Record[T]) bool {
	if p.list != nil {
		p.list.Add(*r)
		return false
	}
	return p.acc.add(r)
}

func (p *windowOp[T, K, W, IN, O]) clearContents() {
	if p.list != nil {
		p.list.Clear()
	} else {
		p.acc.clear()
	}
}

// element is Flink's WindowOperator.processElement.
func (p *windowOp[T, K, W, IN, O]) element(r *Record[T]) error {
	p.backend.SetCurrentKey(p.key(r.Value))
	var err error
	if p.wins, err = p.assigner.AssignWindows(&r.Value, r.Timestamp, p, p.wins[:0]); err != nil {
		return err
	}
	skipped := true
	if p.merging != nil {
		set := p.mergingSet()
		for _, w := range p.wins {
			actual, err := set.AddWindow(w, p.mergeFunc)
			if err != nil {
				return err
			}
			if p.isWindowLate(actual) {
				if err := set.RetireWindow(actual); err != nil {
					return err
				}
				continue
			}
			skipped = false
			sw, ok := set.StateWindow(actual)
			if !ok {
				return fmt.Errorf("stream: window: window %v is not in the in-flight window set", actual)
			}
			if err := p.addAndTrigger(r, actual, sw); err != nil {
				return err
			}
		}
		p.persist(set)
	} else {
		for _, w := range p.wins {
			if p.isWindowLate(w) {
				continue
			}
			skipped = false
			if err := p.addAndTrigger(r, w, w); err != nil {
				return err
			}
		}
	}
	if skipped && p.isElementLate(r.Timestamp) && p.lateTag != nil {
		p.late.ts = r.Timestamp
		Output(&p.late, *p.lateTag, r.Value)
	}
	return nil
}

// addAndTrigger adds r to window w (its contents in state window sw) and
// acts on the trigger's answer.
//
// With the EventTimeTrigger in event time, unmerged and without an
// evictor, a window that held contents before r has its trigger timer and
// its cleanup timer registered: every element added to it registered
// them unless the watermark had passed the window's end (then the trigger
// fires instead), that timer fires only at or after the end, the cleanup
// timer only at the cleanup time where it clears the contents, and only
// the clearing deletes them. Registering them again would change nothing,
// so the trigger runs with its registration skipped.
func (p *windowOp[T, K, W, IN, O]) addAndTrigger(r *Record[T], w, sw W) error {
	p.setWindow(sw)
	had := p.add(r) && p.known
	p.tctx.w = w
	p.tctx.skip = had
	res, err := p.trigger.OnElement(&r.Value, r.Timestamp, w, &p.tctx)
	p.tctx.skip = false
	if err != nil {
		return err
	}
	if err := p.act(res, w); err != nil {
		return err
	}
	if !had {
		p.registerCleanupTimer(w)
	}
	return nil
}

// act fires and/or purges window w (contents already set) as res says.
func (p *windowOp[T, K, W, IN, O]) act(res window.TriggerResult, w W) error {
	if res.IsFire() {
		if err := p.fire(w); err != nil {
			return err
		}
	}
	if res.IsPurge() {
		p.clearContents()
	}
	return nil
}

// fire emits window w's contents through the function, evicting before
// and after it when an evictor is set.
func (p *windowOp[T, K, W, IN, O]) fire(w W) error {
	p.pctx.w = w
	p.pctx.ts = w.MaxTimestamp()
	if p.list == nil {
		in, ok := p.acc.get()
		if !ok {
			return nil
		}
		return p.fn.Process(p.backend.CurrentKey(), &p.pctx, in, p.col)
	}
	recs := p.list.Get()
	if len(recs) == 0 {
		return nil
	}
	p.elems.reset(recs)
	if err := p.evictor.EvictBefore(&p.elems, w, p); err != nil {
		return err
	}
	in := p.fold(p.elems.values())
	if err := p.fn.Process(p.backend.CurrentKey(), &p.pctx, in, p.col); err != nil {
		return err
	}
	p.elems.reset(p.elems.kept())
	if err := p.evictor.EvictAfter(&p.elems, w, p); err != nil {
		return err
	}
	if kept := p.elems.kept(); len(kept) != len(recs) {
		p.list.Update(kept)
	}
	return nil
}

// mergeFunc is the operator's MergingWindowSet merge function.
func (p *windowOp[T, K, W, IN, O]) mergeFunc(result W, merged []W, stateResult W, mergedState []W) error {
	if p.eventTime && p.cleanupTime(result) <= p.wm {
		return fmt.Errorf("stream: window: the end timestamp of an event-time window cannot become earlier than the current watermark by merging: current watermark %d, window %v", p.wm, result)
	}
	if !p.eventTime && result.MaxTimestamp() <= p.pctx.now() {
		return fmt.Errorf("stream: window: the end timestamp of a processing-time window cannot become earlier than the current processing time by merging: current processing time %d, window %v", p.pctx.now(), result)
	}
	p.tctx.w = result
	p.tctx.merged = merged
	err := p.trigger.OnMerge(result, &p.tctx)
	p.tctx.merged = nil
	if err != nil {
		return err
	}
	for _, m := range merged {
		p.tctx.w = m
		if err := p.trigger.Clear(m, &p.tctx); err != nil {
			return err
		}
		p.deleteCleanupTimer(m)
	}
	if len(mergedState) > 0 {
		if p.list != nil {
			p.list.MergeNamespaces(stateResult, mergedState)
		} else {
			p.acc.merge(stateResult, mergedState)
		}
	}
	return nil
}

func (p *windowOp[T, K, W, IN, O]) mergingSet() *window.MergingWindowSet[W] {
	m, _ := p.mappings.Value()
	// the set changes its mappings in place: never the slice state holds
	return window.NewMergingWindowSet(p.merging, slices.Clone(m))
}

func (p *windowOp[T, K, W, IN, O]) persist(set *window.MergingWindowSet[W]) {
	if !set.Changed() {
		return
	}
	if m := set.Mappings(); len(m) > 0 {
		p.mappings.Update(m)
	} else {
		p.mappings.Clear()
	}
}

// cleanupTime is Flink's cleanupTime: the window's end plus the allowed
// lateness in event time (the largest int64 when that overflows), its end
// in processing time.
func (p *windowOp[T, K, W, IN, O]) cleanupTime(w W) int64 {
	if !p.eventTime {
		return w.MaxTimestamp()
	}
	t := w.MaxTimestamp() + p.lateness
	if t < w.MaxTimestamp() {
		return math.MaxInt64
	}
	return t
}

// isWindowLate: an event-time window whose cleanup time the watermark
// reached takes no more elements.
func (p *windowOp[T, K, W, IN, O]) isWindowLate(w W) bool {
	return p.eventTime && p.cleanupTime(w) <= p.wm
}

// isElementLate: an element is late when its timestamp plus the allowed
// lateness is at or below the watermark.
func (p *windowOp[T, K, W, IN, O]) isElementLate(ts int64) bool {
	return p.eventTime && ts+p.lateness <= p.wm
}

func (p *windowOp[T, K, W, IN, O]) registerCleanupTimer(w W) {
	t := p.cleanupTime(w)
	if t == math.MaxInt64 {
		return
	}
	if p.eventTime {
		p.timers.RegisterEventTimeTimer(w, t)
	} else {
		p.timers.RegisterProcessingTimeTimer(w, t)
	}
}

func (p *windowOp[T, K, W, IN, O]) deleteCleanupTimer(w W) {
	t := p.cleanupTime(w)
	if t == math.MaxInt64 {
		return
	}
	if p.eventTime {
		p.timers.DeleteEventTimeTimer(w, t)
	} else {
		p.timers.DeleteProcessingTimeTimer(w, t)
	}
}

// OnEventTime is called by the timer service for a due event-time timer.
func (p *windowOp[T, K, W, IN, O]) OnEventTime(t state.Timer[K, W]) error {
	return p.onTimer(t, true)
}

// OnProcessingTime is called by the timer service for a due
// processing-time timer.
func (p *windowOp[T, K, W, IN, O]) OnProcessingTime(t state.Timer[K, W]) error {
	return p.onTimer(t, false)
}

// onTimer is Flink's WindowOperator.onEventTime and onProcessingTime.
func (p *windowOp[T, K, W, IN, O]) onTimer(t state.Timer[K, W], event bool) error {
	w := t.Namespace
	var set *window.MergingWindowSet[W]
	if p.merging != nil {
		set = p.mergingSet()
		sw, ok := set.StateWindow(w)
		if !ok {
			// a timer of a window merged away whose trigger left it
			return nil
		}
		p.setWindow(sw)
	} else {
		p.setWindow(w)
	}
	p.tctx.w = w
	var res window.TriggerResult
	var err error
	if event {
		res, err = p.trigger.OnEventTime(t.Timestamp, w, &p.tctx)
	} else {
		res, err = p.trigger.OnProcessingTime(t.Timestamp, w, &p.tctx)
	}
	if err != nil {
		return err
	}
	if err := p.act(res, w); err != nil {
		return err
	}
	if p.eventTime == event && t.Timestamp == p.cleanupTime(w) {
		if err := p.clearAll(w, set); err != nil {
			return err
		}
	}
	if set != nil {
		p.persist(set)
	}
	return nil
}

// clearAll drops everything of window w: contents, trigger state and
// timers, the function's per-window state, its place in the merging set.
func (p *windowOp[T, K, W, IN, O]) clearAll(w W, set *window.MergingWindowSet[W]) error {
	p.clearContents()
	p.tctx.w = w
	if err := p.trigger.Clear(w, &p.tctx); err != nil {
		return err
	}
	if p.fn.Clear != nil {
		p.pctx.w = w
		if err := p.fn.Clear(&p.pctx); err != nil {
			return err
		}
	}
	if set != nil {
		return set.RetireWindow(w)
	}
	return nil
}

func (p *windowOp[T, K, W, IN, O]) onWatermark(wm int64) error {
	p.wm = wm
	if err := p.timers.AdvanceWatermark(wm); err != nil {
		return err
	}
	return p.done()
}

func (p *windowOp[T, K, W, IN, O]) onProcessingTime(now int64) error {
	if err := p.timers.AdvanceProcessingTime(now); err != nil {
		return err
	}
	return p.done()
}

func (p *windowOp[T, K, W, IN, O]) nextProcessingTime() (int64, bool) {
	return p.timers.NextProcessingTime()
}

// endKey fires the current key's timers at the end of time, event time
// then processing time, and starts the next key at the minimal watermark
// (BATCH mode).
func (p *windowOp[T, K, W, IN, O]) endKey() error {
	p.wm = watermark.Max
	if err := p.timers.AdvanceWatermark(watermark.Max); err != nil {
		return err
	}
	if err := p.timers.AdvanceProcessingTime(watermark.Max); err != nil {
		return err
	}
	if err := p.timers.AdvanceWatermark(NoTimestamp); err != nil {
		return err
	}
	p.wm = NoTimestamp
	if err := p.done(); err != nil {
		return err
	}
	p.backend.Clear() // one key's state at a time
	return nil
}

// evictElems are a window's elements handed to an evictor.
type evictElems[T any] struct {
	recs    []Record[T]
	evicted []bool
	vals    []T
	keep    []Record[T]
}

func (e *evictElems[T]) reset(recs []Record[T]) {
	e.recs = recs
	e.evicted = append(e.evicted[:0], make([]bool, len(recs))...)
}

func (e *evictElems[T]) Len() int              { return len(e.recs) }
func (e *evictElems[T]) Value(i int) any       { return &e.recs[i].Value }
func (e *evictElems[T]) Timestamp(i int) int64 { return e.recs[i].Timestamp }
func (e *evictElems[T]) Evict(i int)           { e.evicted[i] = true }

// kept returns the elements not evicted, in a fresh slice.
func (e *evictElems[T]) kept() []Record[T] {
	var out []Record[T]
	for i := range e.recs {
		if !e.evicted[i] {
			out = append(out, e.recs[i])
		}
	}
	return out
}

func (e *evictElems[T]) values() []T {
	e.vals = e.vals[:0]
	for i := range e.recs {
		if !e.evicted[i] {
			e.vals = append(e.vals, e.recs[i].Value)
		}
	}
	return e.vals
}
