package optimizer

import "math"

// memoryShare is the managed memory one subtask of a memory-using operator
// may reserve (+Inf without a budget): the budget split evenly between the
// subtasks of the operators that hold managed memory (sorts, hash tables,
// the combiners of combinable inputs), as Flink gives each operator a
// fraction of the managed memory, so that one cannot starve the next one in
// its pipeline. It follows from the model alone, so the cost model weighs
// spilling against the share that runs (setMemoryShare).
func memoryShare(p *Plan) float64 {
	if p.Memory <= 0 {
		return math.Inf(1)
	}
	users := 0
	for _, n := range p.Nodes {
		switch n.Kind {
		case Reduce, GroupReduce, Sort, Join, CoGroup, Cross:
			users += max(n.Parallelism, 1)
		}
		if n.Combinable {
			for _, in := range n.Inputs {
				users += max(in.Parallelism, 1)
			}
		}
	}
	return float64(p.Memory) / float64(max(users, 1))
}

// setMemoryShare writes memoryShare into every node's decision: the runtime
// gives each subtask that much (0 without a budget).
func setMemoryShare(p *Plan) error {
	var share int64
	if s := memoryShare(p); !math.IsInf(s, 1) {
		share = int64(s)
	}
	for _, n := range p.Nodes {
		n.Decision.MemoryShare = share
	}
	return nil
}
