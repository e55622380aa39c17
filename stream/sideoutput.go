package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
)

// OutputTag names a side output of records of type T.
type OutputTag[T any] struct{ id string }

// NewOutputTag returns the tag of side output id.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{id: id} }

// ID returns the tag's id.
func (t OutputTag[T]) ID() string { return t.id }

// Output emits v to the side output tag, with the timestamp of the record
// being processed. Nothing happens when no stream reads the side output.
func Output[T any](ctx SideContext, tag OutputTag[T], v T) {
	c := ctx.context().c
	if e := op.SideEmitter[T](c, tag.id); e != nil {
		e.Emit(v, c.TS)
	}
}

// GetSideOutput returns the side output tag of the operator that makes ds.
func GetSideOutput[T, X any](ds DataStream[T], tag OutputTag[X]) DataStream[X] {
	if tag.id == "" {
		ds.env.fail(caller(1), fmt.Errorf("%s: side output tag with an empty id", ds.n.Name))
		return DataStream[X]{env: ds.env, n: ds.n}
	}
	if p, ok := ds.n.Ports[tag.id]; ok {
		if _, ok := p.Emitter(core.Discard[X]{}, 1).(*core.Emitter[X]); !ok {
			ds.env.fail(caller(1), fmt.Errorf("%s: side output %q read with another type", ds.n.Name, tag.id))
		}
	}
	graph.SidePort[X](ds.n, tag.id)
	return DataStream[X]{env: ds.env, n: ds.n, port: tag.id}
}
