package dataset

import (
	"maps"
	"slices"

	"github.com/weirdata/weir/optimizer"
)

// modelOf returns the optimizer's model of nodes, which come in an order
// where every node follows its inputs: a copy of each node's optimizer.Node
// with its inputs, the fields that follow from the annotations (forwarded
// fields, a sort's directions) and its part in an iteration. Planning writes
// into the copy only, so the program is the same after any number of
// plannings. inputs gives a node's inputs in the model (nil: its own; the
// second stage of an adaptive execution reads replays instead of stored
// nodes).
func (e *Env) modelOf(nodes []*node, inputs func(*node) []*node) *optimizer.Plan {
	p := &optimizer.Plan{Memory: e.opts.Memory, Mode: e.opts.Mode, Nodes: make([]*optimizer.Node, len(nodes))}
	loops := make(map[*loop]int, len(e.loops))
	for i, lp := range e.loops {
		loops[lp] = i + 1
	}
	copies := make(map[*node]*optimizer.Node, len(nodes))
	byOpt := make(map[*optimizer.Node]*optimizer.Node, len(nodes))
	for i, n := range nodes {
		ins := n.inputs
		if inputs != nil {
			ins = inputs(n)
		}
		c := n.model(ins)
		for j, in := range ins {
			c.Inputs[j] = copies[in]
		}
		if n.opt.SizeOf != nil {
			c.SizeOf = byOpt[n.opt.SizeOf] // nil when not in the model
		}
		if n.loops().loop != nil {
			c.Loop = loops[n.loops().loop]
			c.LoopRole = n.loopRole()
		}
		copies[n] = c
		byOpt[&n.opt] = c
		p.Nodes[i] = c
	}
	return p
}

// model returns a copy of n's optimizer node with room for its inputs ins
// and the fields that follow from the annotations: the forwarded fields (a
// Reduce forwards the key it keeps) and a sort's direction per named field.
func (n *node) model(ins []*node) *optimizer.Node {
	c := n.opt
	c.Inputs = make([]*optimizer.Node, len(ins))
	c.Keyed, c.Ordered = slices.Clone(n.opt.Keyed), slices.Clone(n.opt.Ordered)
	c.KeyTypes, c.Static = slices.Clone(n.opt.KeyTypes), slices.Clone(n.opt.Static)
	c.Keys = cloneNames(n.opt.Keys)
	c.Forced = maps.Clone(n.opt.Forced)
	c.Decision = cloneDecision(n.opt.Decision)
	c.Actual = nil
	c.Forwards = nil
	for i := range ins {
		fw := slices.Clone(n.forwards)
		if i == 0 && n.keysOf != nil && len(n.keysOf.opt.Keys) > 0 {
			for _, f := range n.keysOf.opt.Keys[0] {
				if !slices.Contains(fw, f) {
					fw = append(fw, f)
				}
			}
		}
		if len(fw) > 0 {
			if c.Forwards == nil {
				c.Forwards = make([][]string, len(ins))
			}
			c.Forwards[i] = fw
		}
	}
	c.Descending = nil
	if n.desc != nil {
		c.Descending = slices.Clone(n.desc)
		if len(n.desc) == 1 && len(c.Keys) > 0 && len(c.Keys[0]) > 1 {
			// one direction for a key of several named fields
			c.Descending = slices.Repeat(n.desc, len(c.Keys[0]))
		}
	}
	return &c
}

// loopRole is n's part in its iteration, as the optimizer names it.
func (n *node) loopRole() optimizer.LoopRole {
	switch {
	case n.loops().role == loopTail:
		return optimizer.LoopTail
	case n.loops().role == loopBody:
		return optimizer.LoopStep
	case n == n.loops().loop.head:
		return optimizer.LoopHead
	}
	return optimizer.LoopReplay
}

// cloneDecision copies d's slices.
func cloneDecision(d optimizer.Decision) optimizer.Decision {
	d.Ship, d.Exchange, d.InputLocal = slices.Clone(d.Ship), slices.Clone(d.Exchange), slices.Clone(d.InputLocal)
	d.Notes = slices.Clone(d.Notes)
	if d.ShipFor != nil {
		f := *d.ShipFor
		d.ShipFor = &f
	}
	return d
}

// bind gives every node of nodes the plan node it runs as (plan.Nodes in the
// same order): its decision and parallelism, which translate and the
// operators read during the execution.
func bind(plan *optimizer.Plan, nodes []*node) {
	for i, n := range nodes {
		n.planned = plan.Nodes[i]
	}
}
