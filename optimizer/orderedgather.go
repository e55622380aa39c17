package optimizer

// orderedGather makes every exchange into an OrderedGather node from more
// than one producer subtask blocking: a blocking exchange replays its
// producers one after the other, in subtask order, which keeps the order of
// a total sort. One producer's records arrive in order pipelined.
func orderedGather(p *Plan) error {
	for _, n := range p.Nodes {
		if !n.OrderedGather {
			continue
		}
		for i := range n.Decision.Exchange {
			if n.Inputs[i].Parallelism > 1 {
				n.Decision.Exchange[i] = Blocking
			}
		}
	}
	return nil
}
