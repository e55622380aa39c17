package dataset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/spill"
)

// Adaptive execution (Options.Adaptive) runs a program in two stages, cut
// where the planner guessed and a measurement can correct it:
//
//	stage 1: cuts and their ancestors ──> materialize (one spill file per subtask)
//	                                               │ real row counts
//	stage 2: replay sources ──> the rest, planned again with the real sizes
//
// The cuts are the nodes (not sources, whose size is known or declared) that
// feed an input of a join, cogroup or cross the planner chose freely: no hint
// and no forced ship on that input. Subtask i of a cut writes its records,
// serialized with memory.Codec, to its own file in a store; in stage 2 a
// replay source with the cut's parallelism emits file i from subtask i, so
// the data lies where it lay. The planner cannot be told that partitioning
// (a source's output counts as unpartitioned), so a cut whose partitioning a
// later operator reuses is not measured: re-planning would ship it again.
// Stage 1 may hold only nodes whose consumers all run in stage 1 (a sink of
// an ancestor of a cut runs there too); the cuts that would break this are
// dropped, with a note in the plan.

// store holds a cut node's output: one spill file per subtask.
type store struct {
	space   *spill.Space
	handles []spill.Handle // per subtask, set when its writer finished
}

// rows returns the number of records stored.
func (s *store) rows() int64 {
	var n int64
	for _, h := range s.handles {
		n += h.Records
	}
	return n
}

// detachedNode returns a node that is not part of the program: the
// materializing sinks and replay sources of an adaptive execution. It is
// planned as the program's node id would be (notes name #id).
func (e *Env) detachedNode(kind optimizer.OpKind, id int, name string, par int, inputs ...*node) *node {
	n := &node{env: e, inputs: inputs}
	n.opt = optimizer.Node{ID: id, Name: name, Kind: kind, Parallelism: par, EstimatedRows: -1, EstimatedBytes: -1,
		Keyed: make([]bool, len(inputs)), KeyTypes: make([]string, len(inputs)), Ordered: make([]bool, len(inputs))}
	n.in = make([]inPort, len(inputs))
	return n
}

// materializeNode returns the sink that writes src's output (records of T)
// into st. It reads its input forwarded, so it chains into src's task when
// src has no other consumer in stage 1.
func materializeNode[T any](src *node, st *store) *node {
	codec, err := memory.NewCodec[T]()
	n := src.env.detachedNode(optimizer.Sink, src.opt.ID, fmt.Sprintf("Materialize #%d", src.opt.ID), src.opt.Parallelism, src)
	n.opt.Decision = optimizer.Decision{Ship: []optimizer.Ship{optimizer.Forward}, Exchange: []optimizer.Exchange{optimizer.Pipelined}}
	connectInput[T](n, 0, nil)
	n.op = pushes[T, none](&materializeOp[T]{codec: codec, err: err, st: st})
	return n
}

// materializeOp is a materializing sink's operator; storeTask its instance
// in a task, which writes the subtask's records to its spill file.
type materializeOp[T any] struct {
	stateless
	codec *memory.Codec[T]
	err   error // the records have no codec
	st    *store
}

func (o *materializeOp[T]) open(tc *task, _ collector[none]) (flow.OneInput[T], error) {
	if o.err != nil {
		return nil, o.err
	}
	if tc.Subtask >= len(o.st.handles) {
		return nil, fmt.Errorf("internal error: subtask %d of %d stored partitions", tc.Subtask, len(o.st.handles))
	}
	return &storeTask[T]{tc: tc, codec: o.codec, st: o.st}, nil
}

type storeTask[T any] struct {
	tc       *task
	w        *spill.Writer
	codec    *memory.Codec[T]
	st       *store
	buf      []byte
	finished bool
}

func (c *storeTask[T]) Open(*flow.TaskContext) error {
	w, err := c.st.space.Create()
	c.w = w
	return err
}

func (c *storeTask[T]) Process(b []T) error {
	for i := range b {
		c.buf = c.codec.Append(c.buf[:0], &b[i])
		if err := c.w.Append(c.buf); err != nil {
			return err
		}
	}
	return nil
}

func (c *storeTask[T]) EndInput() error {
	c.finished = true // a failed Finish removes the file
	h, err := c.w.Finish()
	if err != nil {
		return err
	}
	c.st.handles[c.tc.Subtask] = h
	c.tc.Metrics.AddSpilled(h.DiskBytes)
	return nil
}

// Close removes the file unless EndInput finished it.
func (c *storeTask[T]) Close() error {
	if !c.finished {
		c.w.Abort()
	}
	return nil
}

// replayNode returns the source that emits what src stored in st: subtask i
// reads partition i. Its estimate is the real count.
func replayNode[T any](src *node, st *store) *node {
	codec, err := memory.NewCodec[T]()
	e := src.env
	n := e.detachedNode(optimizer.Source, src.opt.ID, "Replay "+src.name(), src.opt.Parallelism)
	n.opt.EstimatedRows = st.rows()
	n.op = pulls[T](&replayOp[T]{codec: codec, err: err, st: st, batch: e.opts.BatchSize})
	newDataSet[T](e, n)
	n.opt.RowBytes = src.opt.RowBytes
	return n
}

// replayOp is a replay source's operator.
type replayOp[T any] struct {
	stateless
	codec *memory.Codec[T]
	err   error // the records have no codec
	st    *store
	batch int
}

func (o *replayOp[T]) run(tc *task, c collector[T]) error {
	if o.err != nil {
		return o.err
	}
	st := o.st
	if tc.Subtask >= len(st.handles) {
		return fmt.Errorf("internal error: subtask %d of %d stored partitions", tc.Subtask, len(st.handles))
	}
	r, err := st.space.Open(st.handles[tc.Subtask])
	if err != nil {
		return err
	}
	defer r.Close()
	batch := make([]T, 0, o.batch)
	for {
		rec, err := r.Next()
		if err != nil {
			if isEOF(err) {
				break
			}
			return err
		}
		batch = batch[:len(batch)+1]
		if _, err := o.codec.Decode(rec, &batch[len(batch)-1]); err != nil {
			return err
		}
		if len(batch) == cap(batch) {
			if err := tc.Context().Err(); err != nil {
				return err
			}
			if err := c.Collect(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		if err := c.Collect(batch); err != nil {
			return err
		}
	}
	return c.End()
}

// stages is how an adaptive execution splits the program.
type stages struct {
	cuts   []*node        // measured nodes, in program order
	stage1 map[*node]bool // the cuts, their ancestors and the nodes that read only those
	notes  map[*node][]string
}

func (st *stages) note(n *node, format string, args ...any) {
	st.notes[n] = append(st.notes[n], fmt.Sprintf(format, args...))
}

// addNotes appends the notes on why inputs were not measured to the nodes of
// p, which holds the program's nodes in program order.
func (st *stages) addNotes(e *Env, p *optimizer.Plan) {
	for i, n := range e.nodes {
		p.Nodes[i].Decision.Notes = append(p.Nodes[i].Decision.Notes, st.notes[n]...)
	}
}

// choosesFreely reports whether the planner chooses n's strategy: a join
// without a hint, a cross without a size hint, a cogroup.
func choosesFreely(n *node) bool {
	switch n.opt.Kind {
	case optimizer.Join:
		return n.opt.JoinHint == optimizer.OptimizerChooses
	case optimizer.Cross:
		return n.opt.CrossHint == optimizer.CrossAny
	case optimizer.CoGroup:
		return true
	}
	return false
}

// splitStages chooses the cut nodes of the planned program and the nodes of
// stage 1 (see the comment at the top of this file).
func (e *Env) splitStages() *stages {
	st := &stages{notes: map[*node][]string{}}
	consumers := map[*node][]*node{}
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			if !slices.Contains(consumers[in], n) {
				consumers[in] = append(consumers[in], n)
			}
		}
	}
	isCut := map[*node]bool{}
	for _, n := range e.nodes {
		if !choosesFreely(n) {
			continue
		}
		for i, in := range n.inputs {
			if _, forced := n.opt.Forced[i]; forced || in.opt.Kind == optimizer.Source || in.out == nil || isCut[in] {
				continue
			}
			if err := in.out.storable(); err != nil {
				st.note(n, "adaptive: input %d (#%d) is not measured: %v", i, in.opt.ID, err)
				continue
			}
			if partitioningReused(in, consumers) {
				st.note(n, "adaptive: input %d (#%d) is not measured: its partitioning is reused", i, in.opt.ID)
				continue
			}
			isCut[in] = true
		}
	}
	for {
		st.stage1 = map[*node]bool{}
		var visit func(n *node)
		visit = func(n *node) {
			if st.stage1[n] {
				return
			}
			st.stage1[n] = true
			for _, in := range n.inputs {
				visit(in)
			}
		}
		for c := range isCut {
			visit(c)
		}
		for _, n := range e.nodes { // nodes that read only stage 1's non-cut nodes (program order: inputs first)
			if st.stage1[n] || len(n.inputs) == 0 {
				continue
			}
			side := true
			for _, in := range n.inputs {
				side = side && st.stage1[in] && !isCut[in]
			}
			st.stage1[n] = side
		}
		changed := false
		for _, n := range e.nodes {
			switch {
			case isCut[n] && !slices.ContainsFunc(consumers[n], func(y *node) bool { return !st.stage1[y] }):
				delete(isCut, n) // nothing reads it after the boundary: it just runs in stage 1
				changed = true
			case st.stage1[n] && !isCut[n]:
				i := slices.IndexFunc(consumers[n], func(y *node) bool { return !st.stage1[y] })
				if i < 0 {
					continue
				}
				// n would be needed on both sides: drop the cuts it shares ancestors with
				user, anc := consumers[n][i], ancestors(n)
				var drop []*node
				for _, c := range e.nodes { // program order, for stable notes
					if isCut[c] && !disjoint(anc, ancestors(c)) {
						drop = append(drop, c)
					}
				}
				if len(drop) == 0 { // cannot happen: n is in stage 1 for a cut's sake
					clear(isCut)
				}
				for _, c := range drop {
					delete(isCut, c)
					for _, y := range consumers[c] {
						if choosesFreely(y) {
							st.note(y, "adaptive: #%d is not measured: #%d, which shares its inputs, also feeds #%d after the boundary",
								c.opt.ID, n.opt.ID, user.opt.ID)
						}
					}
				}
				changed = true
			}
			if changed {
				break
			}
		}
		if !changed {
			break
		}
	}
	for _, n := range e.nodes {
		if isCut[n] {
			st.cuts = append(st.cuts, n)
		}
	}
	return st
}

// partitioningReused reports whether an operator after c (through forwarded
// inputs) relies on the partitioning c's output has: it forwards a keyed input
// that is not the probe side of a broadcast.
func partitioningReused(c *node, consumers map[*node][]*node) bool {
	seen := map[*node]bool{}
	var walk func(x *node) bool
	walk = func(x *node) bool {
		if seen[x] {
			return false
		}
		seen[x] = true
		for _, y := range consumers[x] {
			d := y.planned.Decision
			for i, in := range y.inputs {
				if in != x || i >= len(d.Ship) || d.Ship[i] != optimizer.Forward {
					continue
				}
				keyed := y.opt.Keyed[i] || y.opt.Ordered[i]
				if keyed && !slices.Contains(d.Ship, optimizer.Broadcast) {
					return true
				}
				if walk(y) {
					return true
				}
			}
		}
		return false
	}
	return walk(c)
}

// ancestors returns n and every node it depends on.
func ancestors(n *node) map[*node]bool {
	out := map[*node]bool{}
	var visit func(x *node)
	visit = func(x *node) {
		if out[x] {
			return
		}
		out[x] = true
		for _, in := range x.inputs {
			visit(in)
		}
	}
	visit(n)
	return out
}

func disjoint(a, b map[*node]bool) bool {
	for x := range a {
		if b[x] {
			return false
		}
	}
	return true
}

// executeAdaptive runs the planned program in two stages (see the comment at
// the top of this file). Sinks commit only after stage 2 succeeded; on every
// path the stores are removed.
func (e *Env) executeAdaptive(ctx context.Context, plan *optimizer.Plan, st *stages) (res *Result, err error) {
	before := clonePlan(plan) // the first planning, node by node in program order
	fs, closeFS, err := e.spillFS()
	if err != nil {
		return nil, fmt.Errorf("dataset: adaptive: %w", err)
	}
	stores := map[*node]*store{}
	release := func() error {
		var errs []error
		for _, c := range st.cuts {
			if s := stores[c]; s != nil {
				errs = append(errs, s.space.Close())
			}
		}
		errs = append(errs, closeFS())
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("dataset: adaptive: %w", err)
		}
		return nil
	}
	released := false
	defer func() {
		if !released {
			release() // the failure is what the caller needs to hear of
		}
	}()

	// stage 1: the cuts and what they depend on, as first planned, each
	// cut's output stored by a sink that reads it forward
	var stage1 []*node
	plan1 := &optimizer.Plan{Memory: plan.Memory, Mode: plan.Mode}
	for i, n := range e.nodes {
		if st.stage1[n] {
			stage1 = append(stage1, n)
			plan1.Nodes = append(plan1.Nodes, plan.Nodes[i])
		}
	}
	for _, c := range st.cuts {
		s := &store{space: spill.NewSpace(fs, fmt.Sprintf("adaptive-%d", c.opt.ID), e.opts.Spill),
			handles: make([]spill.Handle, c.opt.Parallelism)}
		stores[c] = s
		m := c.out.materialize(s)
		pm := m.model(m.inputs)
		pm.Inputs[0] = c.planned
		stage1 = append(stage1, m)
		plan1.Nodes = append(plan1.Nodes, pm)
	}
	res1, err := e.runStage(ctx, plan1, stage1)
	if err != nil {
		return nil, e.failed(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, e.failed(fmt.Errorf("dataset: job canceled: %w", err))
	}

	// stage 2: the rest, reading the stored outputs, planned again: its
	// model reads a replay where the program reads a cut
	replays := map[*node]*node{}
	var stage2 []*node
	for _, c := range st.cuts {
		r := c.out.replay(stores[c])
		replays[c] = r
		stage2 = append(stage2, r)
	}
	for _, n := range e.nodes {
		if st.stage1[n] {
			continue
		}
		for _, in := range n.inputs {
			if replays[in] == nil && st.stage1[in] {
				return nil, e.failed(fmt.Errorf("dataset: internal error: %s reads %s across the adaptive boundary", n.name(), in.name()))
			}
		}
		stage2 = append(stage2, n)
	}
	plan2 := e.modelOf(stage2, func(n *node) []*node {
		ins := slices.Clone(n.inputs)
		for i, in := range ins {
			if r := replays[in]; r != nil {
				ins[i] = r
			}
		}
		return ins
	})
	if err := optimizer.Optimize(plan2, e.opts.Planner); err != nil {
		return nil, e.failed(fmt.Errorf("dataset: re-plan: %w", err))
	}
	replanned2 := map[*node]*optimizer.Node{}
	for i, n := range stage2 {
		replanned2[n] = plan2.Nodes[i]
	}
	res2, err := e.runStage(ctx, plan2, stage2)
	if err != nil {
		return nil, e.failed(err)
	}
	released = true
	if err := release(); err != nil {
		return nil, e.failed(err)
	}
	if err := e.commit(); err != nil {
		return nil, err
	}
	e.publish()

	// one plan: stage 1 as first planned, stage 2 as planned again
	for _, n := range stage2 {
		n.vertex += len(res1.Vertices)
	}
	metrics := &flow.Result{Vertices: append(slices.Clone(res1.Vertices), res2.Vertices...),
		PeakMemory: max(res1.PeakMemory, res2.PeakMemory)}
	final := clonePlan(plan)
	for i, n := range e.nodes {
		if p2 := replanned2[n]; p2 != nil {
			final.Nodes[i].Decision = cloneDecision(p2.Decision)
		}
	}
	st.addNotes(e, final)
	replanned := make([]bool, len(e.nodes))
	for i, n := range e.nodes {
		d := &final.Nodes[i].Decision
		if s := stores[n]; s != nil {
			d.Notes = append(d.Notes, fmt.Sprintf("adaptive: materialized, %d rows (estimated %d); what reads it is planned again",
				s.rows(), before.Nodes[i].Decision.Estimate.Rows))
		}
		if st.stage1[n] || !strategyChanged(&before.Nodes[i].Decision, d) {
			continue
		}
		replanned[i] = true
		var why []string
		for _, c := range cutsBehind(n, st) {
			why = append(why, fmt.Sprintf("#%d produced %d rows, estimated %d", c.opt.ID, stores[c].rows(), before.Nodes[c.opt.ID].Decision.Estimate.Rows))
		}
		d.Notes = append(d.Notes, "re-planned: "+strings.Join(why, "; "))
	}
	out := &Result{Plan: e.actuals(final, metrics), Metrics: metrics}
	for i, r := range replanned {
		out.Plan.Nodes[i].Actual.Replanned = r
	}
	return out, nil
}

// strategyChanged reports whether the second planning chose other ship,
// input-local or driver strategies (exchange modes aside: with stored inputs
// fewer branches rejoin).
func strategyChanged(a, b *optimizer.Decision) bool {
	locals := func(d *optimizer.Decision) []optimizer.InputLocal {
		if d.InputLocal == nil {
			return make([]optimizer.InputLocal, len(d.Ship))
		}
		return d.InputLocal
	}
	return !slices.Equal(a.Ship, b.Ship) || !slices.Equal(locals(a), locals(b)) || a.Local != b.Local || a.Combine != b.Combine
}

// cutsBehind returns the cuts stage-2 node n depends on, by id.
func cutsBehind(n *node, st *stages) []*node {
	var out []*node
	seen := map[*node]bool{}
	var visit func(x *node)
	visit = func(x *node) {
		if seen[x] {
			return
		}
		seen[x] = true
		if slices.Contains(st.cuts, x) {
			out = append(out, x)
			return
		}
		for _, in := range x.inputs {
			visit(in)
		}
	}
	visit(n)
	slices.SortFunc(out, func(a, b *node) int { return a.opt.ID - b.opt.ID })
	return out
}
