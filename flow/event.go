package flow

import (
	"context"
	"fmt"
	"io"
	"math"
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
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is a control message that travels in-band with the records of an edge:
// a consumer sees it after every record its producer emitted before it and
// before every record emitted after it. Source is the producer subtask that
// sent it (set by the Writer), or -1 for an event an Aligner synthesized.
type Event struct {
	Kind   EventKind
	Value  int64
	Source int
}

// WatermarkTracker keeps the watermark of each producer channel and the
// combined watermark: their minimum, where ended channels no longer count.
type WatermarkTracker struct {
	marks []int64
	ended []bool
	cur   int64
}

// NewWatermarkTracker tracks n channels, all starting at math.MinInt64.
func NewWatermarkTracker(n int) *WatermarkTracker {
	t := &WatermarkTracker{marks: make([]int64, n), ended: make([]bool, n), cur: math.MinInt64}
	for i := range t.marks {
		t.marks[i] = math.MinInt64
	}
	return t
}

// Current returns the combined watermark.
func (t *WatermarkTracker) Current() int64 { return t.cur }

// Update records channel src's watermark (a lower one than before is ignored)
// and returns the combined watermark and whether it advanced.
func (t *WatermarkTracker) Update(src int, wm int64) (int64, bool) {
	if wm > t.marks[src] {
		t.marks[src] = wm
	}
	return t.recompute()
}

// End records that channel src ended; its watermark no longer holds the others
// back.
func (t *WatermarkTracker) End(src int) (int64, bool) {
	t.ended[src] = true
	return t.recompute()
}

func (t *WatermarkTracker) recompute() (int64, bool) {
	m := int64(math.MaxInt64)
	for i, w := range t.marks {
		if !t.ended[i] && w < m {
			m = w
		}
	}
	if m > t.cur {
		t.cur = m
		return m, true
	}
	return t.cur, false
}

// Aligner wraps a Reader and aligns its events across producer channels, as
// Flink's aligned checkpoints do:
//
//   - Barrier and EndOfSuperstep: once a channel delivered one, its further
//     messages are held back (parked) until every live channel delivered the same
//     kind and value; then the Aligner returns that event once (Source -1) and
//     releases the parked messages. Ended channels count as aligned.
//   - Watermark: the Aligner returns a Watermark event (Source -1) whenever the
//     minimum over the live channels advances.
//
// Parked batches stay in memory (the Reader's shared channel cannot stop one
// producer alone); a producer sends at most one barrier ahead, so this is
// bounded by what one producer emits between two barriers.
//
// An Aligner belongs to the task's goroutine; its batches follow the Reader's
// ownership rule.
type Aligner[T any] struct {
	r       *Reader[T]
	parked  [][]message[T] // per producer, while it is blocked
	blocked []bool
	ready   []message[T] // released parked messages, delivered before new ones
	kind    EventKind    // the event being aligned, eventNone if none
	value   int64
	wm      *WatermarkTracker
	ev      Event
	cur     []T
}

// NewAligner returns an Aligner reading from r; r must not be read directly
// afterwards.
func NewAligner[T any](r *Reader[T]) *Aligner[T] {
	n := r.x.nProd
	a := &Aligner[T]{r: r, parked: make([][]message[T], n), blocked: make([]bool, n), wm: NewWatermarkTracker(n)}
	for p, e := range r.ended {
		if e {
			a.wm.End(p)
		}
	}
	return a
}

// Watermark returns the combined watermark.
func (a *Aligner[T]) Watermark() int64 { return a.wm.Current() }

// Next returns either a batch (ev == nil) or an aligned event (batch == nil), or
// io.EOF when every producer ended. *ev is valid until the next call.
func (a *Aligner[T]) Next(ctx context.Context) (batch []T, ev *Event, err error) {
	r := a.r
	if a.cur != nil {
		r.x.putBatch(a.cur)
		a.cur = nil
	}
	for {
		if a.kind != eventNone && a.aligned() {
			return nil, a.release(), nil
		}
		var m message[T]
		if len(a.ready) > 0 {
			m = a.ready[0]
			a.ready[0] = message[T]{}
			a.ready = a.ready[1:]
		} else {
			if r.live == 0 {
				return nil, nil, io.EOF
			}
			if m, err = r.recv(ctx); err != nil {
				return nil, nil, err
			}
		}
		src := m.src
		if a.blocked[src] {
			a.parked[src] = append(a.parked[src], m)
			continue
		}
		switch m.ev.Kind {
		case eventNone:
			a.cur = m.batch
			return m.batch, nil, nil
		case EndOfPartition:
			r.end(src)
			if v, ok := a.wm.End(src); ok && v != math.MaxInt64 {
				a.ev = Event{Kind: Watermark, Value: v, Source: -1}
				return nil, &a.ev, nil
			}
		case Watermark:
			if v, ok := a.wm.Update(src, m.ev.Value); ok {
				a.ev = Event{Kind: Watermark, Value: v, Source: -1}
				return nil, &a.ev, nil
			}
		case Barrier, EndOfSuperstep:
			if a.kind == eventNone {
				a.kind, a.value = m.ev.Kind, m.ev.Value
			} else if a.kind != m.ev.Kind || a.value != m.ev.Value {
				return nil, nil, fmt.Errorf("flow: edge %s: producer %d sent %v %d while aligning %v %d", r.x.e.name, src, m.ev.Kind, m.ev.Value, a.kind, a.value)
			}
			a.blocked[src] = true // the loop's top releases once all are aligned
		}
	}
}

func (a *Aligner[T]) aligned() bool {
	for p, b := range a.blocked {
		if !b && !a.r.ended[p] {
			return false
		}
	}
	return true
}

// release ends an alignment: the aligned event is returned and the parked
// messages are queued for delivery.
func (a *Aligner[T]) release() *Event {
	a.ev = Event{Kind: a.kind, Value: a.value, Source: -1}
	a.kind = eventNone
	for p := range a.blocked {
		a.blocked[p] = false
		a.ready = append(a.ready, a.parked[p]...)
		clear(a.parked[p])
		a.parked[p] = a.parked[p][:0]
	}
	return &a.ev
}
