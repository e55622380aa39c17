package dataset

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// loopRole is a node's part in an iteration.
type loopRole uint8

const (
	notInLoop  loopRole = iota
	loopSource          // the head, or a loop-invariant input's replayer: emits every superstep
	loopBody            // depends on the head: runs once per superstep
	loopTail            // a body sink: the next partial solution, workset, delta or criterion
)

// loop is one iteration of a program: its nodes, and while the job runs, the
// superstep barrier every subtask of its tasks meets at the end of each
// superstep (Flink's SuperstepBarrier: the runtime's end-of-superstep events
// tell each task its superstep's input ended; the barrier tells the iteration
// that every task ended it).
//
// At the barrier the last subtask to arrive decides: it runs the iteration's
// hooks (the next partial solution becomes the current one, the delta is merged
// into the solution set), rolls the aggregators, records the superstep's
// statistics and checks the termination criteria (the maximum number of
// supersteps, an empty workset, an empty termination criterion, a convergence
// criterion). Then every subtask either runs the next superstep or ends, and
// the iteration's result becomes readable (done is closed).
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

	// per execution (reset)
	mu       sync.Mutex
	parties  int // subtasks of the loop's tasks, set by translate
	arrived  int
	gate     chan struct{}
	more     bool
	err      error
	done     chan struct{}
	stepNow  atomic.Int64
	started  time.Time
	counts   map[*node]*atomic.Int64 // records each tail received this superstep
	stats    []SuperstepStats
	onStep   []func(ctx context.Context) error // hooks run at every barrier
	exits    int                               // tasks that may hold the loop's storage
	released bool
	release  []func()
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
}

func (e *Env) newLoop(name string, max int) *loop {
	lp := &loop{env: e, name: name, max: max}
	e.loops = append(e.loops, lp)
	return lp
}

// reset prepares an execution.
func (lp *loop) reset() {
	lp.parties, lp.arrived, lp.more, lp.err = 0, 0, false, nil
	lp.gate = make(chan struct{})
	lp.done = make(chan struct{})
	lp.stepNow.Store(1)
	lp.started = time.Now()
	lp.counts = map[*node]*atomic.Int64{}
	for _, t := range lp.tails {
		lp.counts[t] = new(atomic.Int64)
	}
	lp.stats = nil
	lp.exits, lp.released, lp.release = 0, false, nil
	for _, a := range lp.aggs {
		a.clear()
	}
}

// await is a subtask's arrival at the barrier after superstep step. It returns
// whether another superstep follows.
func (lp *loop) await(ctx context.Context, step int) (bool, error) {
	lp.mu.Lock()
	gate := lp.gate
	lp.arrived++
	if lp.arrived == lp.parties {
		lp.arrived = 0
		lp.more, lp.err = lp.decide(ctx, step)
		if !lp.more {
			close(lp.done)
		}
		lp.gate = make(chan struct{})
		close(gate)
	}
	lp.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return lp.more, lp.err
}

// decide runs at the barrier, in the last subtask to arrive.
func (lp *loop) decide(ctx context.Context, step int) (bool, error) {
	st := SuperstepStats{Superstep: step}
	if lp.workset != nil {
		st.Records = lp.counts[lp.workset].Load()
	} else if lp.next != nil {
		st.Records = lp.counts[lp.next].Load()
	}
	for _, hook := range lp.onStep {
		if err := hook(ctx); err != nil {
			return false, err
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
	if lp.converged != nil && lp.converged(step) {
		stop = true
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
	if !stop {
		lp.stepNow.Store(int64(step + 1))
	}
	return !stop, nil
}

// deltaCount is set by delta iterations: the records of this superstep's delta.
func (lp *loop) deltaCount() (int64, bool) {
	for _, t := range lp.tails {
		if t.loopDelta {
			return lp.counts[t].Load(), true
		}
	}
	return 0, false
}

// waitDone blocks until the iteration ended (for its result's tasks).
func (lp *loop) waitDone(ctx context.Context) error {
	select {
	case <-lp.done:
		return lp.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold registers storage to free once every task that may read it has ended.
func (lp *loop) hold(free func()) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.released {
		free()
		return
	}
	lp.release = append(lp.release, free)
}

// exit is called by every task of the loop and of its result when it ends; the
// last one frees the loop's storage.
func (lp *loop) exit(total int) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.exits++
	if lp.exits < total || lp.released {
		return
	}
	lp.released = true
	for _, f := range lp.release {
		f()
	}
	lp.release = nil
}

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
		if n.loop != nil {
			continue
		}
		for _, in := range n.inputs {
			if in.loop == lp && in.role != notInLoop {
				n.loop, n.role = lp, loopBody
				break
			}
		}
		if n.loop == lp && n.opt.Kind == optimizer.Sink {
			e.fail(where, fmt.Errorf("%s is a sink inside the step function: sinks belong after the iteration", n.name()))
		}
	}
	added := map[*node]bool{}
	for _, n := range e.nodes[start:] {
		if n.loop != lp || (n.role != loopBody && n.role != loopTail) {
			continue
		}
		static := -1
		for i, in := range n.inputs {
			if in.loop != lp || in.role == notInLoop {
				if static >= 0 {
					static = -2 // several: replay them
				} else if static == -1 {
					static = i
				}
			}
		}
		if static >= 0 && n.canCache != nil && n.canCache(static) {
			n.cached, n.cacheInput = true, static // read once, kept as an index
			continue
		}
		for i, in := range n.inputs {
			if in.loop == lp && in.role != notInLoop {
				continue
			}
			if in.replayer == nil {
				in.replayer = map[*loop]*node{}
			}
			r := in.replayer[lp]
			if r == nil {
				r = in.newReplayer(lp)
				in.replayer[lp] = r
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
		if n.loop != lp || n.role == notInLoop {
			continue
		}
		n.opt.Iterations = k
		n.opt.Static = make([]bool, len(n.inputs))
		for i, in := range n.inputs {
			n.opt.Static[i] = in.loop != lp || in.role == notInLoop
		}
	}
}

// tail marks n as one of the loop's tails.
func (lp *loop) tail(n *node) {
	n.loop, n.role = lp, loopTail
	lp.tails = append(lp.tails, n)
}

// checkLoops reports nodes outside an iteration that read from inside it.
func (e *Env) checkLoops() error {
	for _, n := range e.nodes {
		for _, in := range n.inputs {
			if in.loop != nil && in.loop != n.loop && in.role != notInLoop {
				return fmt.Errorf("dataset: %s reads %s, which is inside the step function of %s: use the iteration's result", n.name(), in.name(), in.loop.name)
			}
		}
	}
	return nil
}

// runTask runs a task of a loop: once per superstep until the barrier says
// the iteration ended. body builds the task's operator chain and runs it for
// one superstep.
func (lp *loop) runTask(tc *task, head *node, body func() error) error {
	for i, in := range head.inputs {
		if in.loop == lp && in.role != notInLoop {
			si, err := in.supersteps(tc, i)
			if err != nil {
				return err
			}
			tc.stepInputs = append(tc.stepInputs, si)
		}
	}
	ctx := tc.Context()
	for step := 1; ; step++ {
		tc.step = step
		err := body()
		// what the superstep's operators hold (reservations, spill files,
		// sorters) goes now, not when the task ends; what outlives a
		// superstep is held by the loop (loop.hold)
		tc.exit()
		if err != nil {
			return err
		}
		// an operator may stop reading early (a join with an empty build side
		// skips its probe side): the rest of the superstep is dropped, so that
		// producers never block on it
		for _, si := range tc.stepInputs {
			if err := si.drain(ctx); err != nil {
				return err
			}
		}
		more, err := lp.await(ctx, step)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		for _, si := range tc.stepInputs {
			si.next()
		}
	}
}

// stepInput is an input of a loop task read in superstep mode.
type stepInput struct {
	next  func()                          // start reading the next superstep
	drain func(ctx context.Context) error // skip the rest of this superstep
}

// stepSupersteps puts input i of a task (records of T) into superstep mode.
func stepSupersteps[T any](tc *task, i int) (stepInput, error) {
	r := flow.Input[T](tc.TaskContext, i)
	if err := r.Supersteps(); err != nil {
		return stepInput{}, err
	}
	drain := func(ctx context.Context) error {
		for {
			_, err := r.Next(ctx)
			if err != nil {
				if isEOF(err) {
					return nil
				}
				return err
			}
		}
	}
	return stepInput{next: r.NextSuperstep, drain: drain}, nil
}
