package flow

import (
	"context"
	"fmt"
	"io"
)

// EventKind says what an Event means.
type EventKind uint8

const (
	eventNone EventKind = iota
	// EndOfPartition ends one producer subtask's partition. The runtime sends it
	// when a body returns; Readers consume it.
	EndOfPartition
	// Watermark says the producer will send no record with an event time below
	// Value.
	Watermark
	// Barrier marks checkpoint Value in the stream.
	Barrier
	// EndOfSuperstep ends superstep Value of an iteration.
	EndOfSuperstep
	// WatermarkStatus says the producer turned idle (Value StatusIdle: it
	// sends no records or watermarks for a while, so its watermark must not
	// hold its consumers back) or active again (StatusActive), as Flink's
	// WatermarkStatus.
	WatermarkStatus
)

// The values of a WatermarkStatus event.
const (
	StatusActive int64 = 0
	StatusIdle   int64 = 1
)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case eventNone:
		return "none"
	case EndOfPartition:
		return "EndOfPartition"
	case Watermark:
		return "Watermark"
	case Barrier:
		return "Barrier"
	case EndOfSuperstep:
		return "EndOfSuperstep"
	case WatermarkStatus:
		return "WatermarkStatus"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is a control message that travels in-band with the records of an edge:
// a consumer sees it after every record its producer emitted before it and
// before every record emitted after it. Source is the producer subtask that
// sent it (set by the Writer), or -1 for an event an Aligner synthesized.
type Event struct {
	Kind  EventKind
	Value int64
	// Meta is what the event carries besides Value, opaque to flow: for a
	// Barrier the options of its checkpoint (as Flink's CheckpointBarrier
	// carries its timestamp and CheckpointOptions), which the gate hands
	// out with the barrier's items.
	Meta   int64
	Source int
	// over counts the messages of its channel a priority event overtook
	over int32
}

// WatermarkTracker keeps the watermark of each producer channel and the
// combined watermark: their minimum, where ended channels no longer count
// (a valve whose channels are all active).
type WatermarkTracker struct {
	v valve
}

// NewWatermarkTracker tracks n channels, all starting at math.MinInt64.
func NewWatermarkTracker(n int) *WatermarkTracker {
	return &WatermarkTracker{v: newValve(n)}
}

// Current returns the combined watermark.
func (t *WatermarkTracker) Current() int64 { return t.v.last }

// Update records channel src's watermark (a lower one than before is ignored)
// and returns the combined watermark and whether it advanced.
func (t *WatermarkTracker) Update(src int, wm int64) (int64, bool) {
	o := t.v.watermark(src, wm)
	return t.v.last, o.hasWM
}

// End records that channel src ended; its watermark no longer holds the others
// back.
func (t *WatermarkTracker) End(src int) (int64, bool) {
	o := t.v.end(src)
	return t.v.last, o.hasWM
}

// Aligner wraps a Reader and aligns its events across producer channels, as
// Flink's aligned checkpoints do:
//
//   - Barrier and EndOfSuperstep: a channel that delivered one is blocked (not
//     read; its queue fills and its producer stops when out of credit) until
//     every live channel delivered the same kind and value; then the Aligner
//     returns that event once (Source -1) and reads every channel again. Ended
//     channels count as aligned. Nothing is buffered beyond the channels.
//   - Watermark and WatermarkStatus: the channels' watermarks and statuses go
//     through a valve (Flink's StatusWatermarkValve, see Gate); the Aligner
//     returns a Watermark event (Source -1) whenever the input's watermark
//     rises and a WatermarkStatus event when the input turns idle or active.
//
// An Aligner belongs to the task's goroutine; its batches follow the Reader's
// ownership rule.
type Aligner[T any] struct {
	r *Reader[T]
	alignState
}

// alignState is the untyped part of an Aligner, compiled once for every
// record type.
type alignState struct {
	blocked []bool
	nBlock  int       // channels blocked
	kind    EventKind // the event being aligned, eventNone if none
	value   int64
	meta    int64
	wm      valve
	out     [2]Event // events to return, from out[next]
	nOut    int
	next    int
	ev      Event
}

// NewAligner returns an Aligner reading from r, a Reader of a pipelined
// edge; r must not be read directly afterwards.
func NewAligner[T any](r *Reader[T]) *Aligner[T] {
	n := r.x.nProd
	a := &Aligner[T]{r: r, alignState: alignState{blocked: make([]bool, n), wm: newValve(n)}}
	for p, e := range r.ended {
		if e {
			a.wm.end(p)
		}
	}
	return a
}

// Watermark returns the combined watermark.
func (a *Aligner[T]) Watermark() int64 { return a.wm.last }

// Next returns either a batch (ev == nil) or an aligned event (batch == nil), or
// io.EOF when every producer ended. *ev is valid until the next call.
func (a *Aligner[T]) Next(ctx context.Context) (batch []T, ev *Event, err error) {
	r := a.r
	r.recycle()
	for {
		if ev := a.queued(); ev != nil {
			return nil, ev, nil
		}
		if a.kind != eventNone && a.nBlock == r.live {
			ev := a.release()
			r.in.unblockAll()
			return nil, ev, nil
		}
		if r.live == 0 {
			return nil, nil, io.EOF
		}
		m, err := r.recv(ctx)
		if err != nil {
			return nil, nil, err
		}
		src := m.src
		switch m.ev.Kind {
		case eventNone:
			r.cur = m.batch
			return unwrap[T](m.batch), nil, nil
		case EndOfPartition:
			r.end(src)
			a.emit(a.wm.end(src))
		case Watermark:
			a.emit(a.wm.watermark(src, m.ev.Value))
		case WatermarkStatus:
			a.emit(a.wm.status(src, m.ev.Value == StatusIdle))
		case Barrier, EndOfSuperstep:
			if err := a.align(r.x.e.name, src, m.ev); err != nil {
				return nil, nil, err
			}
			r.in.block(src) // the loop's top releases once all are aligned
		}
	}
}

// queued returns the next event the valve emitted, or nil.
func (a *alignState) queued() *Event {
	if a.next >= a.nOut {
		return nil
	}
	a.ev = a.out[a.next]
	a.next++
	return &a.ev
}

// align blocks channel src, which delivered ev (a Barrier or an
// EndOfSuperstep), until the alignment of ev's kind and value completes.
func (a *alignState) align(edge string, src int, ev Event) error {
	if a.kind == eventNone {
		a.kind, a.value, a.meta = ev.Kind, ev.Value, ev.Meta
	} else if a.kind != ev.Kind || a.value != ev.Value {
		return fmt.Errorf("flow: edge %s: producer %d sent %v %d while aligning %v %d", edge, src, ev.Kind, ev.Value, a.kind, a.value)
	}
	a.blocked[src] = true
	a.nBlock++
	return nil
}

// emit queues what the valve emitted.
func (a *alignState) emit(o valveOut) {
	a.next, a.nOut = 0, 0
	if o.hasWM {
		a.out[a.nOut] = Event{Kind: Watermark, Value: o.wm, Source: -1}
		a.nOut++
	}
	if o.hasStatus {
		a.out[a.nOut] = Event{Kind: WatermarkStatus, Value: o.status, Source: -1}
		a.nOut++
	}
}

// release ends an alignment: the aligned event is returned; the caller
// reads every channel again.
func (a *alignState) release() *Event {
	a.ev = Event{Kind: a.kind, Value: a.value, Meta: a.meta, Source: -1}
	a.kind = eventNone
	clear(a.blocked)
	a.nBlock = 0
	return &a.ev
}
