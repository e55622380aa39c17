package optimizer

import "fmt"

// Simple is the rule-based planner: it forwards record-at-a-time operators
// (so they chain), hash-partitions keyed inputs, groups Reduce with a hash
// table behind a combiner and GroupReduce by sorting, and joins by
// repartitioning both inputs into a hybrid hash join built from the smaller
// estimated input (the second when unknown). Every JoinHint is honoured exactly.
// Exchanges are pipelined; the rules Optimize runs after it make blocking
// those that must be and apply the job's execution mode.
type Simple struct{}

// Plan implements Planner.
func (Simple) Plan(p *Plan) error {
	for _, n := range p.Nodes {
		d := Decision{Ship: make([]Ship, len(n.Inputs)), Exchange: make([]Exchange, len(n.Inputs))}
		d.Estimate = estimate(n) // for EXPLAIN; the rules do not use it
		for i, in := range n.Inputs {
			if in.Parallelism == n.Parallelism {
				d.Ship[i] = Forward
			} else {
				d.Ship[i] = Rebalance
			}
			if i < len(n.Keyed) && n.Keyed[i] {
				d.Ship[i] = Hash
			}
			if i < len(n.Ordered) && n.Ordered[i] {
				d.Ship[i] = Range
			}
			if sh, ok := n.Forced[i]; ok {
				d.Ship[i] = sh
			}
		}
		switch n.Kind {
		case Reduce:
			d.Local = HashAggregate
			d.Combine = n.Combinable
		case GroupReduce:
			d.Local = SortGroup
		case Sort:
			d.Local = SortLocal
		case CoGroup:
			d.Local = SortCoGroup
		case Cross:
			planCross(n, &d)
		case Join:
			if len(n.Inputs) != 2 {
				return fmt.Errorf("optimizer: join %q has %d inputs", n.Name, len(n.Inputs))
			}
			if err := planJoin(n, &d); err != nil {
				return err
			}
		}
		n.Decision = d
	}
	return nil
}

func planJoin(n *Node, d *Decision) error {
	hint := n.JoinHint
	if hint == OptimizerChooses {
		hint = RepartitionHashSecond
		l, r := n.Inputs[0].EstimatedRows, n.Inputs[1].EstimatedRows
		if l >= 0 && r >= 0 && l < r {
			hint = RepartitionHashFirst
		}
	}
	switch hint {
	case BroadcastHashFirst, BroadcastHashSecond:
		b := 0
		if hint == BroadcastHashSecond {
			b = 1
		}
		if n.Outer[b] {
			return fmt.Errorf("optimizer: join %q: %s cannot keep the unmatched records of the broadcast input", n.Name, hint)
		}
		d.Ship[b], d.Ship[1-b] = Broadcast, Forward
		if n.Inputs[1-b].Parallelism != n.Parallelism {
			d.Ship[1-b] = Rebalance
		}
		d.Local = HybridHashBuildFirst
		if b == 1 {
			d.Local = HybridHashBuildSecond
		}
	case RepartitionHashFirst:
		d.Ship[0], d.Ship[1], d.Local = Hash, Hash, HybridHashBuildFirst
	case RepartitionHashSecond:
		d.Ship[0], d.Ship[1], d.Local = Hash, Hash, HybridHashBuildSecond
	case RepartitionSortMerge:
		d.Ship[0], d.Ship[1], d.Local = Hash, Hash, SortMerge
	default:
		return fmt.Errorf("optimizer: join %q: unknown hint %d", n.Name, hint)
	}
	return nil
}

// planCross broadcasts the smaller input (by hint, else by estimate, else the
// second) and streams the other through blocked nested loops.
func planCross(n *Node, d *Decision) {
	b := 1
	switch n.CrossHint {
	case SecondIsHuge:
		b = 0
	case CrossAny:
		l, r := n.Inputs[0].EstimatedRows, n.Inputs[1].EstimatedRows
		if l >= 0 && r >= 0 && l < r {
			b = 0
		}
	}
	d.Ship[b] = Broadcast
	d.Ship[1-b] = Forward
	if n.Inputs[1-b].Parallelism != n.Parallelism {
		d.Ship[1-b] = Rebalance
	}
	// the streamed input is read a block at a time; the broadcast one is scanned per block
	d.Local = NestedLoopsBlockFirst
	if b == 0 {
		d.Local = NestedLoopsBlockSecond
	}
}
