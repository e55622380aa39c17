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
	run      runKeys[K]
	// a run's windows when assigned before it is processed: record i's
	// are runWins[runEnds[i-1]:runEnds[i]]; pcodes and pgroups are their
	// keys' codes and groups, one per window, for the prefetch
	runWins []W
	runEnds [keyRun]int32
	pcodes  []int32
	pgroups []int32
	pre     prefetchContents[W] // the contents when they prefetch
	// the batch path (addRun): the contents when they add a run at once,
	// and per window of the run its key, its record's value and index, and
	// whether the contents are new
	batch batchContents[K, W, T]
	// each: the assigner when it assigns a run at once; one: the run loaded
	// last has one window per record
	each  window.EachAssigner[W]
	one   bool
	tsBuf [keyRun]int64
	pkeys []K
	pvals []T
	prec  []int32
	fresh []bool
	elems evictElems[T]
	// known: the timers an element registers are registered already when
	// its window held contents before it (see addAndTrigger)
	known bool
	// fast: known, and the contents tell whether they held any: the
	// operator runs the EventTimeTrigger inline (see addFast)
	fast bool
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
	p.pre, _ = p.acc.(prefetchContents[W])
	_, ett := any(p.trigger).(window.EventTimeTrigger)
	p.known = ett && p.eventTime && p.merging == nil && p.list == nil
	p.fast = p.known && p.acc.tells()
	if p.fast {
		p.batch, _ = p.acc.(batchContents[K, W, T])
	}
	p.each, _ = p.assigner.(window.EachAssigner[W])
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

// push processes b in runs of keyRun records, their keys hashed first. In
// event time without merging the run's windows are assigned first too and
// the contents' entries prefetched (the watermark, hence lateness, does not
// change within a batch).
func (p *windowOp[T, K, W, IN, O]) push(b []Record[T]) error {
	ahead := p.eventTime && p.merging == nil
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&p.run, p.backend, p.key, run)
		if !ahead {
			for i := range run {
				p.run.setKey(p.backend, i)
				if err := p.element(&run[i]); err != nil {
					return err
				}
			}
			continue
		}
		n, aerr := p.assignRun(run)
		if aerr == nil && p.addRun(run) {
			continue
		}
		if p.batch != nil {
			p.prefetch()
		}
		for i := range n {
			p.run.setKey(p.backend, i)
			lo := int32(0)
			if i > 0 {
				lo = p.runEnds[i-1]
			}
			if err := p.addToWindows(&run[i], p.runWins[lo:p.runEnds[i]]); err != nil {
				return err
			}
		}
		if aerr != nil {
			return aerr
		}
	}
	return p.done()
}

// assignRun assigns the windows of run's records, with their keys' codes
// and groups, and prefetches their contents unless the batch path will (it
// prefetches as it adds); it returns how many records it assigned and the
// assigner's error for the next one.
func (p *windowOp[T, K, W, IN, O]) assignRun(run []Record[T]) (int, error) {
	p.one = false
	if p.each != nil && p.assignEach(run) {
		return len(run), nil
	}
	p.runWins, p.pcodes, p.pgroups = p.runWins[:0], p.pcodes[:0], p.pgroups[:0]
	for i := range run {
		var err error
		from := len(p.runWins)
		if p.runWins, err = p.assigner.AssignWindows(&run[i].Value, run[i].Timestamp, p, p.runWins); err != nil {
			if p.batch == nil {
				p.prefetch()
			}
			return i, err
		}
		p.runEnds[i] = int32(len(p.runWins))
		for range len(p.runWins) - from {
			p.pcodes = append(p.pcodes, p.run.codes[i])
			p.pgroups = append(p.pgroups, p.run.groups[i])
		}
	}
	if p.batch == nil { // the batch path prefetches as it adds
		p.prefetch()
	}
	return len(run), nil
}

// assignEach assigns run's windows with one call of an EachAssigner and
// reports whether it could: on an error the run is assigned one record at a
// time, which stops at the record that has it.
func (p *windowOp[T, K, W, IN, O]) assignEach(run []Record[T]) bool {
	n := len(run)
	ts := p.tsBuf[:n]
	for i := range run {
		ts[i] = run[i].Timestamp
	}
	p.runWins = slices.Grow(p.runWins[:0], n)[:n]
	if p.each.AssignEach(ts, p, p.runWins) != nil {
		return false
	}
	for i := range n {
		p.runEnds[i] = int32(i + 1)
	}
	p.pcodes = append(p.pcodes[:0], p.run.codes[:n]...)
	p.pgroups = append(p.pgroups[:0], p.run.groups[:n]...)
	p.one = true
	if p.batch == nil {
		p.prefetch()
	}
	return true
}

// addRun adds the run whose windows assignRun gave at once, when p.fast
// and the contents take a batch, and registers the timers of the windows
// whose contents are new, in the order addFast would. It reports false,
// having changed nothing, when the run needs the per-record path: a window
// whose end the watermark passed (late, or firing at once) or a record
// without windows (which may be late).
func (p *windowOp[T, K, W, IN, O]) addRun(run []Record[T]) bool {
	if p.batch == nil {
		return false
	}
	wm := p.timers.CurrentWatermark()
	n := len(p.runWins)
	p.pvals, p.fresh = slices.Grow(p.pvals[:0], n)[:n], slices.Grow(p.fresh[:0], n)[:n]
	keys := p.run.keys[:len(run)]
	var last W
	if p.one {
		for i, w := range p.runWins {
			// the windows of a run are mostly one: its end read once
			if (i == 0 || w != last) && w.MaxTimestamp() <= wm {
				return false
			}
			last = w
			p.pvals[i] = run[i].Value
		}
	} else {
		p.pkeys, p.prec = slices.Grow(p.pkeys[:0], n)[:n], slices.Grow(p.prec[:0], n)[:n]
		lo, j := int32(0), 0
		for i := range run {
			hi := p.runEnds[i]
			if hi == lo {
				return false
			}
			for _, w := range p.runWins[lo:hi] {
				if (j == 0 || w != last) && w.MaxTimestamp() <= wm {
					return false
				}
				last = w
				p.pkeys[j], p.pvals[j], p.prec[j] = p.run.keys[i], run[i].Value, int32(i)
				j++
			}
			lo = hi
		}
		keys = p.pkeys
	}
	if !p.batch.addEach(keys, p.pcodes, p.pgroups, p.runWins, p.pvals, p.fresh) {
		return false
	}
	for j, f := range p.fresh {
		if !f {
			continue
		}
		i := j
		if !p.one {
			i = int(p.prec[j])
		}
		p.run.setKey(p.backend, i)
		w := p.runWins[j]
		p.timers.RegisterNewEventTimeTimer(w, w.MaxTimestamp())
		if p.lateness != 0 {
			if t := p.cleanupTime(w); t != math.MaxInt64 {
				p.timers.RegisterNewEventTimeTimer(w, t)
			}
		}
	}
	return true
}

func (p *windowOp[T, K, W, IN, O]) prefetch() {
	if p.pre != nil {
		p.pre.prefetch(p.pcodes, p.pgroups, p.runWins)
	}
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

// element is Flink's WindowOperator.processElement for the current key.
func (p *windowOp[T, K, W, IN, O]) element(r *Record[T]) error {
	var err error
	if p.wins, err = p.assigner.AssignWindows(&r.Value, r.Timestamp, p, p.wins[:0]); err != nil {
		return err
	}
	return p.addToWindows(r, p.wins)
}

// addToWindows is processElement after the assigner gave r windows wins.
func (p *windowOp[T, K, W, IN, O]) addToWindows(r *Record[T], wins []W) error {
	skipped := true
	if p.merging != nil {
		set := p.mergingSet()
		for _, w := range wins {
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
		for _, w := range wins {
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
	if p.fast {
		return p.addFast(r, w)
	}
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
	// the EventTimeTrigger that did not fire registered its timer at the
	// window's MaxTimestamp: without lateness, the cleanup timer itself
	if !had && !(p.known && p.lateness == 0 && !res.IsFire()) {
		p.registerCleanupTimer(w)
	}
	return nil
}

// addFast is addAndTrigger when p.fast, the EventTimeTrigger inline: it
// fires w at once when the watermark passed its end (a late element within
// the allowed lateness), or else registers the timer at its end. The
// window's timers are registered when its contents are new and only then:
// a window holds contents from its first element to its cleanup, so new
// contents mean that the key has no timers in w and the registration needs
// no lookup that deduplicates.
func (p *windowOp[T, K, W, IN, O]) addFast(r *Record[T], w W) error {
	had := p.acc.add(r)
	end := w.MaxTimestamp()
	late := end <= p.timers.CurrentWatermark()
	if late {
		if err := p.fire(w); err != nil {
			return err
		}
	} else if !had {
		p.timers.RegisterNewEventTimeTimer(w, end)
	}
	// without lateness the cleanup timer is the one at the end
	if !had && (p.lateness != 0 || late) {
		if t := p.cleanupTime(w); t != math.MaxInt64 {
			p.timers.RegisterNewEventTimeTimer(w, t)
		}
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
	if p.fast && event {
		return p.onTimerFast(t.Timestamp, w)
	}
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

// onTimerFast is onTimer for an event-time timer when p.fast: the
// EventTimeTrigger fires at the window's end; the cleanup clears the
// contents and the function's window state. The trigger's Clear (deleting
// the timer at the end) is skipped: that timer fired before or is the one
// firing.
func (p *windowOp[T, K, W, IN, O]) onTimerFast(ts int64, w W) error {
	p.acc.setWindow(w)
	if ts == w.MaxTimestamp() {
		if err := p.fire(w); err != nil {
			return err
		}
	}
	if ts != p.cleanupTime(w) {
		return nil
	}
	p.acc.clear()
	if p.fn.Clear != nil {
		p.pctx.w = w
		return p.fn.Clear(&p.pctx)
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
