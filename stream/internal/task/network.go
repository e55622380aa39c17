package task

import (
	"errors"
	"io"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/core"
)

// Edge describes a network edge for channel state: its key in a
// checkpoint (the consumer's stable id and the index of the input), its
// parallelisms and whether it broadcasts.
type Edge struct {
	Key                  string
	Producers, Consumers int
	Broadcast            bool
	// From and To name the producer and consumer, for messages.
	From, To string
}

// NetworkOutput is a task's writer of one network edge.
type NetworkOutput interface {
	Eventer
	// priorityBarrier sends barrier id ahead of everything queued and
	// returns the records it overtook in the writer, encoded, by consumer.
	priorityBarrier(id, meta int64) ([][]byte, error)
	// available reports whether every channel has credit, else returns
	// the channel that receives when one freed a slot.
	available() (bool, <-chan struct{})
	// replay sends encoded records again: to consumer c when direct,
	// else through the partitioner.
	replay(recs []byte, c int, direct bool) error
}

// netOut is a network output of a task and its edge.
type netOut struct {
	w NetworkOutput
	e Edge
}

// Writer sends the records of type T of output i of tc's task over its
// network edge.
type Writer[T any] struct{ w *flow.Writer[core.Record[T]] }

// NewWriter returns the writer of output i.
func NewWriter[T any](tc *flow.TaskContext, i int) Writer[T] {
	return Writer[T]{flow.Output[core.Record[T]](tc, i)}
}

// Push sends b.
func (w Writer[T]) Push(b []core.Record[T]) error { return w.w.EmitBatch(b) }

// Event sends e.
func (w Writer[T]) Event(e flow.Event) error { return w.w.Event(e) }

func (w Writer[T]) priorityBarrier(id, meta int64) ([][]byte, error) {
	over, err := w.w.PriorityEvent(barrier(id, meta))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for c, rs := range over {
		if len(rs) == 0 {
			continue
		}
		codec, err := core.RecordCodec[T]()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make([][]byte, len(over))
		}
		out[c] = core.AppendRecords(codec, nil, rs)
	}
	return out, nil
}

func (w Writer[T]) available() (bool, <-chan struct{}) { return w.w.Available() }

func (w Writer[T]) replay(recs []byte, c int, direct bool) error {
	codec, err := core.RecordCodec[T]()
	if err != nil {
		return err
	}
	rs, err := core.DecodeRecords(codec, recs)
	if err != nil {
		return err
	}
	if direct {
		return w.w.EmitTo(c, rs)
	}
	return w.w.EmitBatch(rs)
}

// AddOutput adds a network output of the chain.
func (rt *Runtime) AddOutput(w NetworkOutput, e Edge) {
	rt.writers = append(rt.writers, w)
	rt.net = append(rt.net, netOut{w, e})
}

// NetworkInput is one network input of a task: how its batches reach the
// chain, how they are encoded for channel state, and its edge.
type NetworkInput struct {
	pump    func() error
	capture func(dst []byte) ([]byte, error)
	edge    Edge
}

// Network returns input i of tc's task, of records of type T, pushed into
// target.
func Network[T any](tc *flow.TaskContext, i int, target core.Output[T], e Edge) NetworkInput {
	r := flow.Input[core.Record[T]](tc, i)
	return NetworkInput{
		pump: func() error { return target.Push(r.Batch()) },
		capture: func(dst []byte) ([]byte, error) {
			codec, err := core.RecordCodec[T]()
			if err != nil {
				return nil, err
			}
			return core.AppendRecords(codec, dst, r.Batch()), nil
		},
		edge: e,
	}
}

// Gate returns the input of a task that reads its network inputs through
// its gate (every task but sources and iteration heads).
func Gate(ins []NetworkInput) Input { return &gateInput{ins: ins} }

// gateInput is a task's network inputs, read through the task's gate:
// batches into the chain, watermarks and statuses through it, barriers
// aligned (or not) and snapshotted.
type gateInput struct {
	ins       []NetworkInput
	g         *flow.Gate
	unaligned bool
	// extra, when set, is waited on with the gate (an iteration head's
	// feedback)
	extra <-chan time.Time
}

func (in *gateInput) start(rt *Runtime) error {
	in.g = rt.tc.Gate()
	if rt.ck == nil {
		return nil
	}
	rt.async.on = true // the mail of a written snapshot wakes the loop
	if rt.ck.cfg.AtLeastOnce {
		in.g.TrackBarriers()
	}
	if in.unaligned = rt.ck.cfg.Unaligned; in.unaligned && rt.unalignedFromStart() {
		in.g.UnalignBarriers()
	}
	return nil
}

// step reads one item of the gate, or waits.
func (in *gateInput) step(rt *Runtime) (bool, error) {
	ended, err := in.poll(rt)
	if err != nil || !ended {
		return false, err
	}
	return true, rt.Finish()
}

// poll reads one item of the gate, or waits; ended says the gate ended.
func (in *gateInput) poll(rt *Runtime) (ended bool, err error) {
	g := in.g
	if in.unaligned {
		if at, ok := rt.alignmentDeadline(g); ok && !rt.clock.Now().Before(at) {
			g.Unalign()
		}
	}
	var blocked <-chan struct{}
	if in.unaligned {
		blocked = rt.outputsBlocked()
	}
	var it flow.Item
	var ok bool
	if blocked != nil {
		// outputs full: only a priority barrier is read (Flink's mailbox
		// loop suspended on output availability)
		it, ok, err = g.PollPriority()
	} else {
		it, ok, err = g.Poll()
	}
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !ok {
		return false, in.wait(rt, blocked)
	}
	switch it.Kind {
	case flow.ItemBatch:
		if it.InFlight {
			if err := rt.captureInput(in.ins, it.Input, it.Channel); err != nil {
				return false, err
			}
		}
		err = in.ins[it.Input].pump()
	case flow.ItemInFlight:
		err = rt.captureInput(in.ins, it.Input, it.Channel)
	case flow.ItemUnalignedBarrier:
		err = rt.startUnaligned(it.Value, it.Meta)
	case flow.ItemChannelStateEnd:
		err = rt.finishUnaligned(in.ins, it.Value)
	case flow.ItemWatermark:
		err = rt.InputWatermark(it.Value)
	case flow.ItemWatermarkStatus:
		err = rt.InputStatus(it.Value == flow.StatusIdle)
	case flow.ItemBarrier:
		err = rt.checkpoint(it.Value, it.Meta, g.Alignment())
	}
	return false, err
}

// wait waits until the gate may have an item, the chain's next
// processing-time timer or an alignment deadline is due, mail or the
// extra channel receives; while an output has no credit (blocked), until
// it has or a priority event comes, the time counting as backpressure.
func (in *gateInput) wait(rt *Runtime, blocked <-chan struct{}) error {
	at, hasAt := int64(0), false
	if in.unaligned {
		if t, ok := rt.alignmentDeadline(in.g); ok {
			at, hasAt = t.UnixMilli(), true
		}
	}
	timer, stop := rt.timer(at, hasAt)
	defer stop()
	ctx := rt.Context()
	if blocked == nil {
		return in.g.Wait(ctx, timer, rt.mailWake(), in.extra)
	}
	select {
	case <-blocked:
	case <-in.g.Priority():
	case <-timer:
	case <-rt.mailWake():
	case <-in.extra:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// alignmentDeadline is when the barrier the gate aligns times out and
// turns unaligned (AlignedTimeout after its checkpoint's trigger), if the
// gate aligns one.
func (rt *Runtime) alignmentDeadline(g *flow.Gate) (time.Time, bool) {
	_, meta, ok := g.Aligning()
	if !ok || rt.ck.cfg.AlignedTimeout <= 0 {
		return time.Time{}, false
	}
	return metaTriggered(meta).Add(rt.ck.cfg.AlignedTimeout), true
}

// outputsBlocked returns, when a network output has no credit, the channel
// that receives once it has; nil when every output is available.
func (rt *Runtime) outputsBlocked() <-chan struct{} {
	for _, o := range rt.net {
		if ok, ch := o.w.available(); !ok {
			return ch
		}
	}
	return nil
}
