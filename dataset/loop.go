package dataset

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// loopRole is a node's part in an iteration.
type loopRole uint8

// loopMember is a node's part in iterations: its loop and role there
// (loopDelta: a delta iteration's delta tail); the loop whose result it
// reads; whether it keeps loop-invariant input cacheInput as an index across
// supersteps (seal sets it); per loop it is an invariant input of, its replayer.
type loopMember struct {
	loop       *loop
	role       loopRole
	loopDelta  bool
	resultOf   *loop
	cached     bool
	cacheInput int
	replayer   map[*loop]*node
}

// member returns n's part in iterations, making it.
func (n *node) member() *loopMember {
	if n.lm == nil {
		n.lm = &loopMember{}
	}
	return n.lm
}

// join puts n in lp with a role.
func (n *node) join(lp *loop, r loopRole) { n.member().loop, n.member().role = lp, r }

// loops returns n's part in iterations; outside them, the zero part.
func (n *node) loops() *loopMember {
	if n.lm == nil {
		return &outsideLoops
	}
	return n.lm
}

// outsideLoops is the part in iterations of a node outside them.
var outsideLoops loopMember

const (
	notInLoop  loopRole = iota
	loopSource          // the head, or a loop-invariant input's replayer: emits every superstep
	loopBody            // depends on the head: runs once per superstep
	loopTail            // a body sink: the next partial solution, workset, delta or criterion
)

// loop is one iteration of a program: its nodes, and while the job runs, its
// flow.Iteration: the superstep barrier every subtask of its tasks meets at
// the end of each superstep, and the storage those tasks and the tasks of its
// result share.
//
// At the barrier the last subtask to arrive runs decide: it runs the
// iteration's hooks (the next partial solution becomes the current one, the
// delta is merged into the solution set), rolls the aggregators, records the
// superstep's statistics and checks the termination criteria (the maximum
// number of supersteps, an empty workset, an empty termination criterion, a
// convergence criterion). Then every subtask either runs the next superstep
// or ends, and the iteration's result becomes readable.
type loop struct {
	env  *Env
	name string
	max  int
	head *node

	// built with the program
	tails     []*node
	criterion *node // TerminateWhenEmpty's tail, if any
	next      *node // a bulk iteration's next-partial-solution tail
	workset   *node // a delta iteration's workset tail
	aggs      []rollable
	converged func(superstep int) bool
	spilled   func() int64 // a delta iteration's solution set spill so far

	onStep []func(ctx context.Context) error // hooks run at every barrier

	// spread (Options.Spread): the loop's index in the program, the parts
	// other than 0 with subtasks of it, and the link its barrier meets
	// the other processes' over (loopLink)
	index  int
	voters []int
	link   *loopLink

	// per execution (reset, then start)
	it      *flow.Iteration
	started time.Time
	counts  map[*node]*atomic.Int64 // records each tail received this superstep
	stats   []SuperstepStats
}

// SuperstepStats is what one superstep of an iteration did.
type SuperstepStats struct {
	Superstep int
	// Records is what the tail received: the next partial solution's records
	// (bulk) or the next workset's (delta).
	Records int64
	// Delta is the records merged into the solution set (delta iterations).
	Delta int64
	// SolutionSpilled is what the solution set (delta iterations) has
	// written to disk so far, in bytes.
	SolutionSpilled int64
	Time            time.Duration
}

// IterationStats are an iteration's supersteps, in order.
type IterationStats struct {
	Name       string
	Supersteps []SuperstepStats
}

// rollable is an aggregator: at every barrier its superstep's value becomes
// the previous one; clear starts an execution from zero.
type rollable interface {
	roll()
	clear()
	// spread (loopLink): the superstep's value encoded, another process's
	// combined into it, replaced by the total; codecErr says why the
	// values cannot be encoded
	current() ([]byte, error)
	merge(b []byte) error
	set(b []byte) error
	codecErr() error
}

func (e *Env) newLoop(name string, max int) *loop {
	lp := &loop{env: e, name: name, max: max, index: len(e.loops)}
	e.loops = append(e.loops, lp)
	return lp
}

// reset prepares an execution.
func (lp *loop) reset() {
	lp.it = nil
	lp.started = time.Now()
	lp.counts = map[*node]*atomic.Int64{}
	for _, t := range lp.tails {
		lp.counts[t] = new(atomic.Int64)
	}
	lp.stats = nil
	for _, a := range lp.aggs {
		a.clear()
	}
}

// start makes the execution's barrier, once translate knows the loop's tasks:
// parties subtasks of the loop's tasks meet at it, and users subtasks (those
// and the result's) share the loop's storage.
func (lp *loop) start(parties, users int) {
	lp.it = flow.NewIteration(parties, users, lp.decide)
}

// decide runs at the barrier, once per superstep, in the last subtask to
// arrive: it says whether another superstep follows. Spread, the barrier
// meets the other processes' first (meet), and part 0 decides for all.
func (lp *loop) decide(ctx context.Context, step int) (bool, error) {
	var verdict *ballot // spread, a part other than 0: part 0's
	if lp.link != nil {
		v, err := lp.meet(ctx, step)
		if err != nil {
			return false, err
		}
		verdict = v
	}
	leads := lp.link != nil && verdict == nil // part 0 of a spread execution
	st := SuperstepStats{Superstep: step}
	if lp.workset != nil {
		st.Records = lp.counts[lp.workset].Load()
	} else if lp.next != nil {
		st.Records = lp.counts[lp.next].Load()
	}
	for _, hook := range lp.onStep {
		if err := hook(ctx); err != nil {
			if leads {
				lp.link.tell(lp, &ballot{loop: lp.index, step: step, failure: err.Error()})
			}
			return false, err
		}
	}
	var totals *ballot // part 0's verdict: the totals before the aggregators roll
	if leads {
		aggs, err := lp.aggValues()
		if err != nil {
			lp.link.tell(lp, &ballot{loop: lp.index, step: step, failure: err.Error()})
			return false, err
		}
		totals = &ballot{loop: lp.index, step: step, aggs: aggs, counts: make([]int64, len(lp.tails))}
		for i, t := range lp.tails {
			totals.counts[i] = lp.counts[t].Load()
		}
	}
	for _, a := range lp.aggs {
		a.roll()
	}
	stop := step >= lp.max
	if lp.criterion != nil && lp.counts[lp.criterion].Load() == 0 {
		stop = true
	}
	if lp.workset != nil && st.Records == 0 {
		stop = true
	}
	switch {
	case verdict != nil:
		stop = !verdict.more
	case lp.converged != nil && lp.converged(step):
		stop = true
	}
	if totals != nil {
		totals.more = !stop
		lp.link.tell(lp, totals)
	}
	now := time.Now()
	st.Time = now.Sub(lp.started)
	lp.started = now
	if d, ok := lp.deltaCount(); ok {
		st.Delta = d
	}
	if lp.spilled != nil {
		st.SolutionSpilled = lp.spilled()
	}
	lp.stats = append(lp.stats, st)
	for _, c := range lp.counts {
		c.Store(0)
	}
	return !stop, nil
}

// deltaCount is set by delta iterations: the records of this superstep's delta.
func (lp *loop) deltaCount() (int64, bool) {
	for _, t := range lp.tails {
		if t.lm.loopDelta {
			return lp.counts[t].Load(), true
		}
	}
	return 0, false
}

// hold registers storage to free once every task that may read it (the
// loop's and its result's) has ended.
func (lp *loop) hold(free func()) { lp.it.Hold(free) }

// ---- building: which nodes are in the loop ----

// seal marks the loop's nodes once the step function returned: every node
// created since the head that depends on it is in the body; a body input from
// outside the loop gets a replayer (a loop-invariant input is read once and
// replayed every superstep). Sinks other than the loop's own tails cannot be
// in a body.
func (lp *loop) seal(where string) {
	e := lp.env
	start := lp.head.opt.ID + 1
	for _, n := range e.nodes[start:] {
		if n.loops().loop != nil {
			continue
		}
		for _, in := range n.inputs {
			if in.loops().loop == lp && in.loops().role != notInLoop {
				n.join(lp, loopBody)
				break
			}
		}
		if n.loops().loop == lp && n.opt.Kind == optimizer.Sink {
			e.fail(where, fmt.Errorf("%s is a sink inside the step function: sinks belong after the iteration", n.name()))
		}
	}
	added := map[*node]bool{}
	for _, n := range e.nodes[start:] {
		if n.loops().loop != lp || (n.loops().role != loopBody && n.loops().role != loopTail) {
			continue
		}
		static := -1
		for i, in := range n.inputs {
			if in.loops().loop != lp || in.loops().role == notInLoop {
				if static >= 0 {
					static = -2 // several: replay them
				} else if static == -1 {
					static = i
				}
			}
		}
		if static >= 0 && n.op != nil && n.op.canCache(static) {
			n.lm.cached, n.lm.cacheInput = true, static // read once, kept as an index
			continue
		}
		for i, in := range n.inputs {
			if in.loops().loop == lp && in.loops().role != notInLoop {
				continue
			}
			m := in.member()
			if m.replayer == nil {
				m.replayer = map[*loop]*node{}
			}
			r := m.replayer[lp]
			if r == nil {
				r = in.out.newReplayer(lp)
				m.replayer[lp] = r
				added[r] = true
			}
			n.inputs[i] = r
		}
	}
	if len(added) == 0 {
		lp.model()
		return
	}
	// place every replayer just before its first consumer, so that nodes stay
	// in an order where inputs come first, and renumber
	nodes := make([]*node, 0, len(e.nodes))
	placed := map[*node]bool{}
	for _, n := range e.nodes {
		if added[n] {
			continue
		}
		for _, in := range n.inputs {
			if added[in] && !placed[in] {
				nodes = append(nodes, in)
				placed[in] = true
			}
		}
		nodes = append(nodes, n)
	}
	e.nodes = nodes
	for i, n := range e.nodes {
		n.opt.ID = i
	}
	lp.model()
}

// supersteps is how many supersteps the planner should expect of lp: its
// maximum, or at most optimizer.DefaultIterations when it may end earlier (a
// delta iteration's workset may empty; a termination or convergence
// criterion may stop it).
func (lp *loop) supersteps() int {
	if lp.workset != nil || lp.criterion != nil || lp.converged != nil {
		return max(1, min(lp.max, optimizer.DefaultIterations))
	}
	return max(1, lp.max)
}

// model tells the planner, in the optimizer nodes of lp's head, step,
// replayers and tails, how many times they run (Node.Iterations) and which of
// their inputs are loop-invariant (Node.Static): the inputs from outside the
// loop that are still wired in after seal (the head's initial input, a
// replayer's input, the side a join keeps as an index) reach them once, in
// the first superstep.
func (lp *loop) model() {
	k := lp.supersteps()
	for _, n := range lp.env.nodes {
		if n.loops().loop != lp || n.loops().role == notInLoop {
			continue
		}
		n.opt.Iterations = k
		n.opt.Static = make([]bool, len(n.inputs))
		for i, in := range n.inputs {
			n.opt.Static[i] = in.loops().loop != lp || in.loops().role == notInLoop
		}
	}
}

// tail marks n as one of the loop's tails.
func (lp *loop) tail(n *node) {
	n.join(lp, loopTail)
	lp.tails = append(lp.tails, n)
}

// checkLoops reports nodes outside an iteration that read from inside it.
func (e *Env) checkLoops() error {
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			if in.loops().loop != nil && in.loops().loop != n.loops().loop && in.loops().role != notInLoop {
				return fmt.Errorf("dataset: %s reads %s, which is inside the step function of %s: use the iteration's result", n.name(), in.name(), in.loops().loop.name)
			}
		}
	}
	return nil
}

// runTask runs subtask party of the loop's barrier, a subtask of a task of
// the loop, once per superstep until the barrier says the iteration ended
// (flow.Iteration.Run). body builds the task's operator chain and runs it for
// one superstep; the inputs from inside the loop are read in superstep mode.
func (lp *loop) runTask(tc *task, head *node, party int, body func() error) error {
	var in []int
	for i, n := range head.inputs {
		if n.loops().loop == lp && n.loops().role != notInLoop {
			in = append(in, i)
		}
	}
	return lp.it.Run(tc.TaskContext, party, in, func(step int) error {
		tc.step = step
		return body()
	})
}
