package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/stream/watermark"
)

// ctx returns the job's context (a background one in a test harness).
func (rt *taskRuntime) ctx() context.Context {
	if rt.tc == nil {
		return context.Background()
	}
	return rt.tc.Context()
}

// spilled reports bytes an operator spilled in the task's metrics.
func (rt *taskRuntime) spilled(n int64) {
	if rt.tc != nil && n > 0 {
		rt.tc.Metrics.AddSpilled(n)
	}
}

// batch says whether the job runs in BATCH mode.
func (rt *taskRuntime) batch() bool { return rt.p != nil && rt.p.batch }

// taskRuntime is one subtask of a chain: its operators in topological
// order, the writers of its network outputs, and its clock.
type taskRuntime struct {
	tc          *flow.TaskContext // nil in a test harness
	subtask     int
	parallelism int
	mem         *memory.Manager
	env         resource.Env
	p           *program
	tp          *taskPlan
	ops         []operator
	nodes       []*node // the node of each operator, in build order
	writers     []eventer
	source      sourceRunner // the head is a source
	feedbackOut any          // a connected iteration head's output of the records fed back
	clock       flow.Clock
	batchSize   int
	watermark   int64 // the last watermark forwarded
	idle        bool
	ended       bool // BATCH: the input ended, the maximal watermark may pass
	// a test harness: every edge chains, the last node's output is captured
	harness  *harnessRun
	opIndex  map[*node]int  // position of a node's operator in ops
	restored map[int][]byte // snapshots to open operators from, by position
	// overrides replaces the snapshots of a node while a composite
	// operator opens its inner one
	overrides map[*node][][]byte
	ck        *taskCheckpoints // nil without checkpoints
	net       []netOut         // the network outputs
	// unaligned checkpoints: the checkpoint in progress and, per input, the
	// encoder of its current batch
	unal     *unalignedCheckpoint
	captures []func(dst []byte) ([]byte, error)
	ids      map[*node]string // stable operator ids, once needed
	async    asyncSnapshots   // the asynchronous snapshots in progress
}

// taskCheckpoints is a task's side of the job's checkpoints: its mailbox
// from the coordinator and, in a source task, what a trigger does.
type taskCheckpoints struct {
	c       *coordinator
	key     taskKey
	mb      *mailbox
	trigger func(id int64, stop bool) error
	// resume, in a source task, reads on after a stop that was aborted
	resume func()
}

// restoredFor returns the snapshot to open n's operator from, or nil.
func (rt *taskRuntime) restoredFor(n *node) []byte {
	if s := rt.restoredAll(n); len(s) > 0 {
		return s[0]
	}
	return nil
}

// restoredAll returns every snapshot n's operator opens from: a keyed
// operator restored at another parallelism reads each old subtask's whose
// key groups overlap its own.
func (rt *taskRuntime) restoredAll(n *node) [][]byte {
	if s, ok := rt.overrides[n]; ok {
		return s
	}
	if rt.p != nil && rt.p.env.restore != nil {
		return rt.p.env.restore.all(n, rt.subtask)
	}
	if i, ok := rt.opIndex[n]; ok && rt.restored[i] != nil {
		return [][]byte{rt.restored[i]}
	}
	return nil
}

// sourceRunner runs a source head: it reads until its input ends.
type sourceRunner interface{ run(rt *taskRuntime) error }

// body returns the vertex body of tp.
func (p *program) body(tp *taskPlan) func(tc *flow.TaskContext) error {
	return func(tc *flow.TaskContext) error {
		rt := &taskRuntime{
			tc: tc, subtask: tc.Subtask, parallelism: tc.Parallelism, mem: tc.Env.Memory, env: tc.Env,
			p: p, tp: tp, clock: tc.Clock(), batchSize: p.env.opts.BatchSize, watermark: NoTimestamp,
		}
		err := rt.run()
		if err == nil && rt.ck != nil {
			rt.ck.c.taskFinished(rt.ck.key)
		}
		return err
	}
}

func (rt *taskRuntime) run() (err error) {
	ins, err := rt.build(rt.tp.head)
	defer func() {
		if it := rt.tp.head.iter; it != nil && rt.p != nil {
			// whatever became of the task, the loop's queue ends with it
			if ferr := rt.p.feedback[it][rt.subtask].end(); ferr != nil && err == nil {
				err = ferr
			}
		}
		rt.endAsync(err == nil)
		for _, op := range rt.ops {
			if cerr := op.close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	if err != nil {
		return err
	}
	if r := rt.p.env.restore; r != nil && r.finished[rt.tp.head] {
		// a finished operator does not run again (FLIP-147); the records
		// it had in flight go out again
		rt.register()
		return rt.replayChannels()
	}
	if err := rt.open(); err != nil {
		return err
	}
	rt.register()
	if err := rt.replayChannels(); err != nil {
		return err
	}
	if rt.source != nil {
		return rt.source.run(rt)
	}
	pumps := make([]func() error, len(rt.tp.inputs))
	for i, in := range rt.tp.inputs {
		pumps[i] = in.from.ports[in.port].pump(rt.tc, i, ins[slices.Index(rt.tp.head.inputs, in)])
	}
	if it := rt.tp.head.iter; it != nil {
		target := ins[0]
		if rt.feedbackOut != nil {
			target = rt.feedbackOut
		}
		return rt.loopIteration(pumps, it, rt.p.feedback[it][rt.subtask], target)
	}
	return rt.loop(pumps, nil, nil)
}

// register makes the task known to the job's checkpoint coordinator.
func (rt *taskRuntime) register() {
	if c := rt.p.coord; c != nil {
		rt.ck = &taskCheckpoints{c: c, key: taskKey{rt.tp, rt.subtask}}
		rt.ck.mb = c.register(rt.ck.key)
	}
}

// open puts the operators in topological order and opens them.
func (rt *taskRuntime) open() error {
	slices.Reverse(rt.ops)
	rt.opIndex = map[*node]int{}
	for i, n := range rt.nodes {
		rt.opIndex[n] = len(rt.ops) - 1 - i
	}
	for _, op := range rt.ops {
		if err := op.open(rt); err != nil {
			return err
		}
	}
	return nil
}

// build makes the operators of n and of the nodes chained after it; it
// returns n's inputs.
func (rt *taskRuntime) build(n *node) ([]any, error) {
	var counters *flow.OperatorCounters // nil in a test harness
	if rt.tc != nil {
		counters = rt.tc.Metrics.Operator(n.name)
	}
	outs := map[string]any{}
	for _, name := range n.order {
		pt := n.ports[name]
		var list []any
		for _, e := range pt.consumers {
			if chained(e) || rt.harness != nil {
				ins, err := rt.build(e.to)
				if err != nil {
					return nil, err
				}
				list = append(list, ins[0])
				continue
			}
			w, ev := pt.writer(rt.tc, rt.p.out[e])
			rt.writers = append(rt.writers, ev)
			rt.net = append(rt.net, netOut{w.(channelWriter), e})
			list = append(list, w)
		}
		if name == "" && rt.harness != nil && n == rt.harness.last {
			list = append(list, rt.harness.capture)
			rt.writers = append(rt.writers, rt.harness.events)
		}
		if len(list) > 0 {
			outs[name] = pt.fanout(list)
			if counters != nil {
				outs[name] = pt.count(outs[name], counters, false)
			}
		}
	}
	ins, op, err := n.build(rt, outs)
	if err != nil {
		return nil, fmt.Errorf("stream: %s: %w", n.name, err)
	}
	if counters != nil {
		for i, e := range n.inputs {
			ins[i] = e.from.ports[e.port].count(ins[i], counters, true)
		}
	}
	rt.ops = append(rt.ops, op)
	rt.nodes = append(rt.nodes, n)
	return ins, nil
}

// loop is the stream task's loop over its gate: batches into the chain,
// watermarks and statuses through it, processing-time timers from the
// clock in the same wait.
//
// An iteration head's task passes its feedback queue fb, whose records go
// to target between the gate's items.
func (rt *taskRuntime) loop(pumps []func() error, fb feedbackQueue, target any) error {
	g := rt.tc.Gate()
	unaligned := rt.ck != nil && rt.ck.c.cfg.Unaligned
	if rt.ck != nil && rt.ck.c.cfg.Mode == AtLeastOnce {
		g.TrackBarriers()
	}
	if unaligned {
		if err := rt.makeCaptures(); err != nil {
			return err
		}
		if rt.unalignedFromStart() {
			g.UnalignBarriers()
		}
	}
	ctx := rt.tc.Context()
	var wake <-chan time.Time
	if fb != nil {
		wake = fb.ready()
	} else if rt.ck != nil {
		wake = rt.ck.mb.wake
		rt.async.on = true // the mail of a written snapshot wakes the loop
	}
	for {
		if err := rt.drainMail(); err != nil {
			return err
		}
		if err := rt.processingTime(); err != nil {
			return err
		}
		if fb != nil {
			if err := ctx.Err(); err != nil {
				return err // feedback may keep the gate from ever waiting
			}
			if _, err := fb.drain(target, rt.batchSize); err != nil {
				return err
			}
		}
		if unaligned {
			if at, ok := rt.alignmentDeadline(g); ok && !rt.clock.Now().Before(at) {
				g.Unalign()
			}
		}
		var blocked <-chan struct{}
		if unaligned {
			blocked = rt.outputsBlocked()
		}
		var it flow.Item
		var ok bool
		var err error
		if blocked != nil {
			// outputs full: only a priority barrier is read (Flink's
			// mailbox loop suspended on output availability)
			it, ok, err = g.PollPriority()
		} else {
			it, ok, err = g.Poll()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !ok {
			next, has := rt.nextProcessingTime()
			if unaligned {
				if at, ok := rt.alignmentDeadline(g); ok && (!has || at.UnixMilli() < next) {
					next, has = at.UnixMilli(), true
				}
			}
			var tc <-chan time.Time
			var t flow.Timer
			if has {
				t = rt.clock.Timer(time.UnixMilli(next))
				tc = t.C()
			}
			if blocked != nil {
				err = rt.waitBlocked(ctx, blocked, g, tc, wake)
			} else {
				err = g.Wait(ctx, tc, wake)
			}
			if t != nil {
				t.Stop()
			}
			if err != nil {
				return err
			}
			continue
		}
		switch it.Kind {
		case flow.ItemBatch:
			if it.InFlight {
				if err := rt.captureInput(it.Input, it.Channel); err != nil {
					return err
				}
			}
			err = pumps[it.Input]()
		case flow.ItemInFlight:
			err = rt.captureInput(it.Input, it.Channel)
		case flow.ItemUnalignedBarrier:
			err = rt.startUnaligned(it.Value)
		case flow.ItemChannelStateEnd:
			err = rt.finishUnaligned(it.Value)
		case flow.ItemWatermark:
			err = rt.forwardWatermark(it.Value)
		case flow.ItemWatermarkStatus:
			err = rt.forwardStatus(it.Value == flow.StatusIdle)
		case flow.ItemBarrier:
			err = rt.checkpoint(it.Value, g.Alignment())
		}
		if err != nil {
			return err
		}
	}
	if fb != nil {
		return nil
	}
	return rt.finish()
}

// makeCaptures makes the encoder of each input's batches, for channel
// state.
func (rt *taskRuntime) makeCaptures() error {
	rt.captures = make([]func([]byte) ([]byte, error), len(rt.tp.inputs))
	for i, in := range rt.tp.inputs {
		c, err := in.from.ports[in.port].capture(rt.tc, i)
		if err != nil {
			return err
		}
		rt.captures[i] = c
	}
	return nil
}

// alignmentDeadline is when the barrier the gate aligns times out and
// turns unaligned (AlignedCheckpointTimeout after its checkpoint's
// trigger), if the gate aligns one.
func (rt *taskRuntime) alignmentDeadline(g *flow.Gate) (time.Time, bool) {
	id, ok := g.Aligning()
	if !ok || rt.ck.c.cfg.AlignedCheckpointTimeout <= 0 {
		return time.Time{}, false
	}
	at, ok := rt.ck.c.triggeredAt(id)
	return at.Add(rt.ck.c.cfg.AlignedCheckpointTimeout), ok
}

// waitBlocked waits, while an output has no credit, until it has, a
// priority event comes, the timer or mail fires, or the job ends; the time
// counts as backpressure.
func (rt *taskRuntime) waitBlocked(ctx context.Context, blocked <-chan struct{}, g *flow.Gate, timer, mail <-chan time.Time) error {
	select {
	case <-blocked:
	case <-g.Priority():
	case <-timer:
	case <-mail:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// finish ends the input of a chain: in STREAMING the maximal watermark has
// come through already; in BATCH it follows what the end of input emitted.
func (rt *taskRuntime) finish() error {
	if err := rt.endInput(); err != nil {
		return err
	}
	if !rt.batch() {
		return nil
	}
	rt.ended = true
	return rt.forwardWatermark(watermark.Max)
}

// forwardWatermark passes wm through the chain (each operator fires its
// due timers) and then to the network outputs.
func (rt *taskRuntime) forwardWatermark(wm int64) error {
	if rt.batch() && !rt.ended {
		return nil // BATCH: event time stays put until the end of input
	}
	if wm <= rt.watermark {
		return nil
	}
	rt.watermark = wm
	if rt.tc != nil {
		rt.tc.Metrics.SetWatermark(wm)
	}
	for _, op := range rt.ops {
		if err := op.onWatermark(wm); err != nil {
			return err
		}
	}
	return rt.event(flow.Event{Kind: flow.Watermark, Value: wm})
}

// forwardStatus passes a watermark status change to the network outputs.
func (rt *taskRuntime) forwardStatus(idle bool) error {
	if idle == rt.idle {
		return nil
	}
	rt.idle = idle
	v := flow.StatusActive
	if idle {
		v = flow.StatusIdle
	}
	return rt.event(flow.Event{Kind: flow.WatermarkStatus, Value: v})
}

func (rt *taskRuntime) event(e flow.Event) error {
	for _, w := range rt.writers {
		if err := w.event(e); err != nil {
			return err
		}
	}
	return nil
}

// nextProcessingTime is the earliest processing-time timer of the chain.
func (rt *taskRuntime) nextProcessingTime() (int64, bool) {
	var next int64
	has := false
	for _, op := range rt.ops {
		if t, ok := op.nextProcessingTime(); ok && (!has || t < next) {
			next, has = t, true
		}
	}
	return next, has
}

// processingTime fires the processing-time timers that came due.
func (rt *taskRuntime) processingTime() error {
	next, has := rt.nextProcessingTime()
	if !has {
		return nil
	}
	now := rt.clock.Now().UnixMilli()
	if now < next {
		return nil
	}
	for _, op := range rt.ops {
		if err := op.onProcessingTime(now); err != nil {
			return err
		}
	}
	return nil
}

// endInput ends the chain's operators in order.
func (rt *taskRuntime) endInput() error {
	for _, op := range rt.ops {
		if err := op.endInput(); err != nil {
			return err
		}
	}
	return nil
}

// drainMail handles what the checkpoint coordinator posted: a trigger (in
// a source task) and completed checkpoints, whose notification goes to
// every operator of the chain in order.
func (rt *taskRuntime) drainMail() error {
	if rt.ck == nil {
		return nil
	}
	for _, m := range rt.ck.mb.take() {
		switch m.kind {
		case mailTrigger:
			if rt.ck.trigger != nil {
				if err := rt.ck.trigger(m.id, m.stop); err != nil {
					return err
				}
			}
		case mailResume:
			if rt.ck.resume != nil {
				rt.ck.resume()
			}
		case mailComplete:
			for _, op := range rt.ops {
				if err := op.notifyCheckpointComplete(m.id); err != nil {
					return err
				}
			}
			if m.done != nil {
				m.done()
			}
		case mailAsyncDone:
			rt.ackAsync()
		}
	}
	return nil
}

// checkpoint takes the task's part of checkpoint id on its barrier (Flink's
// SubtaskCheckpointCoordinatorImpl.checkpointState): every operator of the
// chain writes its snapshot into a buffer of its own, or captures its
// keyed state for an asynchronous write (checkpointAsync), the barrier
// goes to every output, and the task goes on processing; it acknowledges
// to the coordinator with its snapshots once they are written. A source
// task and an iteration head snapshot synchronously. Without checkpoints
// the barrier is only forwarded.
func (rt *taskRuntime) checkpoint(id int64, alignment time.Duration) error {
	if rt.ck == nil {
		return rt.event(flow.Event{Kind: flow.Barrier, Value: id})
	}
	if rt.source != nil && rt.unalignedFromStart() {
		// a source has no input: its channel state is its output's
		if err := rt.startUnaligned(id); err != nil {
			return err
		}
		return rt.finishUnaligned(id)
	}
	if rt.async.on {
		return rt.checkpointAsync(id, alignment)
	}
	states, err := rt.snapshotOperators(id)
	if err != nil {
		return err
	}
	if err := rt.event(flow.Event{Kind: flow.Barrier, Value: id}); err != nil {
		return err
	}
	rt.ck.c.ack(id, rt.ck.key, states, nil, alignment)
	return nil
}
