package optimizer

import "fmt"

// ExecutionMode sets the exchange modes of a whole job, as Flink's
// ExecutionMode does. The rules that need a blocking exchange (an ordered
// gather, a rejoin) or a pipelined one (inside an iteration) run after it,
// so a mode never undoes them.
type ExecutionMode uint8

const (
	// PipelinedExecution keeps the planner's exchanges (the default).
	PipelinedExecution ExecutionMode = iota
	// PipelinedForced makes every exchange pipelined that correctness lets
	// be: the rules after it make blocking again what must block.
	PipelinedForced
	// BatchExecution makes every shuffle (every exchange but a forward)
	// blocking.
	BatchExecution
	// BatchForced makes every exchange blocking.
	BatchForced
)

// String returns the mode's name as Flink spells it.
func (m ExecutionMode) String() string {
	switch m {
	case PipelinedExecution:
		return "PIPELINED"
	case PipelinedForced:
		return "PIPELINED_FORCED"
	case BatchExecution:
		return "BATCH"
	case BatchForced:
		return "BATCH_FORCED"
	}
	return fmt.Sprintf("ExecutionMode(%d)", uint8(m))
}

// exchange returns the mode's exchange for an edge shipped s that the
// planner gave x.
func (m ExecutionMode) exchange(s Ship, x Exchange) Exchange {
	switch m {
	case PipelinedForced:
		return Pipelined
	case BatchExecution:
		if s != Forward {
			return Blocking
		}
	case BatchForced:
		return Blocking
	}
	return x
}

// executionMode applies p.Mode to every exchange but those inside an
// iteration (see loopExchanges), noting each one it changes.
func executionMode(p *Plan) error {
	if p.Mode > BatchForced {
		return fmt.Errorf("unknown execution mode %d", p.Mode)
	}
	for _, n := range p.Nodes {
		d := &n.Decision
		for i, in := range n.Inputs {
			if n.Loop > 0 && in.Loop == n.Loop {
				continue
			}
			if x := p.Mode.exchange(d.Ship[i], d.Exchange[i]); x != d.Exchange[i] {
				d.Exchange[i] = x
				d.Notes = append(d.Notes, fmt.Sprintf("input %d: %s, execution mode %s", i, x, p.Mode))
			}
		}
	}
	return nil
}
