package optimizer

import "fmt"

// check changes nothing: it verifies that every decision is complete and
// runnable, so that a planner's or a rule's mistake is an error here rather
// than a wrong job. Every input has a ship strategy and an exchange; a
// forward ship connects equal parallelisms; an edge inside an iteration is
// pipelined; ShipFor names a consumer that reads the node forward.
func check(p *Plan) error {
	ids := make(map[int]*Node, len(p.Nodes))
	for _, n := range p.Nodes {
		ids[n.ID] = n
	}
	for _, n := range p.Nodes {
		d := &n.Decision
		if len(d.Ship) != len(n.Inputs) || len(d.Exchange) != len(n.Inputs) ||
			(d.InputLocal != nil && len(d.InputLocal) != len(n.Inputs)) {
			return fmt.Errorf("#%d %s: %d inputs, %d ship strategies, %d exchanges, %d input strategies",
				n.ID, n.Name, len(n.Inputs), len(d.Ship), len(d.Exchange), len(d.InputLocal))
		}
		for i, in := range n.Inputs {
			if d.Ship[i] == Forward && in.Parallelism != n.Parallelism {
				return fmt.Errorf("#%d %s: input %d is forwarded from parallelism %d to %d", n.ID, n.Name, i, in.Parallelism, n.Parallelism)
			}
			if n.Loop > 0 && in.Loop == n.Loop && d.Exchange[i] != Pipelined {
				return fmt.Errorf("#%d %s: input %d is %s inside iteration %d", n.ID, n.Name, i, d.Exchange[i], n.Loop)
			}
		}
		if f := d.ShipFor; f != nil {
			c := ids[f.Node]
			if c == nil || f.Input >= len(c.Inputs) || c.Inputs[f.Input] != n || c.Decision.Ship[f.Input] != Forward {
				return fmt.Errorf("#%d %s: ships for input %d of #%d, which does not read it forward", n.ID, n.Name, f.Input, f.Node)
			}
		}
	}
	return nil
}
