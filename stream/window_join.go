package stream

import (
	"errors"
	"time"

	"github.com/weirdata/weir/stream/window"
)

// CoGroupedStreams are two streams grouped by a key into windows, as
// Flink's CoGroupedStreams.WithWindow (and JoinedStreams.WithWindow):
// set the trigger, evictor and allowed lateness, then apply a function
// with CoGroupApply, JoinApply or JoinFlatApply.
type CoGroupedStreams[A, B any, K comparable, W window.Window] struct {
	a        DataStream[A]
	b        DataStream[B]
	keyA     func(A) K
	keyB     func(B) K
	assigner window.Assigner[W]
	trigger  window.Trigger[W]
	evictor  window.Evictor[W]
	lateness time.Duration
	name     string
}

// WindowCoGroup groups a by keyA and b by keyB into the windows assigner
// makes (Flink's a.coGroup(b).where(keyA).equalTo(keyB).window(assigner)).
func WindowCoGroup[A, B any, K comparable, W window.Window](a DataStream[A], b DataStream[B], keyA func(A) K, keyB func(B) K, assigner window.Assigner[W]) CoGroupedStreams[A, B, K, W] {
	return coGrouped(a, b, keyA, keyB, assigner, "Window(CoGroup)")
}

// WindowJoin is WindowCoGroup for an inner join (Flink's
// a.join(b).where(keyA).equalTo(keyB).window(assigner)): JoinApply and
// JoinFlatApply see every pair of a key's elements in a window.
func WindowJoin[A, B any, K comparable, W window.Window](a DataStream[A], b DataStream[B], keyA func(A) K, keyB func(B) K, assigner window.Assigner[W]) CoGroupedStreams[A, B, K, W] {
	return coGrouped(a, b, keyA, keyB, assigner, "Window(Join)")
}

func coGrouped[A, B any, K comparable, W window.Window](a DataStream[A], b DataStream[B], keyA func(A) K, keyB func(B) K, assigner window.Assigner[W], name string) CoGroupedStreams[A, B, K, W] {
	if keyA == nil || keyB == nil {
		a.env.fail(caller(2), errors.New(name+": nil key selector"))
	}
	if err := window.Err(assigner); err != nil {
		a.env.fail(caller(2), err)
	}
	return CoGroupedStreams[A, B, K, W]{a: a, b: b, keyA: keyA, keyB: keyB, assigner: assigner, name: name}
}

// Trigger sets the trigger of the windows.
func (c CoGroupedStreams[A, B, K, W]) Trigger(t window.Trigger[W]) CoGroupedStreams[A, B, K, W] {
	if err := window.Err(t); err != nil {
		c.a.env.fail(caller(1), err)
		return c
	}
	c.trigger = t
	return c
}

// Evictor sets an evictor; it sees the tagged elements of both inputs.
func (c CoGroupedStreams[A, B, K, W]) Evictor(e window.Evictor[W]) CoGroupedStreams[A, B, K, W] {
	c.evictor = e
	return c
}

// AllowedLateness keeps the windows for d after their end, as
// WindowedStream.AllowedLateness.
func (c CoGroupedStreams[A, B, K, W]) AllowedLateness(d time.Duration) CoGroupedStreams[A, B, K, W] {
	c.lateness = d
	return c
}

// TaggedUnion is one element of either input of a window coGroup, as
// Flink's CoGroupedStreams.TaggedUnion: IsB says which one it holds.
type TaggedUnion[A, B any] struct {
	A   A
	B   B
	IsB bool
}

// CoGroupApply calls fn once per key and window in which either input has
// elements, with the window's elements of each input (Flink's CoGroupFunction;
// in arrival order at an input's parallelism of 1); what it collects carries the window's
// watermark.Max. The slices are reused after the call returns.
func CoGroupApply[A, B any, K comparable, W window.Window, O any](c CoGroupedStreams[A, B, K, W], fn func(as []A, bs []B, out Collector[O]) error) DataStream[O] {
	if fn == nil {
		c.a.env.fail(caller(1), errors.New(c.name+": nil function"))
	}
	ta := Map(c.a, func(v A) TaggedUnion[A, B] { return TaggedUnion[A, B]{A: v} })
	tb := Map(c.b, func(v B) TaggedUnion[A, B] { return TaggedUnion[A, B]{B: v, IsB: true} })
	// the tags run at their input's parallelism, chained to it, so each
	// input's order reaches the windows
	ta.n.Name, tb.n.Name = "Map(Tag 1)", "Map(Tag 2)"
	ta.n.Parallelism, tb.n.Parallelism = c.a.n.Parallelism, c.b.n.Parallelism
	keyA, keyB := c.keyA, c.keyB
	ks := KeyBy(ta.Union(tb), func(t TaggedUnion[A, B]) K {
		if t.IsB {
			return keyB(t.B)
		}
		return keyA(t.A)
	})
	ws := Window(ks, c.assigner)
	if c.trigger != nil {
		ws = ws.Trigger(c.trigger)
	}
	if c.evictor != nil {
		ws = ws.Evictor(c.evictor)
	}
	if c.lateness != 0 {
		ws = ws.AllowedLateness(c.lateness)
	}
	out := WindowProcess(ws, func() ProcessWindowFunction[K, W, TaggedUnion[A, B], O] {
		var as []A
		var bs []B
		return ProcessWindowFunction[K, W, TaggedUnion[A, B], O]{
			Process: func(_ K, _ *WindowContext[K, W], elems []TaggedUnion[A, B], out Collector[O]) error {
				as, bs = as[:0], bs[:0]
				for i := range elems {
					if elems[i].IsB {
						bs = append(bs, elems[i].B)
					} else {
						as = append(as, elems[i].A)
					}
				}
				return fn(as, bs, out)
			},
		}
	})
	out.n.Name, out.n.Kind = c.name, c.name
	return out
}

// JoinFlatApply calls fn for every pair of elements of a key from the two
// inputs in the same window (an inner join, Flink's FlatJoinFunction).
func JoinFlatApply[A, B any, K comparable, W window.Window, O any](c CoGroupedStreams[A, B, K, W], fn func(a A, b B, out Collector[O]) error) DataStream[O] {
	if fn == nil {
		c.a.env.fail(caller(1), errors.New(c.name+": nil join function"))
	}
	return CoGroupApply(c, func(as []A, bs []B, out Collector[O]) error {
		for _, a := range as {
			for _, b := range bs {
				if err := fn(a, b, out); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// JoinApply emits fn(a, b) for every pair of elements of a key from the
// two inputs in the same window (Flink's JoinFunction).
func JoinApply[A, B any, K comparable, W window.Window, O any](c CoGroupedStreams[A, B, K, W], fn func(a A, b B) O) DataStream[O] {
	if fn == nil {
		c.a.env.fail(caller(1), errors.New(c.name+": nil join function"))
	}
	return JoinFlatApply(c, func(a A, b B, out Collector[O]) error {
		out.Collect(fn(a, b))
		return nil
	})
}
