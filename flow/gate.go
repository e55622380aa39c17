package flow

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/weirdata/weir/internal/ring"
)

// ItemKind says what a Gate returned.
type ItemKind uint8

const (
	// ItemNone: nothing is ready.
	ItemNone ItemKind = iota
	// ItemBatch: input Item.Input has a batch; Input[T](tc, i).Batch()
	// returns it.
	ItemBatch
	// ItemWatermark: the task's watermark rose to Item.Value.
	ItemWatermark
	// ItemWatermarkStatus: the task turned idle (Item.Value StatusIdle) or
	// active again (StatusActive).
	ItemWatermarkStatus
	// ItemBarrier: every channel of every input delivered checkpoint barrier
	// Item.Value (or ended).
	ItemBarrier
	// ItemEndOfInput: every producer of input Item.Input ended.
	ItemEndOfInput
	// ItemUnalignedBarrier: checkpoint barrier Item.Value came on a first
	// channel (or its alignment timed out, Unalign): the task snapshots at
	// once. The batches that precede the barrier on each channel follow as
	// ItemInFlight or with Item.InFlight set, until ItemChannelStateEnd.
	ItemUnalignedBarrier
	// ItemInFlight: a batch of channel Item.Channel of input Item.Input
	// that a barrier overtook; Batch returns it, to persist only: it comes
	// again as an ItemBatch to process.
	ItemInFlight
	// ItemChannelStateEnd: every channel delivered barrier Item.Value and
	// every batch it overtook came with Item.InFlight: the channel state of
	// the unaligned checkpoint is complete.
	ItemChannelStateEnd
)

// String returns the kind's name.
func (k ItemKind) String() string {
	switch k {
	case ItemNone:
		return "None"
	case ItemBatch:
		return "Batch"
	case ItemWatermark:
		return "Watermark"
	case ItemWatermarkStatus:
		return "WatermarkStatus"
	case ItemBarrier:
		return "Barrier"
	case ItemEndOfInput:
		return "EndOfInput"
	case ItemUnalignedBarrier:
		return "UnalignedBarrier"
	case ItemInFlight:
		return "InFlight"
	case ItemChannelStateEnd:
		return "ChannelStateEnd"
	}
	return fmt.Sprintf("ItemKind(%d)", uint8(k))
}

// Item is what a Gate returns: its kind, the input it concerns (batches and
// ends of input) and its value (watermarks, statuses, barriers). A batch
// also names its channel (the producer subtask) and says whether it is
// in flight: it precedes the barrier of the unaligned checkpoint in
// progress, so it belongs to that checkpoint's channel state.
type Item struct {
	Kind  ItemKind
	Input int
	Value int64
	// Meta is the Meta of the barrier of a barrier item (ItemBarrier,
	// ItemUnalignedBarrier, ItemChannelStateEnd).
	Meta     int64
	Channel  int
	InFlight bool
}

// Gate is a task's input gate (Flink's InputGate with its
// CheckpointedInputGate and the StatusWatermarkValves of a stream task's
// input processor): one per TaskContext, over all the task's inputs, which
// must be pipelined. It returns the next item from any input, the channels
// taken in the order they got data, for a stream task's loop:
//
//   - A batch: Poll says which input has one and Input[T](tc, i).Batch()
//     returns it, typed, without allocation. The batch is the body's until
//     the gate's next Poll or Next, when it is recycled.
//   - The task's watermark and watermark status: each input's channels are
//     combined as Flink's StatusWatermarkValve does (see valve), the inputs
//     as Flink's AbstractStreamOperator does for several inputs (the minimum
//     over the inputs that are not idle; idle when all are). Ended channels
//     and inputs no longer hold the watermark back.
//   - A checkpoint barrier, aligned over every channel of every input: a
//     channel that delivered barrier n is blocked (its queue fills and its
//     producer stops when out of credit) until every channel not ended
//     delivered it; then the gate returns one ItemBarrier and reads every
//     channel again. Channels deliver barriers in order; a different barrier
//     while aligning is an error, and so is an EndOfSuperstep (iterations
//     read their inputs through Readers).
//   - The end of an input, once every producer of it ended; when every
//     input ended Poll and Next return io.EOF.
//
// Contract: the gate belongs to the task's goroutine, which reads its inputs
// only through the gate once it called TaskContext.Gate. Poll never blocks;
// when it returns ok false, the body waits on Ready (in a select with its
// timers, say; it reports the time with TaskMetrics.AddIdle) or calls Wait
// or Next, which count the time as idle. A receive from Ready may be
// spurious: Poll again.
type Gate struct {
	tc  *TaskContext
	ins []gateInput

	mu       sync.Mutex
	fifo     ring.FIFO // inputs with data, in the order they announced it
	queued   []bool    // input is in fifo
	sleeping bool      // Poll found nothing: the next announce signals ready
	ready    chan struct{}

	// the task's goroutine only
	valves   []valve
	comb     combined
	live     int // inputs not ended
	chans    int // channels not ended, over all inputs
	aligning bool
	barrier  int64
	meta     int64 // of the barrier in progress
	nBlock   int   // channels blocked on the barrier
	// alignStart is when the barrier being aligned came on its first
	// channel; aligned how long the last alignment took
	alignStart time.Time
	aligned    time.Duration
	tracking   bool     // barriers are counted, channels not blocked
	unaligned  bool     // every barrier is taken unaligned
	unal       bool     // the barrier in progress is unaligned
	got        [][]bool // per input and channel: delivered the barrier in progress
	peeks      []peek   // overtaken messages to return as ItemInFlight
	prio       chan struct{}

	out  [4]Item
	nOut int
	next int
	last int // input whose batch Poll returned last, or -1
}

// gateInput is a Reader as its task's gate sees it.
type gateInput interface {
	attachGate(g *Gate, i int) error
	// pollGate takes the next message, keeping a batch for Batch; src is
	// its channel.
	pollGate() (ev Event, src int, batch bool, ok bool)
	// takePriority takes a priority event of any channel.
	takePriority() (ev Event, ok bool)
	// peek makes message k of channel src's queue, if a batch, the current
	// batch without taking it.
	peek(src, k int) bool
	endChannel(src int)
	channelCount() (n int, ended []bool)
	blockChannel(src int)
	unblockChannels()
	recycle()
}

// Gate returns the task's input gate, made on the first call. It panics,
// which Execute turns into the task's error, when an input is not
// pipelined.
func (tc *TaskContext) Gate() *Gate {
	if tc.gate != nil {
		return tc.gate
	}
	n := len(tc.inputs)
	g := &Gate{
		tc: tc, ins: make([]gateInput, n),
		fifo: ring.New(n), queued: make([]bool, n), ready: make(chan struct{}, 1),
		valves: make([]valve, n), comb: newCombined(n), live: n, last: -1,
		got: make([][]bool, n), prio: make(chan struct{}, 1),
	}
	for i, in := range tc.inputs {
		gi, ok := in.(gateInput)
		if !ok {
			panic(fmt.Sprintf("flow: vertex %q input %d cannot be read through a gate", tc.Vertex, i))
		}
		g.ins[i] = gi
		nch, ended := gi.channelCount()
		g.valves[i] = newValve(nch)
		g.got[i] = make([]bool, nch)
		for p, e := range ended {
			if e {
				g.valves[i].end(p)
			} else {
				g.chans++
			}
		}
	}
	for i, gi := range g.ins {
		if err := gi.attachGate(g, i); err != nil {
			panic(err.Error())
		}
	}
	tc.gate = g
	return g
}

// announce records that input i has data; producers call it.
func (g *Gate) announce(i int) {
	g.mu.Lock()
	if !g.queued[i] {
		g.queued[i] = true
		g.fifo.Push(i)
	}
	if g.sleeping {
		g.sleeping = false
		select {
		case g.ready <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
}

// announcePriority records that a priority event came: a task whose
// outputs are full waits on Priority for it.
func (g *Gate) announcePriority() {
	select {
	case g.prio <- struct{}{}:
	default:
	}
	select {
	case g.ready <- struct{}{}:
	default:
	}
}

// popInput returns the next input with data, or -1.
func (g *Gate) popInput() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fifo.Len() == 0 {
		g.sleeping = true
		return -1
	}
	i := g.fifo.Pop()
	g.queued[i] = false
	return i
}

// Ready returns a channel that receives when Poll may have an item.
func (g *Gate) Ready() <-chan struct{} { return g.ready }

// Poll returns the next item without blocking: ok false when nothing is
// ready, io.EOF once every input ended.
func (g *Gate) Poll() (it Item, ok bool, err error) {
	if g.last >= 0 {
		g.ins[g.last].recycle()
		g.last = -1
	}
	for {
		if g.next < g.nOut {
			it = g.out[g.next]
			g.next++
			return it, true, nil
		}
		if it, ok := g.nextPeek(); ok {
			return it, true, nil
		}
		if g.aligning && g.unal && g.nBlock == g.chans && len(g.peeks) == 0 {
			g.endBarrier()
			return Item{Kind: ItemChannelStateEnd, Input: -1, Value: g.barrier, Meta: g.meta}, true, nil
		}
		if g.aligning && !g.unal && g.nBlock == g.chans {
			g.endBarrier()
			g.aligned = time.Since(g.alignStart)
			for _, in := range g.ins {
				in.unblockChannels()
			}
			return Item{Kind: ItemBarrier, Input: -1, Value: g.barrier, Meta: g.meta}, true, nil
		}
		if g.live == 0 {
			return Item{}, false, io.EOF
		}
		i := g.popInput()
		if i < 0 {
			return Item{}, false, nil
		}
		ev, src, batch, ok := g.ins[i].pollGate()
		if !ok {
			continue
		}
		// a batch of a channel whose barrier did not come yet precedes it
		inFlight := batch && g.aligning && g.unal && !g.got[i][src]
		if batch {
			g.last = i
			return Item{Kind: ItemBatch, Input: i, Channel: src, InFlight: inFlight}, true, nil
		}
		if err := g.event(i, ev); err != nil {
			return Item{}, false, err
		}
	}
}

// PollPriority takes a priority event of any input (an unaligned
// checkpoint barrier) ahead of the data, for a task that reads no data
// because its outputs are full: ok false when there is none.
func (g *Gate) PollPriority() (it Item, ok bool, err error) {
	if g.last >= 0 {
		g.ins[g.last].recycle()
		g.last = -1
	}
	if g.next < g.nOut {
		it = g.out[g.next]
		g.next++
		return it, true, nil
	}
	if it, ok := g.nextPeek(); ok {
		return it, true, nil
	}
	if g.aligning && g.unal && g.nBlock == g.chans {
		g.endBarrier()
		return Item{Kind: ItemChannelStateEnd, Input: -1, Value: g.barrier, Meta: g.meta}, true, nil
	}
	for i, in := range g.ins {
		ev, ok := in.takePriority()
		if !ok {
			continue
		}
		if err := g.event(i, ev); err != nil {
			return Item{}, false, err
		}
		if g.next < g.nOut {
			it = g.out[g.next]
			g.next++
			return it, true, nil
		}
	}
	return Item{}, false, nil
}

// Priority returns a channel that receives when a priority event came.
func (g *Gate) Priority() <-chan struct{} { return g.prio }

// peek is the next message a barrier overtook on channel src of input i
// and how many are left.
type peek struct{ i, src, k, n int }

// nextPeek returns the next batch a barrier overtook as ItemInFlight,
// leaving it queued.
func (g *Gate) nextPeek() (Item, bool) {
	for len(g.peeks) > 0 {
		p := &g.peeks[0]
		if p.k == p.n {
			g.peeks = g.peeks[1:]
			continue
		}
		k := p.k
		p.k++
		if g.ins[p.i].peek(p.src, k) {
			g.last = p.i
			return Item{Kind: ItemInFlight, Input: p.i, Channel: p.src, InFlight: true}, true
		}
	}
	return Item{}, false
}

// endBarrier ends the barrier in progress.
func (g *Gate) endBarrier() {
	g.aligning, g.unal, g.nBlock, g.peeks = false, false, 0, nil
	g.aligned = time.Since(g.alignStart)
	for i := range g.got {
		clear(g.got[i])
	}
}

// startBarrier starts barrier id, which channel src of input i delivered.
func (g *Gate) startBarrier(id, meta int64) {
	if g.aligning {
		// a later barrier drops one not complete (its checkpoint was
		// aborted): its channels are read again
		g.endBarrier()
		for _, in := range g.ins {
			in.unblockChannels()
		}
	}
	g.aligning, g.barrier, g.meta, g.nBlock = true, id, meta, 0
	g.alignStart = time.Now()
}

// deliver records that channel src of input i delivered the barrier in
// progress; it reports false when it had.
func (g *Gate) deliver(i, src int) bool {
	if src < 0 || src >= len(g.got[i]) || g.got[i][src] {
		return false
	}
	g.got[i][src] = true
	g.nBlock++
	return true
}

// event handles an event of input i.
func (g *Gate) event(i int, ev Event) error {
	g.next, g.nOut = 0, 0
	switch ev.Kind {
	case EndOfPartition:
		g.ins[i].endChannel(ev.Source)
		g.chans--
		if g.aligning && ev.Source >= 0 && ev.Source < len(g.got[i]) && g.got[i][ev.Source] {
			g.got[i][ev.Source] = false // an ended channel counts no more
			g.nBlock--
		}
		g.valveOut(i, g.valves[i].end(ev.Source))
		if g.valves[i].live == 0 {
			g.live--
			wasIdle := g.comb.all
			if g.comb.end(i) {
				g.push(Item{Kind: ItemWatermark, Input: -1, Value: g.comb.cur})
			}
			if g.comb.all != wasIdle {
				g.push(Item{Kind: ItemWatermarkStatus, Input: -1, Value: statusOf(g.comb.all)})
			}
			g.push(Item{Kind: ItemEndOfInput, Input: i})
		}
	case Watermark:
		g.valveOut(i, g.valves[i].watermark(ev.Source, ev.Value))
	case WatermarkStatus:
		g.valveOut(i, g.valves[i].status(ev.Source, ev.Value == StatusIdle))
	case Barrier:
		if g.tracking {
			// a barrier returned already, or dropped for a later one, is
			// ignored; a later one drops the one counted, as Flink's
			// CheckpointBarrierTracker
			if ev.Value < g.barrier || (ev.Value == g.barrier && !g.aligning) {
				return nil
			}
			if ev.Value > g.barrier || !g.aligning {
				g.startBarrier(ev.Value, ev.Meta)
			}
			g.deliver(i, ev.Source)
			return nil
		}
		if g.unaligned || g.unal {
			return g.unalignedBarrier(i, ev)
		}
		if !g.aligning {
			g.startBarrier(ev.Value, ev.Meta)
		} else if ev.Value != g.barrier {
			return fmt.Errorf("flow: vertex %q input %d: producer %d sent barrier %d while aligning barrier %d", g.tc.Vertex, i, ev.Source, ev.Value, g.barrier)
		}
		g.ins[i].blockChannel(ev.Source)
		g.deliver(i, ev.Source)
	default:
		return fmt.Errorf("flow: vertex %q input %d: a gate does not take %v events", g.tc.Vertex, i, ev.Kind)
	}
	return nil
}

// unalignedBarrier takes barrier ev of input i unaligned (Flink's
// SingleCheckpointBarrierHandler in its unaligned states): the first one
// of a checkpoint returns ItemUnalignedBarrier at once; each channel's
// barrier counts the messages it overtook, which the gate then reads as in
// flight. A barrier of a checkpoint older than the one in progress, or
// returned already, is ignored.
func (g *Gate) unalignedBarrier(i int, ev Event) error {
	if ev.Value < g.barrier || (ev.Value == g.barrier && !g.aligning) {
		return nil
	}
	if ev.Value > g.barrier || !g.aligning {
		g.startBarrier(ev.Value, ev.Meta)
		g.unal = true
		g.push(Item{Kind: ItemUnalignedBarrier, Input: -1, Value: ev.Value, Meta: ev.Meta})
	}
	if g.deliver(i, ev.Source) && ev.over > 0 {
		g.peeks = append(g.peeks, peek{i: i, src: ev.Source, n: int(ev.over)})
	}
	return nil
}

// UnalignBarriers makes the gate take every checkpoint barrier unaligned
// (Flink's unaligned checkpoints with an aligned-checkpoint timeout of
// zero): the first barrier of a checkpoint on any channel returns
// ItemUnalignedBarrier at once and no channel is blocked. The batches
// before the barrier on each channel are the task's to persist as channel
// state: the ones a channel's barrier overtook come at once as
// ItemInFlight (and later again as batches to process), and on a channel
// whose barrier did not come yet every batch until it comes with
// Item.InFlight; ItemChannelStateEnd closes them. Producers send such barriers
// with Writer.PriorityEvent. Call it before the first Poll.
func (g *Gate) UnalignBarriers() { g.unaligned = true }

// Aligning returns the checkpoint whose barrier the gate is aligning and
// the barrier's Meta, if any (aligned, not yet switched by Unalign).
func (g *Gate) Aligning() (id, meta int64, ok bool) {
	return g.barrier, g.meta, g.aligning && !g.unal && !g.tracking
}

// Unalign switches the barrier being aligned to unaligned (Flink's
// aligned-checkpoint timeout): the blocked channels are read again (what
// they queued follows their barrier), the batches of the channels whose
// barrier did not come yet come with Item.InFlight, and the next Poll
// returns ItemUnalignedBarrier. It reports false when no barrier is being
// aligned.
func (g *Gate) Unalign() bool {
	if _, _, ok := g.Aligning(); !ok {
		return false
	}
	g.unal = true
	for _, in := range g.ins {
		in.unblockChannels()
	}
	g.next, g.nOut = 0, 0
	g.push(Item{Kind: ItemUnalignedBarrier, Input: -1, Value: g.barrier, Meta: g.meta})
	return true
}

// valveOut passes what input i's valve emitted to the combination of the
// inputs, as Flink's AbstractStreamOperator does (processWatermark1/2 and
// processWatermarkStatus).
func (g *Gate) valveOut(i int, o valveOut) {
	if o.hasWM && g.comb.watermark(i, o.wm) {
		g.push(Item{Kind: ItemWatermark, Input: -1, Value: g.comb.cur})
	}
	if o.hasStatus {
		wasIdle := g.comb.all
		if g.comb.status(i, o.status == StatusIdle) {
			g.push(Item{Kind: ItemWatermark, Input: -1, Value: g.comb.cur})
		}
		if g.comb.all != wasIdle {
			g.push(Item{Kind: ItemWatermarkStatus, Input: -1, Value: o.status})
		}
	}
}

func (g *Gate) push(it Item) {
	g.out[g.nOut] = it
	g.nOut++
}

func statusOf(idle bool) int64 {
	if idle {
		return StatusIdle
	}
	return StatusActive
}

// Wait blocks until Poll may have an item, wake, wake2 or wake3 receives
// (a timer's channel, a task's mailbox, an iteration head's feedback
// queue; nil for none), or ctx or the job ends; the time counts as idle.
func (g *Gate) Wait(ctx context.Context, wake, wake2, wake3 <-chan time.Time) error {
	since := time.Now()
	g.tc.Metrics.beginIdle(since)
	defer g.tc.Metrics.addIdle(since)
	select {
	case <-g.ready:
		return nil
	case <-wake:
		return nil
	case <-wake2:
		return nil
	case <-wake3:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-g.tc.ctx.Done():
		return g.tc.ctx.Err()
	}
}

// Next returns the next item, waiting for one, or io.EOF once every input
// ended.
func (g *Gate) Next(ctx context.Context) (Item, error) {
	for {
		it, ok, err := g.Poll()
		if ok || err != nil {
			return it, err
		}
		if err := g.Wait(ctx, nil, nil, nil); err != nil {
			return Item{}, err
		}
	}
}

// TrackBarriers makes the gate count barriers without aligning them, for
// at-least-once checkpoints (Flink's CheckpointBarrierTracker): a channel
// that delivered barrier n goes on delivering records, and the gate
// returns ItemBarrier once every channel not ended delivered it. A barrier
// later than the one being counted drops that one. Call it before the
// first Poll.
func (g *Gate) TrackBarriers() { g.tracking = true }

// Alignment returns how long the last barrier the gate returned took to
// align: from its first channel's barrier to its last one's (Flink's
// checkpoint alignment time).
func (g *Gate) Alignment() time.Duration { return g.aligned }

// Watermark returns the task's watermark: the last one the gate returned.
func (g *Gate) Watermark() int64 { return g.comb.cur }

// The gate's view of a Reader.

func (r *Reader[T]) attachGate(g *Gate, i int) error {
	if r.in == nil {
		return fmt.Errorf("flow: edge %s: a gate reads pipelined edges only", r.x.e.name)
	}
	if r.step != nil {
		return fmt.Errorf("flow: edge %s: a reader in superstep mode cannot join a gate", r.x.e.name)
	}
	r.in.attach(g, i)
	return nil
}

func (r *consumer) pollGate() (ev Event, src int, batch bool, ok bool) {
	m, ok := r.in.take()
	if !ok {
		return ev, 0, false, false
	}
	if m.batch.p != nil {
		met := r.tc.Metrics
		met.recordsIn.Add(int64(m.batch.n))
		met.bytesIn.Add(int64(m.batch.n) * r.x.elemSize)
		r.cur = m.batch
		return ev, m.src, true, true
	}
	m.ev.Source = m.src
	return m.ev, m.src, false, true
}

func (r *consumer) peek(src, k int) bool {
	b := r.in.peek(src, k)
	if b.p == nil {
		return false
	}
	r.cur, r.peeked = b, true
	return true
}

func (r *consumer) takePriority() (Event, bool) {
	m, ok := r.in.takePriority()
	m.ev.Source = m.src
	return m.ev, ok
}

func (r *consumer) endChannel(src int) { r.end(src) }

func (r *consumer) channelCount() (int, []bool) { return len(r.ended), r.ended }

func (r *consumer) blockChannel(src int) { r.in.block(src) }

func (r *consumer) unblockChannels() { r.in.unblockAll() }

// Batch returns the batch the task's gate last returned for this input
// (ItemBatch), or nil.
func (r *Reader[T]) Batch() []T { return unwrap[T](r.cur) }
