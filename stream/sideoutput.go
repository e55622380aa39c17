package stream

import "fmt"

// OutputTag names a side output of records of type T.
type OutputTag[T any] struct{ id string }

// NewOutputTag returns the tag of side output id.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{id: id} }

// ID returns the tag's id.
func (t OutputTag[T]) ID() string { return t.id }

// Output emits v to the side output tag, with the timestamp of the record
// being processed. Nothing happens when no stream reads the side output.
func Output[T any](ctx SideContext, tag OutputTag[T], v T) {
	c := ctx.context()
	e, ok := c.sides[tag.id].(*emitter[T])
	if !ok && c.harness != nil {
		e, ok = harnessSide[T](c, tag.id), true
	}
	if ok {
		e.emit(v, c.ts)
	}
}

// GetSideOutput returns the side output tag of the operator that makes ds.
func GetSideOutput[T, X any](ds DataStream[T], tag OutputTag[X]) DataStream[X] {
	if tag.id == "" {
		ds.n.env.fail(caller(1), fmt.Errorf("%s: side output tag with an empty id", ds.n.name))
		return DataStream[X]{n: ds.n, port: ""}
	}
	if p, ok := ds.n.ports[tag.id]; ok {
		if _, ok := p.emitter(discard[X]{}, 1).(*emitter[X]); !ok {
			ds.n.env.fail(caller(1), fmt.Errorf("%s: side output %q read with another type", ds.n.name, tag.id))
		}
	}
	sidePort[X](ds.n, tag.id)
	return DataStream[X]{n: ds.n, port: tag.id}
}

// sideEmitters makes an emitter per side port with consumers.
func sideEmitters(n *node, outs map[string]any, size int) (map[string]any, []flusher) {
	sides := map[string]any{}
	var fl []flusher
	for _, name := range n.order[1:] {
		if o, ok := outs[name]; ok {
			e := n.ports[name].emitter(o, size)
			sides[name] = e
			fl = append(fl, e.(flusher))
		}
	}
	return sides, fl
}

// flusher is an emitter of any type.
type flusher interface{ flush() error }

func flushAll(fl []flusher) error {
	for _, f := range fl {
		if err := f.flush(); err != nil {
			return err
		}
	}
	return nil
}
