package optimizer

import "fmt"

// A rule rewrites the decisions of a planned Plan, or checks them. Rules run
// after the planner, once each, in the order of rules; none undoes another.
type rule struct {
	name  string
	apply func(p *Plan) error
}

// rules is the order in which Optimize applies the rules after the planner.
var rules = []rule{
	// A join of a step that keeps a loop-invariant input as a hash index
	// builds on it. First: which input a join reads first (rejoins below)
	// follows from its driver strategy.
	{"loop build", loopBuild},
	// The exchange into a replayer's consumer moves in front of the
	// replayer. Before the exchange modes: the rules after it see each
	// edge's final ship strategy (BATCH makes a shuffle blocking, not a
	// forward).
	{"ship before replay", shipBeforeReplay},
	// The job's execution mode. Before every rule that makes an exchange
	// blocking for correctness, so that no mode undoes one.
	{"execution mode", executionMode},
	// Exchanges into an ordered gather block: a blocking exchange replays
	// its producers in subtask order.
	{"ordered gather", orderedGather},
	// Exchanges block where branches of a DAG rejoin at an operator that
	// reads one input before the other, against deadlock. After the driver
	// strategies are final (loop build).
	{"rejoins", breakRejoins},
	// Edges inside an iteration are pipelined (only those carry the
	// end-of-superstep events); a producer that feeds an iteration and the
	// operators after it is read blocking by the latter. Last of the
	// exchange rules: inside iterations it overrides the mode and rejoins,
	// and it refuses a step whose rejoin would need a blocking edge.
	{"loop exchanges", loopExchanges},
	// Each node's share of the memory budget, as the cost model weighed it.
	// After ship before replay, which may change a replayer's parallelism.
	{"memory share", setMemoryShare},
	// Changes nothing: checks that the decisions are complete and runnable.
	{"check", check},
}

// Optimize plans p: the planner chooses each node's strategies, then the
// rules fix what iterations, the execution mode and deadlock avoidance need
// and set each node's memory share. The result is every decision the job
// runs with: nothing changes it afterwards.
func Optimize(p *Plan, planner Planner) error {
	if err := planner.Plan(p); err != nil {
		return err
	}
	for _, r := range rules {
		if err := r.apply(p); err != nil {
			return fmt.Errorf("optimizer: %s: %w", r.name, err)
		}
	}
	return nil
}
