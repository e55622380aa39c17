package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/state"
)

// Harness runs the operators a program applies to one input, record by
// record, outside a job, as Flink's OneInputStreamOperatorTestHarness and
// KeyedOneInputStreamOperatorTestHarness do: records with timestamps,
// watermarks and processing-time advances go in; the records and
// watermarks the last operator emitted come out in order, side outputs
// per tag. Every edge between the operators is chained, so a keyed
// operator sees every key (its subtask owns the key groups of
// HarnessOptions.Subtask of Parallelism). Package streamtest is its
// public face.
type Harness[I, O any] struct {
	*harnessCore[O]
	head output[I]
	one  [1]Record[I]
}

// harnessCore is what harnesses of one and two inputs share: the runtime
// of the operators and what they emitted.
type harnessCore[O any] struct {
	env      *Env
	ins      []*node // the input nodes
	head     *node   // the first operator
	run      *harnessRun
	capture  *captured[O]
	clock    *flow.ManualClock
	opts     HarnessOptions
	rt       *taskRuntime
	heads    []any // the first operator's inputs, per input node
	restored map[int][]byte
	opened   bool
	closed   bool
}

// HarnessOptions configure a Harness.
type HarnessOptions struct {
	Parallelism    int   // of the operators (1 when zero)
	Subtask        int   // the subtask run, 0 <= Subtask < Parallelism
	MaxParallelism int   // key groups; zero means the default for Parallelism
	ProcessingTime int64 // the manual clock's start, in ms
}

// Item is one thing the harness's operators emitted: a record or a
// watermark.
type Item[O any] struct {
	Record      Record[O]
	Watermark   int64
	IsWatermark bool
}

// harnessRun is what a task runtime needs of a harness.
type harnessRun struct {
	last    *node
	capture any     // output[O] of the last node
	events  eventer // watermarks after the last node
	sides   map[string]any
}

type captured[O any] struct{ items []Item[O] }

func (c *captured[O]) push(b []Record[O]) error {
	for i := range b {
		c.items = append(c.items, Item[O]{Record: b[i]})
	}
	return nil
}

func (c *captured[O]) event(e flow.Event) error {
	if e.Kind == flow.Watermark {
		c.items = append(c.items, Item[O]{Watermark: e.Value, IsWatermark: true})
	}
	return nil
}

type recordsOut[T any] struct{ recs []Record[T] }

func (r *recordsOut[T]) push(b []Record[T]) error {
	r.recs = append(r.recs, b...)
	return nil
}

// harnessSide returns the emitter capturing side output id of type T.
func harnessSide[T any](c *Context, id string) *emitter[T] {
	out, ok := c.harness.sides[id].(*recordsOut[T])
	if !ok {
		out = &recordsOut[T]{}
		c.harness.sides[id] = out
	}
	e := newEmitter[T](out, 1) // a batch of one: pushed at once
	if c.sides == nil {
		c.sides = map[string]any{}
	}
	c.sides[id] = e
	return e
}

// NewHarness returns a harness of the operators build applies to its
// input stream.
func NewHarness[I, O any](opts HarnessOptions, build func(in DataStream[I]) DataStream[O]) (*Harness[I, O], error) {
	c, err := newHarnessCore(opts, func(env *Env) ([]*node, DataStream[O]) {
		in := addNode[I](env, "input")
		return []*node{in}, build(DataStream[I]{n: in})
	})
	if err != nil {
		return nil, err
	}
	return &Harness[I, O]{harnessCore: c}, nil
}

func newHarnessCore[O any](opts HarnessOptions, build func(env *Env) ([]*node, DataStream[O])) (*harnessCore[O], error) {
	opts.Parallelism = max(opts.Parallelism, 1)
	if opts.Subtask < 0 || opts.Subtask >= opts.Parallelism {
		return nil, fmt.Errorf("stream: harness: subtask %d of %d", opts.Subtask, opts.Parallelism)
	}
	env := New(Options{Parallelism: opts.Parallelism, MaxParallelism: opts.MaxParallelism, Memory: -1})
	ins, out := build(env)
	if len(env.errs) > 0 {
		return nil, errors.Join(env.errs...)
	}
	var head *node
	for _, in := range ins {
		in.source = true
		cs := in.ports[""].consumers
		if out.n == in || len(cs) != 1 || (head != nil && cs[0].to != head) {
			return nil, errors.New("stream: harness: build must apply one chain of operators to its inputs")
		}
		head = cs[0].to
	}
	if out.port != "" {
		return nil, errors.New("stream: harness: build must return the main output of its last operator")
	}
	if err := env.resolve(); err != nil {
		return nil, err
	}
	c := &captured[O]{}
	return &harnessCore[O]{
		env: env, ins: ins, head: head, capture: c, opts: opts,
		run:   &harnessRun{last: out.n, capture: output[O](c), events: c, sides: map[string]any{}},
		clock: flow.NewManualClock(time.UnixMilli(opts.ProcessingTime)),
	}, nil
}

// Restore makes the operators open from snap, a Snapshot of a harness of
// the same operators (at any parallelism, for keyed state). Call it before
// the first record.
func (h *harnessCore[O]) Restore(snap []byte) error {
	if h.opened {
		return errors.New("stream: harness: restore after open")
	}
	h.restored = map[int][]byte{}
	for i := 0; len(snap) > 0; i++ {
		n, k := binary.Uvarint(snap)
		if k <= 0 || uint64(len(snap)-k) < n {
			return fmt.Errorf("stream: harness: %w", state.ErrCorruptSnapshot)
		}
		if n > 0 {
			h.restored[i] = snap[k : k+int(n)]
		}
		snap = snap[k+int(n):]
	}
	return nil
}

// Open opens the operators; the other methods call it when needed.
func (h *harnessCore[O]) Open() error {
	if h.opened {
		return nil
	}
	h.opened = true
	h.rt = &taskRuntime{
		subtask: h.opts.Subtask, parallelism: h.opts.Parallelism, clock: h.clock,
		batchSize: flow.DefaultBatchSize, watermark: NoTimestamp, harness: h.run, restored: h.restored,
	}
	ins, err := h.rt.build(h.head)
	if err != nil {
		return err
	}
	for _, in := range h.ins {
		e := in.ports[""].consumers[0]
		h.heads = append(h.heads, ins[slices.Index(h.head.inputs, e)])
	}
	return h.rt.open()
}

// headOf returns the first operator's input i, typed.
func headOf[T, O any](h *harnessCore[O], i int) (output[T], error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	o, ok := h.heads[i].(output[T])
	if !ok {
		return nil, errors.New("stream: harness: the first operator does not read the input's type")
	}
	return o, nil
}

// ProcessElement pushes v with timestamp ts (NoTimestamp for none).
func (h *Harness[I, O]) ProcessElement(v I, ts int64) error {
	if h.head == nil {
		head, err := headOf[I](h.harnessCore, 0)
		if err != nil {
			return err
		}
		h.head = head
	}
	h.one[0] = Record[I]{Value: v, Timestamp: ts}
	return h.head.push(h.one[:])
}

// ProcessWatermark advances the watermark: due event-time timers fire,
// then the watermark is emitted.
func (h *harnessCore[O]) ProcessWatermark(wm int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.forwardWatermark(wm)
}

// SetProcessingTime moves the processing-time clock to ms and fires the
// processing-time timers that came due.
func (h *harnessCore[O]) SetProcessingTime(ms int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	h.clock.Set(time.UnixMilli(ms))
	return h.rt.processingTime()
}

// EndInput ends the input: the operators' end of input, in order.
func (h *harnessCore[O]) EndInput() error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.endInput()
}

// Output returns the records and watermarks the last operator emitted so
// far, in order.
func (h *harnessCore[O]) Output() []Item[O] { return append([]Item[O](nil), h.capture.items...) }

// Records returns the records of Output.
func (h *harnessCore[O]) Records() []Record[O] {
	var out []Record[O]
	for _, it := range h.capture.items {
		if !it.IsWatermark {
			out = append(out, it.Record)
		}
	}
	return out
}

// Watermarks returns the watermarks of Output.
func (h *harnessCore[O]) Watermarks() []int64 {
	var out []int64
	for _, it := range h.capture.items {
		if it.IsWatermark {
			out = append(out, it.Watermark)
		}
	}
	return out
}

// ClearOutput forgets what was emitted so far.
func (h *harnessCore[O]) ClearOutput() { h.capture.items = h.capture.items[:0] }

// AnyHarness is a *Harness or a *Harness2.
type AnyHarness interface{ core() *harnessRun }

// HarnessSideOutput returns what the operators of h emitted to side output
// tag.
func HarnessSideOutput[X any](h AnyHarness, tag OutputTag[X]) []Record[X] {
	if r, ok := h.core().sides[tag.id].(*recordsOut[X]); ok {
		return append([]Record[X](nil), r.recs...)
	}
	return nil
}

func (h *harnessCore[O]) core() *harnessRun { return h.run }

// Snapshot returns the operators' state (keyed state and timers), for
// Restore on a new harness.
func (h *harnessCore[O]) Snapshot() ([]byte, error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	var out []byte
	var buf bytes.Buffer
	for _, op := range h.rt.ops {
		buf.Reset()
		if err := op.snapshot(&buf); err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(buf.Len()))
		out = append(out, buf.Bytes()...)
	}
	return out, nil
}

// Close closes the operators.
func (h *harnessCore[O]) Close() error {
	if !h.opened || h.closed {
		return nil
	}
	h.closed = true
	var err error
	for _, op := range h.rt.ops {
		err = errors.Join(err, op.close())
	}
	return err
}
