package optimizer

import "fmt"

// shipBeforeReplay moves the exchange between a replayer (LoopReplay) and
// its consumer in front of the replayer. The planner puts it on the edge
// from the replayer, which carries the loop-invariant input every
// superstep; in front, the input is shipped once, in the first superstep,
// and each subtask of the replayer holds its share, already partitioned (or
// broadcast) for the consumer. The replayer takes the consumer's parallelism
// and ships for the consumer's input (Decision.ShipFor: its key; the records
// pass through unchanged), and the consumer reads it forward. It applies to
// a replayer with one consumer and any ship strategy but forward and a range
// partitioning, whose bounds are sampled on the edge the planner chose.
func shipBeforeReplay(p *Plan) error {
	type use struct {
		n *Node
		i int
	}
	uses := map[*Node][]use{}
	for _, n := range p.Nodes {
		for i, in := range n.Inputs {
			if in.LoopRole == LoopReplay && in.Loop > 0 {
				uses[in] = append(uses[in], use{n, i})
			}
		}
	}
	for _, r := range p.Nodes {
		us := uses[r]
		if len(us) != 1 || len(r.Inputs) != 1 {
			continue
		}
		c, i := us[0].n, us[0].i
		d, rd := &c.Decision, &r.Decision
		if s := d.Ship[i]; s == Forward || s == Range {
			continue
		}
		rd.Ship[0], d.Ship[i] = d.Ship[i], Forward
		rd.ShipFor = &Port{Node: c.ID, Input: i}
		r.Parallelism = c.Parallelism
		rd.Notes = append(rd.Notes, fmt.Sprintf("input 0 shipped %s once, for %s: the spool holds each subtask's share", rd.Ship[0], c.Name))
		d.Notes = append(d.Notes, fmt.Sprintf("input %d forward: the loop-invariant input was shipped %s into its replayer, once", i, rd.Ship[0]))
	}
	return nil
}
