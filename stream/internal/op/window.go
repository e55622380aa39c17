package op

import (
	"fmt"
	"math"
	"slices"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// WindowFns are a ProcessWindowFunction's functions
// (stream.ProcessWindowFunction).
type WindowFns[K comparable, IN, C, Col any] struct {
	Open    func(ctx C) error
	Process func(key K, ctx C, elems []IN, out Col) error
	Clear   func(ctx C) error
	Close   func() error
}

// WindowCtx is what the context of a window function reads: the window,
// the record's state and the operator's keyed state.
type WindowCtx[K comparable, W window.Window] struct {
	Ctx
	Backend *state.Backend[K]
	W       W
}

// WindowSpec is how a window operator keeps its windows and what it
// calls: the assigner, trigger, evictor and allowed lateness of the
// WindowedStream; Contents makes the incremental contents and Fold turns
// a window's elements into the function's input when an evictor makes the
// window keep elements; LateID is the id of the late side output ("" for
// none).
type WindowSpec[T any, K comparable, W window.Window, IN any] struct {
	Key      func(T) K
	Assigner window.Assigner[W]
	Trigger  window.Trigger[W]
	Evictor  window.Evictor[W]
	Lateness int64
	LateID   string
	Contents func(*state.Backend[K]) (Contents[W, T, IN], error)
	Fold     func([]T) []IN
}

// Window is Flink's WindowOperator (and EvictingWindowOperator when an
// evictor is set): elements go into the windows the assigner gives them,
// kept in keyed state with the window as namespace; the trigger decides
// per element and timer whether a window fires and/or purges; a cleanup
// timer at the window's end plus the allowed lateness drops its state.
type Window[T any, K comparable, W window.Window, IN, O, C, Col any] struct {
	KeyedBase[K]
	key       func(T) K
	assigner  window.Assigner[W]
	merging   window.MergingAssigner[W]
	eventTime bool
	trigger   window.Trigger[W]
	evictor   window.Evictor[W]
	lateness  int64
	lateID    string
	mk        func(*state.Backend[K]) (Contents[W, T, IN], error)
	fold      func([]T) []IN
	fn        WindowFns[K, IN, C, Col]

	acc      Contents[W, T, IN]                // without an evictor
	list     *state.List[K, W, core.Record[T]] // with an evictor
	mappings *state.Value[K, state.Void, []window.Mapping[W]]
	timers   *state.Timers[K, W]
	tctx     triggerCtx[K, W]
	ctx      C
	st       *WindowCtx[K, W]
	late     Ctx
	wm       int64
	col      Col
	outs     *Outputs[O]
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

// NewWindow returns the window operator of spec calling fn, whose context
// ctx reads st.
func NewWindow[T any, K comparable, W window.Window, IN, O, C, Col any](maxP int, spec WindowSpec[T, K, W, IN], fn WindowFns[K, IN, C, Col],
	ctx C, col Col, st *WindowCtx[K, W], outs *Outputs[O]) *Window[T, K, W, IN, O, C, Col] {
	p := &Window[T, K, W, IN, O, C, Col]{key: spec.Key, assigner: spec.Assigner, trigger: spec.Trigger, evictor: spec.Evictor,
		lateness: spec.Lateness, lateID: spec.LateID, mk: spec.Contents, fold: spec.Fold, fn: fn, ctx: ctx, col: col, st: st,
		outs: outs, wm: watermark.Min}
	p.MaxP = maxP
	p.merging, _ = spec.Assigner.(window.MergingAssigner[W])
	p.eventTime = spec.Assigner.IsEventTime()
	p.late = st.Ctx
	p.late.WM = &p.wm
	return p
}

// WM returns the operator's watermark, for its context.
func (p *Window[T, K, W, IN, O, C, Col]) WM() *int64 { return &p.wm }

// Open opens the backend, the contents, the merging set, the timers and
// then the function.
func (p *Window[T, K, W, IN, O, C, Col]) Open(s *task.Setup) error {
	p.wm = watermark.Min
	if err := p.OpenBackend(s); err != nil {
		return err
	}
	var err error
	if p.evictor != nil {
		p.list, err = newListState[K, W, T](p.Backend)
	} else {
		p.acc, err = p.mk(p.Backend)
	}
	if err != nil {
		return err
	}
	if p.merging != nil {
		p.mappings, err = state.NewValue[K, state.Void, []window.Mapping[W]](p.Backend,
			state.ValueDescriptor[[]window.Mapping[W]]{Name: "merging-window-set"})
		if err != nil {
			return err
		}
	}
	if p.timers, err = state.NewTimers[K, W](p.Backend, "window-timers", windowTimers[T, K, W, IN, O, C, Col]{p}); err != nil {
		return err
	}
	p.timers.RestoreWatermark(*s.Watermark())
	p.wm = p.timers.CurrentWatermark()
	p.pre, _ = p.acc.(prefetchContents[W])
	_, ett := any(p.trigger).(window.EventTimeTrigger)
	p.known = ett && p.eventTime && p.merging == nil && p.list == nil
	p.fast = p.known && p.acc.tells()
	if p.fast {
		p.batch, _ = p.acc.(batchContents[K, W, T])
	}
	p.each, _ = p.assigner.(window.EachAssigner[W])
	p.tctx = triggerCtx[K, W]{op: p.Backend, timers: p.timers, now: p.st.Now, states: map[string]*state.Value[K, W, []byte]{}}
	p.st.Backend = p.Backend
	if p.fn.Open != nil {
		return p.fn.Open(p.ctx)
	}
	return nil
}

// Close closes the function and the backend.
func (p *Window[T, K, W, IN, O, C, Col]) Close() error {
	var err error
	if p.fn.Close != nil && p.Backend != nil {
		err = p.fn.Close()
	}
	if cerr := p.KeyedBase.Close(); err == nil {
		err = cerr
	}
	return err
}

// CurrentProcessingTime is the assigner's and evictor's context.
func (p *Window[T, K, W, IN, O, C, Col]) CurrentProcessingTime() int64 { return p.st.Now() }

// CurrentWatermark is the evictor's context.
func (p *Window[T, K, W, IN, O, C, Col]) CurrentWatermark() int64 { return p.wm }

// Push processes b in runs of keyRun records, their keys hashed first. In
// event time without merging the run's windows are assigned first too and
// the contents' entries prefetched (the watermark, hence lateness, does not
// change within a batch).
func (p *Window[T, K, W, IN, O, C, Col]) Push(b []core.Record[T]) error {
	ahead := p.eventTime && p.merging == nil
	for len(b) > 0 {
		run := b[:min(len(b), keyRun)]
		b = b[len(run):]
		loadKeys(&p.run, p.Backend, p.key, run)
		if !ahead {
			for i := range run {
				p.run.setKey(p.Backend, i)
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
			p.run.setKey(p.Backend, i)
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
func (p *Window[T, K, W, IN, O, C, Col]) assignRun(run []core.Record[T]) (int, error) {
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
func (p *Window[T, K, W, IN, O, C, Col]) assignEach(run []core.Record[T]) bool {
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
func (p *Window[T, K, W, IN, O, C, Col]) addRun(run []core.Record[T]) bool {
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
		p.run.setKey(p.Backend, i)
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

func (p *Window[T, K, W, IN, O, C, Col]) prefetch() {
	if p.pre != nil {
		p.pre.prefetch(p.pcodes, p.pgroups, p.runWins)
	}
}

func (p *Window[T, K, W, IN, O, C, Col]) done() error {
	if p.tctx.err != nil {
		return p.tctx.err
	}
	if err := p.Backend.Err(); err != nil {
		return err
	}
	return p.outs.Flush()
}

// setWindow points the contents at state window w.
func (p *Window[T, K, W, IN, O, C, Col]) setWindow(w W) {
	if p.list != nil {
		p.list.SetNamespace(w)
	} else {
		p.acc.setWindow(w)
	}
}

// add adds r to the contents, reporting whether they held any before.
func (p *Window[T, K, W, IN, O, C, Col]) add(r *core.Record[T]) bool {
	if p.list != nil {
		p.list.Add(*r)
		return false
	}
	return p.acc.add(r)
}

func (p *Window[T, K, W, IN, O, C, Col]) clearContents() {
	if p.list != nil {
		p.list.Clear()
	} else {
		p.acc.clear()
	}
}

// element is Flink's WindowOperator.processElement for the current key.
func (p *Window[T, K, W, IN, O, C, Col]) element(r *core.Record[T]) error {
	var err error
	if p.wins, err = p.assigner.AssignWindows(&r.Value, r.Timestamp, p, p.wins[:0]); err != nil {
		return err
	}
	return p.addToWindows(r, p.wins)
}

// addToWindows is processElement after the assigner gave r windows wins.
func (p *Window[T, K, W, IN, O, C, Col]) addToWindows(r *core.Record[T], wins []W) error {
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
	if skipped && p.isElementLate(r.Timestamp) && p.lateID != "" {
		p.late.TS = r.Timestamp
		if e := SideEmitter[T](&p.late, p.lateID); e != nil {
			e.Emit(r.Value, r.Timestamp)
		}
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
func (p *Window[T, K, W, IN, O, C, Col]) addAndTrigger(r *core.Record[T], w, sw W) error {
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
func (p *Window[T, K, W, IN, O, C, Col]) addFast(r *core.Record[T], w W) error {
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
func (p *Window[T, K, W, IN, O, C, Col]) act(res window.TriggerResult, w W) error {
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
func (p *Window[T, K, W, IN, O, C, Col]) fire(w W) error {
	p.st.W = w
	p.st.TS = w.MaxTimestamp()
	if p.list == nil {
		in, ok := p.acc.get()
		if !ok {
			return nil
		}
		return p.fn.Process(p.Backend.CurrentKey(), p.ctx, in, p.col)
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
	if err := p.fn.Process(p.Backend.CurrentKey(), p.ctx, in, p.col); err != nil {
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
func (p *Window[T, K, W, IN, O, C, Col]) mergeFunc(result W, merged []W, stateResult W, mergedState []W) error {
	if p.eventTime && p.cleanupTime(result) <= p.wm {
		return fmt.Errorf("stream: window: the end timestamp of an event-time window cannot become earlier than the current watermark by merging: current watermark %d, window %v", p.wm, result)
	}
	if !p.eventTime && result.MaxTimestamp() <= p.st.Now() {
		return fmt.Errorf("stream: window: the end timestamp of a processing-time window cannot become earlier than the current processing time by merging: current processing time %d, window %v", p.st.Now(), result)
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

func (p *Window[T, K, W, IN, O, C, Col]) mergingSet() *window.MergingWindowSet[W] {
	m, _ := p.mappings.Value()
	// the set changes its mappings in place: never the slice state holds
	return window.NewMergingWindowSet(p.merging, slices.Clone(m))
}

func (p *Window[T, K, W, IN, O, C, Col]) persist(set *window.MergingWindowSet[W]) {
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
func (p *Window[T, K, W, IN, O, C, Col]) cleanupTime(w W) int64 {
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
func (p *Window[T, K, W, IN, O, C, Col]) isWindowLate(w W) bool {
	return p.eventTime && p.cleanupTime(w) <= p.wm
}

// isElementLate: an element is late when its timestamp plus the allowed
// lateness is at or below the watermark.
func (p *Window[T, K, W, IN, O, C, Col]) isElementLate(ts int64) bool {
	return p.eventTime && ts+p.lateness <= p.wm
}

func (p *Window[T, K, W, IN, O, C, Col]) registerCleanupTimer(w W) {
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

func (p *Window[T, K, W, IN, O, C, Col]) deleteCleanupTimer(w W) {
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

// windowTimers is the operator as its timer service calls it.
type windowTimers[T any, K comparable, W window.Window, IN, O, C, Col any] struct {
	p *Window[T, K, W, IN, O, C, Col]
}

// OnEventTime is called by the timer service for a due event-time timer.
func (t windowTimers[T, K, W, IN, O, C, Col]) OnEventTime(tm state.Timer[K, W]) error {
	return t.p.onTimer(tm, true)
}

// OnProcessingTime is called by the timer service for a due
// processing-time timer.
func (t windowTimers[T, K, W, IN, O, C, Col]) OnProcessingTime(tm state.Timer[K, W]) error {
	return t.p.onTimer(tm, false)
}

// onTimer is Flink's WindowOperator.onEventTime and onProcessingTime.
func (p *Window[T, K, W, IN, O, C, Col]) onTimer(t state.Timer[K, W], event bool) error {
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
func (p *Window[T, K, W, IN, O, C, Col]) onTimerFast(ts int64, w W) error {
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
		p.st.W = w
		return p.fn.Clear(p.ctx)
	}
	return nil
}

// clearAll drops everything of window w: contents, trigger state and
// timers, the function's per-window state, its place in the merging set.
func (p *Window[T, K, W, IN, O, C, Col]) clearAll(w W, set *window.MergingWindowSet[W]) error {
	p.clearContents()
	p.tctx.w = w
	if err := p.trigger.Clear(w, &p.tctx); err != nil {
		return err
	}
	if p.fn.Clear != nil {
		p.st.W = w
		if err := p.fn.Clear(p.ctx); err != nil {
			return err
		}
	}
	if set != nil {
		return set.RetireWindow(w)
	}
	return nil
}

// OnWatermark fires the windows the watermark passed.
func (p *Window[T, K, W, IN, O, C, Col]) OnWatermark(wm int64) error {
	p.wm = wm
	if err := p.timers.AdvanceWatermark(wm); err != nil {
		return err
	}
	return p.done()
}

// OnProcessingTime fires the processing-time timers due at now.
func (p *Window[T, K, W, IN, O, C, Col]) OnProcessingTime(now int64) error {
	if err := p.timers.AdvanceProcessingTime(now); err != nil {
		return err
	}
	return p.done()
}

// EndInput fires, once every input ended, the processing-time timers
// still pending, each at its own time, in order: the last processing-time
// windows of a bounded input (a file read to its end, a socket whose
// server closed) are emitted, where Flink's WindowOperator drops them.
// Event-time windows fired at the maximal watermark before.
func (p *Window[T, K, W, IN, O, C, Col]) EndInput() error {
	if err := p.timers.AdvanceProcessingTime(watermark.Max); err != nil {
		return err
	}
	return p.done()
}

// NextProcessingTime returns the earliest processing-time timer.
func (p *Window[T, K, W, IN, O, C, Col]) NextProcessingTime() (int64, bool) {
	return p.timers.NextProcessingTime()
}

// EndKey fires the current key's timers at the end of time, event time
// then processing time, and starts the next key at the minimal watermark
// (BATCH mode).
func (p *Window[T, K, W, IN, O, C, Col]) EndKey() error {
	p.wm = watermark.Max
	if err := p.timers.AdvanceWatermark(watermark.Max); err != nil {
		return err
	}
	if err := p.timers.AdvanceProcessingTime(watermark.Max); err != nil {
		return err
	}
	if err := p.timers.AdvanceWatermark(watermark.Min); err != nil {
		return err
	}
	p.wm = watermark.Min
	if err := p.done(); err != nil {
		return err
	}
	p.Backend.Clear() // one key's state at a time
	return nil
}

// evictElems are a window's elements handed to an evictor.
type evictElems[T any] struct {
	recs    []core.Record[T]
	evicted []bool
	vals    []T
	keep    []core.Record[T]
}

func (e *evictElems[T]) reset(recs []core.Record[T]) {
	e.recs = recs
	e.evicted = append(e.evicted[:0], make([]bool, len(recs))...)
}

func (e *evictElems[T]) Len() int              { return len(e.recs) }
func (e *evictElems[T]) Value(i int) any       { return &e.recs[i].Value }
func (e *evictElems[T]) Timestamp(i int) int64 { return e.recs[i].Timestamp }
func (e *evictElems[T]) Evict(i int)           { e.evicted[i] = true }

// kept returns the elements not evicted, in a fresh slice.
func (e *evictElems[T]) kept() []core.Record[T] {
	var out []core.Record[T]
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
