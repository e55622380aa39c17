package optimizer

// orderedGather makes every exchange into an OrderedGather node blocking: a
// blocking exchange replays its producers one after the other, in subtask
// order, which keeps the order of a total sort.
func orderedGather(p *Plan) error {
	for _, n := range p.Nodes {
		if !n.OrderedGather {
			continue
		}
		for i := range n.Decision.Exchange {
			n.Decision.Exchange[i] = Blocking
		}
	}
	return nil
}
