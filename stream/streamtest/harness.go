package streamtest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/watermark"
)

// Options configure a harness.
type Options struct {
	Parallelism    int   // of the operators (1 when zero)
	Subtask        int   // the subtask run, 0 <= Subtask < Parallelism
	MaxParallelism int   // key groups; zero means the default for Parallelism
	ProcessingTime int64 // the manual clock's start, in ms
	// AutoWatermarkInterval is how often watermark generators are asked
	// for a periodic watermark (AssignTimestampsAndWatermarks); zero
	// means never.
	AutoWatermarkInterval time.Duration
}

// Item is one thing the harness's operators emitted: a record, a
// watermark or a watermark status (idle or active again).
type Item[O any] struct {
	Record      stream.Record[O]
	Watermark   int64
	IsWatermark bool
	IsStatus    bool
	Idle        bool // of a status
}

// captured is the harness's capture of the last operator's output.
type captured[O any] struct{ items []Item[O] }

func (c *captured[O]) Push(b []core.Record[O]) error {
	for i := range b {
		c.items = append(c.items, Item[O]{Record: b[i]})
	}
	return nil
}

func (c *captured[O]) Event(e flow.Event) error {
	switch e.Kind {
	case flow.Watermark:
		c.items = append(c.items, Item[O]{Watermark: e.Value, IsWatermark: true})
	case flow.WatermarkStatus:
		c.items = append(c.items, Item[O]{IsStatus: true, Idle: e.Value == flow.StatusIdle})
	}
	return nil
}

// Harness runs the operators a program applies to one input, record by
// record, outside a job, as Flink's OneInputStreamOperatorTestHarness and
// KeyedOneInputStreamOperatorTestHarness do: records with timestamps,
// watermarks and processing-time advances go in; the records and
// watermarks the last operator emitted come out in order, side outputs
// per tag. Every edge between the operators is chained, so a keyed
// operator sees every key (its subtask owns the key groups of
// Options.Subtask of Parallelism).
type Harness[I, O any] struct {
	*harnessCore[O]
	in  core.Output[I]
	one [1]core.Record[I]
}

// harnessCore is what harnesses of one and two inputs share: the runtime of the
// operators and what they emitted.
type harnessCore[O any] struct {
	r       *graph.Resolved
	ins     []*graph.Node // the input nodes
	head    *graph.Node   // the first operator
	last    *graph.Node
	capture *captured[O]
	clock   *clock.Manual
	opts    Options
	rt      *task.Runtime
	chain   *graph.Chain
	heads   []any // the first operator's inputs, per input node
	sides   map[string]any
	restore *protocol.TaskRestore
	opened  bool
	closed  bool
	// checkpoint numbers the harness's snapshots, from 1
	checkpoint int64
}

// New returns a harness of the operators build applies to its input.
func New[I, O any](opts Options, build func(in stream.DataStream[I]) stream.DataStream[O]) (*Harness[I, O], error) {
	c, err := newCore(opts, func(env *stream.Env) ([]any, stream.DataStream[O]) {
		in := stream.FromSlice[I](env, nil)
		return []any{in}, build(in)
	})
	if err != nil {
		return nil, err
	}
	return &Harness[I, O]{harnessCore: c}, nil
}

// Keyed returns a harness of a KeyedProcessFunction on the input keyed by
// key (Flink's KeyedOneInputStreamOperatorTestHarness).
func Keyed[I any, K comparable, O any](opts Options, key func(I) K, newFn func() stream.KeyedProcessFunction[K, I, O]) (*Harness[I, O], error) {
	return New(opts, func(in stream.DataStream[I]) stream.DataStream[O] {
		return stream.KeyedProcess(stream.KeyBy(in, key), newFn)
	})
}

func newCore[O any](opts Options, build func(env *stream.Env) ([]any, stream.DataStream[O])) (*harnessCore[O], error) {
	opts.Parallelism = max(opts.Parallelism, 1)
	if opts.Subtask < 0 || opts.Subtask >= opts.Parallelism {
		return nil, fmt.Errorf("streamtest: subtask %d of %d", opts.Subtask, opts.Parallelism)
	}
	env := stream.New(stream.Options{Parallelism: opts.Parallelism, MaxParallelism: opts.MaxParallelism, Memory: -1})
	inStreams, out := build(env)
	p := graph.Bridge.Program(env)
	if len(p.Errs) > 0 {
		return nil, errors.Join(p.Errs...)
	}
	var ins []*graph.Node
	var head *graph.Node
	for _, s := range inStreams {
		in, _ := graph.Bridge.Stream(s)
		cs := in.Ports[""].Consumers
		last, port := graph.Bridge.Stream(out)
		if last == in || port != "" && last == in || len(cs) != 1 || (head != nil && cs[0].To != head) {
			return nil, errors.New("streamtest: build must apply one chain of operators to its inputs")
		}
		ins = append(ins, in)
		head = cs[0].To
	}
	last, port := graph.Bridge.Stream(out)
	if port != "" {
		return nil, errors.New("streamtest: build must return the main output of its last operator")
	}
	r, err := graph.Resolve(p, graph.Options{Job: "harness", Parallelism: opts.Parallelism, MaxParallelism: opts.MaxParallelism})
	if err != nil {
		return nil, err
	}
	return &harnessCore[O]{r: r, ins: ins, head: head, last: last, capture: &captured[O]{}, opts: opts, sides: map[string]any{},
		clock: clock.NewManual(time.UnixMilli(opts.ProcessingTime))}, nil
}

// Restore makes the operators open from snap, a Snapshot of a harness of
// the same operators (at any parallelism, for keyed state: the harness
// keeps the key groups of its subtask), a part of Repartition, or the
// snapshots of several subtasks combined by Repackage. Call it before the
// first record.
func (h *harnessCore[O]) Restore(snap []byte) error {
	if h.opened {
		return errors.New("streamtest: restore after open")
	}
	if isRepackaged(snap) {
		return h.restoreRepackaged(snap)
	}
	s, err := decodeSnapshot(snap)
	if err != nil {
		return err
	}
	h.restore = &protocol.TaskRestore{}
	for _, o := range s.ops {
		r := protocol.OperatorRestore{ID: o.ID, Watermark: o.Watermark}
		if len(o.State) > 0 {
			r.States = [][]byte{o.State}
		}
		h.restore.Operators = append(h.restore.Operators, r)
	}
	return nil
}

// Open opens the operators; the other methods call it when needed.
func (h *harnessCore[O]) Open() error {
	if h.opened {
		return nil
	}
	h.opened = true
	cfg := task.Config{Job: "harness", Name: h.head.Name, Clock: h.clock, BatchSize: flow.DefaultBatchSize, Restore: h.restore,
		AutoWatermarkInterval: h.opts.AutoWatermarkInterval,
		SideOutputs: func(id string, mk func() any) any {
			out, ok := h.sides[id]
			if !ok {
				out = mk()
				h.sides[id] = out
			}
			return out
		}}
	h.rt = task.New(nil, cfg, h.opts.Subtask, h.opts.Parallelism, nil)
	ch := graph.Harness(h.r, h.rt, h.last, core.Output[O](h.capture), h.capture)
	h.chain = ch
	ins, err := ch.Build(h.head)
	if err != nil {
		return err
	}
	for _, in := range h.ins {
		e := in.Ports[""].Consumers[0]
		h.heads = append(h.heads, ins[slices.Index(h.head.Inputs, e)])
	}
	return h.rt.Open()
}

// headOf returns the first operator's input i, typed.
func headOf[T, O any](h *harnessCore[O], i int) (core.Output[T], error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	o, ok := h.heads[i].(core.Output[T])
	if !ok {
		return nil, errors.New("streamtest: the first operator does not read the input's type")
	}
	return o, nil
}

// ProcessElement pushes v with timestamp ts (watermark.Min for none).
func (h *Harness[I, O]) ProcessElement(v I, ts int64) error {
	if h.in == nil {
		in, err := headOf[I](h.harnessCore, 0)
		if err != nil {
			return err
		}
		h.in = in
	}
	h.one[0] = core.Record[I]{Value: v, Timestamp: ts}
	return h.in.Push(h.one[:])
}

// ProcessElements pushes the records of b as one batch, as a task pushes
// what its input delivered (the batch belongs to the caller).
func (h *Harness[I, O]) ProcessElements(b []stream.Record[I]) error {
	if h.in == nil {
		in, err := headOf[I](h.harnessCore, 0)
		if err != nil {
			return err
		}
		h.in = in
	}
	return h.in.Push(b)
}

// ProcessWatermark advances the watermark: due event-time timers fire,
// then the watermark is emitted.
func (h *harnessCore[O]) ProcessWatermark(wm int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.InputWatermark(wm)
}

// ProcessWatermarkStatus sends the input's watermark status: idle, or
// active again.
func (h *harnessCore[O]) ProcessWatermarkStatus(idle bool) error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.InputStatus(idle)
}

// SetProcessingTime moves the processing-time clock to ms and fires the
// processing-time timers that came due.
func (h *harnessCore[O]) SetProcessingTime(ms int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	h.clock.Set(time.UnixMilli(ms))
	return h.rt.FireProcessingTime()
}

// ProcessMail runs the mail other goroutines posted to the operators so
// far (an async operator's completed calls), without waiting: Flink's
// mailbox harness processAll. EndInput and a full queue wait for it.
func (h *harnessCore[O]) ProcessMail() error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.RunMail()
}

// EndInput ends the input: the operators' end of input, in order.
func (h *harnessCore[O]) EndInput() error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.EndInput()
}

// Output returns the records and watermarks the last operator emitted so
// far, in order.
func (h *harnessCore[O]) Output() []Item[O] { return append([]Item[O](nil), h.capture.items...) }

// Records returns the records of Output.
func (h *harnessCore[O]) Records() []stream.Record[O] {
	var out []stream.Record[O]
	for _, it := range h.capture.items {
		if !it.IsWatermark && !it.IsStatus {
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

// stateCounter is an operator with keyed state: its entries and timers.
type stateCounter interface {
	NumKeyedStateEntries() int
	NumEventTimeTimers() int
	NumProcessingTimeTimers() int
}

// count sums f over the operators with keyed state.
func (h *harnessCore[O]) count(f func(stateCounter) int) int {
	if h.rt == nil {
		return 0
	}
	n := 0
	for _, op := range h.rt.Operators() {
		if c, ok := op.(stateCounter); ok {
			n += f(c)
		}
	}
	return n
}

// NumKeyedStateEntries returns the entries of the operators' keyed state:
// one per key and namespace that holds a value, a list or a map, as
// Flink's numKeyedStateEntries counts on the heap backend. A window
// operator holds its contents per key and window, its trigger's state and,
// for merging windows, the key's window set.
func (h *harnessCore[O]) NumKeyedStateEntries() int {
	return h.count(stateCounter.NumKeyedStateEntries)
}

// NumEventTimeTimers returns the operators' event-time timers.
func (h *harnessCore[O]) NumEventTimeTimers() int { return h.count(stateCounter.NumEventTimeTimers) }

// NumProcessingTimeTimers returns the operators' processing-time timers.
func (h *harnessCore[O]) NumProcessingTimeTimers() int {
	return h.count(stateCounter.NumProcessingTimeTimers)
}

// CurrentWatermark returns the last watermark that went through the
// operators (watermark.Min before any).
func (h *harnessCore[O]) CurrentWatermark() int64 {
	if h.rt == nil {
		return watermark.Min
	}
	return *h.rt.Watermark()
}

// ProcessingTime returns the harness's processing time in milliseconds.
func (h *harnessCore[O]) ProcessingTime() int64 { return h.clock.Now().UnixMilli() }

// OutputEqualsSorted compares got with want as Flink's
// TestHarnessUtil.assertOutputEqualsSorted: as many items, the watermarks
// (and statuses) at the same places, and the records equal once both are
// sorted by cmp. It returns an error saying what differs, or nil.
func OutputEqualsSorted[O any](got, want []Item[O], cmp func(a, b stream.Record[O]) int) error {
	if len(got) != len(want) {
		return fmt.Errorf("streamtest: %d items, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	var g, w []stream.Record[O]
	for i := range want {
		gi, wi := got[i], want[i]
		if wi.IsWatermark || wi.IsStatus || gi.IsWatermark || gi.IsStatus {
			if gi.IsWatermark != wi.IsWatermark || gi.IsStatus != wi.IsStatus || gi.Watermark != wi.Watermark || gi.Idle != wi.Idle {
				return fmt.Errorf("streamtest: item %d is %v, want %v", i, gi, wi)
			}
			continue
		}
		g, w = append(g, gi.Record), append(w, wi.Record)
	}
	slices.SortStableFunc(g, cmp)
	slices.SortStableFunc(w, cmp)
	for i := range w {
		if cmp(g[i], w[i]) != 0 || g[i].Timestamp != w[i].Timestamp {
			return fmt.Errorf("streamtest: the records sorted differ at %d: %v, want %v:\ngot  %v\nwant %v", i, g[i], w[i], g, w)
		}
	}
	return nil
}

// AssertOutputEqualsSorted fails t unless OutputEqualsSorted finds the
// harness's output equal to want.
func AssertOutputEqualsSorted[O any](t testing.TB, h interface{ Output() []Item[O] }, want []Item[O], cmp func(a, b stream.Record[O]) int) {
	t.Helper()
	if err := OutputEqualsSorted(h.Output(), want, cmp); err != nil {
		t.Fatal(err)
	}
}

// ClearOutput forgets what was emitted so far.
func (h *harnessCore[O]) ClearOutput() { h.capture.items = h.capture.items[:0] }

// AnyHarness is a *Harness or a *Harness2.
type AnyHarness interface{ sideOutputs() map[string]any }

func (h *harnessCore[O]) sideOutputs() map[string]any { return h.sides }

// SideOutput returns the records the operators of h (a *Harness or a
// *Harness2) emitted to side output tag, with their timestamps: none when
// nothing was emitted to it. A tag whose id the operators emitted records of
// another type to is an error naming both types.
func SideOutput[X any](h AnyHarness, tag stream.OutputTag[X]) ([]stream.Record[X], error) {
	out, ok := h.sideOutputs()[tag.ID()]
	if !ok {
		return nil, nil
	}
	r, ok := out.(*core.Records[X])
	if !ok {
		return nil, fmt.Errorf("streamtest: side output %q holds %s, not records of %s", tag.ID(), recordsType(out), reflect.TypeFor[X]())
	}
	return append([]stream.Record[X](nil), r.Recs...), nil
}

// recordsType names the record type of a side output's capture.
func recordsType(out any) string {
	if t := reflect.TypeOf(out); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		if f, ok := t.Elem().FieldByName("Recs"); ok && f.Type.Kind() == reflect.Slice {
			if v, ok := f.Type.Elem().FieldByName("Value"); ok {
				return "records of " + v.Type.String()
			}
		}
	}
	return fmt.Sprintf("%T", out)
}

// Snapshot returns the operators' state (keyed state and timers, operator
// state), for Restore on a new harness.
func (h *harnessCore[O]) Snapshot() ([]byte, error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	h.checkpoint++
	ops, err := h.rt.Snapshot(h.checkpoint)
	if err != nil {
		return nil, err
	}
	s := harnessSnapshot{parallelism: h.opts.Parallelism, subtask: h.opts.Subtask}
	for _, o := range ops {
		s.ops = append(s.ops, harnessOperator{OperatorSnapshot: o, maxParallelism: h.maxParallelism(o.ID)})
	}
	return s.encode(), nil
}

// maxParallelism returns the key groups of keyed operator id, 0 for
// operators without keys.
func (h *harnessCore[O]) maxParallelism(id string) int {
	for _, n := range h.r.Program.Nodes {
		if n.Keyed && h.r.IDs[n] == id {
			return h.r.MaxP[n]
		}
	}
	return 0
}

// Metrics returns the user metrics of the operators (their functions'
// RuntimeContext.MetricGroup), each scoped <operator>.<subtask>, first
// operator first, as Job.Metrics shows them per subtask. Meters read the
// harness's processing time (SetProcessingTime).
func (h *harnessCore[O]) Metrics() ([]metrics.Sample, error) {
	if err := h.Open(); err != nil {
		return nil, err
	}
	h.rt.PublishMetrics()
	var out []metrics.Sample
	for _, g := range h.chain.Metrics() {
		out = append(out, g.Samples()...)
	}
	return out, nil
}

// Close closes the operators.
func (h *harnessCore[O]) Close() error {
	if !h.opened || h.closed {
		return nil
	}
	h.closed = true
	return h.rt.Close()
}

// Harness2 runs a two-input operator (CoMap, CoProcess, KeyedCoProcess)
// and the operators chained after it, as Flink's
// TwoInputStreamOperatorTestHarness: records go to either input, the
// watermark and processing time to the operators.
type Harness2[A, B, O any] struct {
	*harnessCore[O]
	h1   core.Output[A]
	h2   core.Output[B]
	one1 [1]core.Record[A]
	one2 [1]core.Record[B]
}

// New2 returns a harness of the operators build applies to its two inputs
// (Flink's TwoInputStreamOperatorTestHarness).
func New2[A, B, O any](opts Options, build func(a stream.DataStream[A], b stream.DataStream[B]) stream.DataStream[O]) (*Harness2[A, B, O], error) {
	c, err := newCore(opts, func(env *stream.Env) ([]any, stream.DataStream[O]) {
		a, b := stream.FromSlice[A](env, nil), stream.FromSlice[B](env, nil)
		return []any{a, b}, build(a, b)
	})
	if err != nil {
		return nil, err
	}
	return &Harness2[A, B, O]{harnessCore: c}, nil
}

// ProcessElement1 pushes v with timestamp ts into the first input.
func (h *Harness2[A, B, O]) ProcessElement1(v A, ts int64) error {
	if h.h1 == nil {
		o, err := headOf[A](h.harnessCore, 0)
		if err != nil {
			return err
		}
		h.h1 = o
	}
	h.one1[0] = core.Record[A]{Value: v, Timestamp: ts}
	return h.h1.Push(h.one1[:])
}

// ProcessElement2 pushes v with timestamp ts into the second input.
func (h *Harness2[A, B, O]) ProcessElement2(v B, ts int64) error {
	if h.h2 == nil {
		o, err := headOf[B](h.harnessCore, 1)
		if err != nil {
			return err
		}
		h.h2 = o
	}
	h.one2[0] = core.Record[B]{Value: v, Timestamp: ts}
	return h.h2.Push(h.one2[:])
}

// Broadcast returns a harness of a BroadcastProcessFunction: the first
// input is the non-broadcast stream, the second the broadcast stream with
// the broadcast states descs (Flink's BroadcastOperatorTestHarness).
func Broadcast[A, B, O any](opts Options, newFn func() stream.BroadcastProcessFunction[A, B, O], descs ...stream.BroadcastDescriptor) (*Harness2[A, B, O], error) {
	return New2(opts, func(a stream.DataStream[A], b stream.DataStream[B]) stream.DataStream[O] {
		return stream.BroadcastProcess(stream.ConnectBroadcast(a, stream.Broadcast(b, descs...)), newFn)
	})
}

// KeyedBroadcast returns a harness of a KeyedBroadcastProcessFunction on
// the first input keyed by key and the second broadcast with the states
// descs (Flink's KeyedBroadcastOperatorTestHarness).
func KeyedBroadcast[A any, K comparable, B, O any](opts Options, key func(A) K, newFn func() stream.KeyedBroadcastProcessFunction[K, A, B, O], descs ...stream.BroadcastDescriptor) (*Harness2[A, B, O], error) {
	return New2(opts, func(a stream.DataStream[A], b stream.DataStream[B]) stream.DataStream[O] {
		return stream.KeyedBroadcastProcess(stream.ConnectKeyedBroadcast(stream.KeyBy(a, key), stream.Broadcast(b, descs...)), newFn)
	})
}

// NotifyCheckpointComplete tells the operators that checkpoint id
// completed (Flink's harness notifyOfCompletedCheckpoint); the harness's
// snapshots are checkpoints 1, 2, ... in the order taken.
func (h *harnessCore[O]) NotifyCheckpointComplete(id int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.NotifyCheckpointComplete(id)
}

// NotifyCheckpointAborted tells the operators that checkpoint id was
// aborted.
func (h *harnessCore[O]) NotifyCheckpointAborted(id int64) error {
	if err := h.Open(); err != nil {
		return err
	}
	return h.rt.NotifyCheckpointAborted(id)
}
