package dataset

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/callsite"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/spill"
)

// Options configures an Env. The zero value runs on all cores with the default
// memory budget.
type Options struct {
	// Parallelism is the number of subtasks of every operator; zero means
	// runtime.GOMAXPROCS(0).
	Parallelism int
	// Memory is the managed memory budget of a job in bytes; zero means
	// memory.DefaultBudget() (a quarter of the machine's or the cgroup's
	// memory, at least 256 MiB), negative means none. While the job runs, the
	// Go runtime's soft memory limit follows it (memory.LimitRuntime).
	Memory int64
	// SegmentSize is the size of a memory segment; zero means the memory
	// package's default.
	SegmentSize int
	// TmpDir is where spill files go ("" is the system's temporary directory).
	// It is ignored when SpillFS is set.
	TmpDir string
	// SpillFS, when set, is the file system every spill file of the job goes
	// to (a spill.FaultFS in tests); the caller closes it. Operators remove
	// their files themselves, on success and on failure.
	SpillFS SpillFS
	// Spill sets the spill files' block size and compression (spill's defaults
	// when zero).
	Spill SpillOptions
	// Planner chooses strategies; nil means CostBased.
	Planner Planner
	// Planned, when set, is called by Execute with a copy of the plan it is
	// about to run, as Env.Plan returns it (the optimizer's rules and
	// Adaptive's notes included; with Adaptive, the first planning), before
	// anything runs. An error from it ends Execute with that error: a caller
	// that does not hold the Env (a library that builds and executes its own
	// program) can print the plan and stop there.
	Planned func(*Plan) error
	// Mode sets the exchange modes of the whole job, as Flink's
	// ExecutionMode does; the planner applies it, so the plan shows it.
	Mode ExecutionMode
	// BatchSize is the number of records per batch; zero means flow's default.
	BatchSize int
	// Progress, when set, receives the running job's progress every
	// ProgressEvery (zero: one second); see flow.Options.Progress.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Adaptive, when set, makes Execute measure before it commits to the
	// strategies of the operators that consume freely planned two-input
	// operators' inputs: it first runs the operators that feed a join, a
	// cogroup or a cross whose strategy the planner chose (no hint, no forced
	// ship on that input) together with everything they depend on, writes
	// those inputs to disk, then plans the rest of the program again with
	// their real sizes and runs it on the stored records (for example a
	// repartition join whose filtered input turned out tiny becomes a
	// broadcast join). Result.Plan marks what the second planning
	// changed (Actual.Replanned). See the package documentation. The default
	// (false) plans once.
	Adaptive bool
	// Spread, when set, runs this process's share of a program spread
	// over several processes (see Spread).
	Spread *Spread
}

// Env collects a program and runs it. It is not safe for concurrent use.
type Env struct {
	opts  Options
	nodes []*node
	errs  []error
	loops []*loop
	// stages counts the executions run spread (Spread.Transport's stage);
	// here, during one, reports whether subtask i of vertex v runs in this
	// process.
	stages int
	here   func(v, i int) bool
}

// elsewhere reports whether subtask i of n runs in another process.
func (e *Env) elsewhere(n *node, i int) bool { return e.here != nil && !e.here(n.vertex, i) }

// New returns an empty program.
func New(opts Options) *Env {
	if opts.Parallelism <= 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	if opts.Planner == nil {
		opts.Planner = optimizer.CostBased{}
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = flow.DefaultBatchSize
	}
	if opts.Memory == 0 {
		opts.Memory = memory.DefaultBudget()
	}
	opts.Memory = max(opts.Memory, 0)
	return &Env{opts: opts}
}

// Parallelism returns the number of subtasks of the program's operators.
func (e *Env) Parallelism() int { return e.opts.Parallelism }

// Result is what Execute reports.
type Result struct {
	// Plan is the plan that ran, with what each operator did in its nodes'
	// Actual: the records it emitted (a sink: received), and the busy time
	// (summed over subtasks), peak managed memory (summed over subtasks) and
	// spilled bytes of its task, which chained operators share. Plan.Text()
	// prints it as EXPLAIN ANALYZE does. With Options.Adaptive it is the final
	// plan: the measured part as first planned, the rest as planned again.
	Plan *Plan
	// Metrics are the runtime's per-task, per-subtask metrics; with
	// Options.Adaptive, the vertices of both stages, the first stage's first,
	// and the larger of the two stages' peak memory.
	Metrics *Metrics
	// Iterations holds, per iteration of the program (Iterate, IterateDelta),
	// what each of its supersteps did.
	Iterations []IterationStats
}

// Plan builds the program's optimizer model and plans it, without running
// anything: the returned plan holds every operator with its annotations,
// estimates and the planner's decisions. It returns the first error found
// while building the program, or the planner's. The plan is a copy: changing
// it changes nothing in the program.
func (e *Env) Plan() (*Plan, error) { return e.plan() }

// plan plans a copy of the program's model (see modelOf): the planner's
// choices and the rules' (optimizer.Optimize). translate reads the result
// and nothing else; the program is left as it was.
func (e *Env) plan() (*optimizer.Plan, error) {
	if len(e.errs) > 0 {
		return nil, errors.Join(e.errs...)
	}
	if len(e.nodes) == 0 {
		return nil, fmt.Errorf("dataset: the program has no operators")
	}
	if err := e.checkLoops(); err != nil {
		return nil, err
	}
	plan := e.modelOf(e.nodes, nil)
	if err := optimizer.Optimize(plan, e.opts.Planner); err != nil {
		return nil, fmt.Errorf("dataset: plan: %w", err)
	}
	return plan, nil
}

// Execute plans and runs the program: every sink and what it depends on. It
// returns the first error found while building the program, or the first
// failure of the job.
//
// Output sinks commit in two phases: each task closes its writer, and once
// every task succeeded Execute commits the writers, Output by Output in program
// order and subtask by subtask. If the job fails, every writer is aborted; if a
// commit fails, the writers not yet committed are aborted, the files this
// Execute already committed are removed (best effort) and the error names the
// Output. Either way a failed Execute leaves no output behind. With
// Options.Adaptive the program runs in two stages (see the package
// documentation) and commits after the second.
func (e *Env) Execute(ctx context.Context) (*Result, error) {
	plan, err := e.plan()
	if err != nil {
		return nil, err
	}
	if sp := e.opts.Spread; sp != nil {
		if err := sp.check(); err != nil {
			return nil, err
		}
		for _, lp := range e.loops {
			if err := lp.spreadable(); err != nil {
				return nil, err
			}
		}
		if e.opts.Adaptive {
			return nil, errors.New("dataset: Options.Adaptive runs in one process, not spread: its second planning needs the sizes every process measured")
		}
		sp.gather(plan, e.nodes)
	}
	bind(plan, e.nodes)
	for _, n := range e.nodes {
		n.op.reset()
		n.rows.Store(0)
		n.variants.bits.Store(0)
	}
	for _, lp := range e.loops {
		lp.reset()
	}
	if e.opts.Adaptive && len(e.loops) == 0 {
		st := e.splitStages()
		if len(st.cuts) > 0 {
			if err := e.planned(plan); err != nil {
				return nil, err
			}
			return e.executeAdaptive(ctx, plan, st)
		}
		st.addNotes(e, plan)
	}
	if err := e.planned(plan); err != nil {
		return nil, err
	}
	res, err := e.runStage(ctx, plan, e.nodes)
	if err != nil {
		return nil, e.failed(err)
	}
	if err := e.commit(); err != nil {
		return nil, err
	}
	e.publish()
	return &Result{Plan: e.actuals(plan, res), Metrics: res, Iterations: e.iterationStats()}, nil
}

// planned hands a copy of plan to Options.Planned, if set.
func (e *Env) planned(plan *optimizer.Plan) error {
	if e.opts.Planned == nil {
		return nil
	}
	return e.opts.Planned(clonePlan(plan))
}

// iterationStats returns what every iteration of the last execution did.
func (e *Env) iterationStats() []IterationStats {
	var out []IterationStats
	for _, lp := range e.loops {
		out = append(out, IterationStats{Name: lp.name, Supersteps: lp.stats})
	}
	return out
}

// runStage translates plan, whose nodes nodes run as (in the same order),
// and runs it.
func (e *Env) runStage(ctx context.Context, plan *optimizer.Plan, nodes []*node) (*flow.Result, error) {
	g, err := e.translate(plan, nodes)
	if err != nil {
		return nil, err
	}
	defer memory.LimitRuntime(e.opts.Memory)()
	mgr, err := memory.NewManager(memory.Options{SegmentSize: e.opts.SegmentSize, Budget: e.opts.Memory})
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var remote *flow.Remote
	if sp := e.opts.Spread; sp != nil {
		gathered := map[int]bool{}
		for _, n := range nodes {
			if n.gathered {
				gathered[n.vertex] = true
			}
		}
		remote, err = sp.remote(e.stages, gathered)
		e.stages++
		if err != nil {
			return nil, closeManager(mgr, err)
		}
		e.here = remote.Here
		if len(e.loops) > 0 { // the iterations' barrier across the processes
			k, err := openLoopLink(ctx, sp.Part, len(sp.Slots), remote.Transport, e.loops)
			if err != nil {
				return nil, closeManager(mgr, err)
			}
			for _, lp := range e.loops {
				lp.link = k
			}
			defer func() {
				k.close()
				for _, lp := range e.loops {
					lp.link = nil
				}
			}()
		}
	}
	res, err := flow.Execute(ctx, g, flow.Options{
		Manager:       mgr,
		TmpDir:        e.opts.TmpDir,
		FS:            e.opts.SpillFS,
		Spill:         e.opts.Spill.ForBudget(e.opts.Memory),
		BatchSize:     e.opts.BatchSize,
		Progress:      e.opts.Progress,
		ProgressEvery: e.opts.ProgressEvery,
		Remote:        remote,
	})
	if err != nil {
		err = fmt.Errorf("dataset: %w", err)
	}
	return res, closeManager(mgr, err)
}

// closeManager closes a stage's memory manager and adds to err the
// reservations an operator did not release, on success and on failure alike.
func closeManager(m *memory.Manager, err error) error {
	if cerr := m.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("dataset: %w", cerr))
	}
	return err
}

// spillFS returns the file system for spill files of the job's own (the
// adaptive stages' stores) and what closes it: Options.SpillFS, which its
// caller closes, or a new directory under Options.TmpDir.
func (e *Env) spillFS() (spill.FS, func() error, error) {
	if e.opts.SpillFS != nil {
		return e.opts.SpillFS, func() error { return nil }, nil
	}
	fs, err := spill.NewDiskFS(e.opts.TmpDir)
	if err != nil {
		return nil, nil, err
	}
	return fs, fs.Close, nil
}

// failed aborts the output of a failed execution and returns err with what
// could not be removed.
func (e *Env) failed(err error) error {
	if aerr := e.abort(); aerr != nil {
		err = errors.Join(err, aerr)
	}
	return err
}

// publish runs every node's done, once the execution succeeded and committed.
func (e *Env) publish() {
	for _, n := range e.nodes {
		n.op.done()
	}
}

// actuals returns a copy of plan whose nodes hold what their operators did.
func (e *Env) actuals(plan *optimizer.Plan, res *flow.Result) *optimizer.Plan {
	out := clonePlan(plan)
	for i, n := range e.nodes {
		a := &optimizer.Actual{Rows: n.rows.Load(), Variant: n.variants.load().String()}
		if s, ok := n.op.impl().(keySource); ok && s.filter() != nil {
			a.KeyFilter, a.KeyFiltered = s.filter().column, s.filter().removed.Load()
		}
		if n.vertex >= 0 && n.vertex < len(res.Vertices) {
			t := res.Vertices[n.vertex].Total()
			a.Time, a.PeakMemory, a.Spilled = t.Busy, t.PeakMemory, t.Spilled
		}
		out.Nodes[i].Actual = a
	}
	return out
}

// commit publishes the output of a job that succeeded, node by node in program
// order. When a node's commit fails, it takes back everything this execution
// wrote and returns the failure, with whatever could not be removed.
func (e *Env) commit() error {
	for _, n := range e.nodes {
		if err := n.op.commit(); err != nil {
			err = fmt.Errorf("dataset: %s: commit: %w", n.name(), err)
			if aerr := e.abort(); aerr != nil {
				err = errors.Join(err, aerr)
			}
			return err
		}
	}
	return nil
}

// abort takes back the output of every node of this execution (see
// execution.abort) and returns what it could not remove.
func (e *Env) abort() error {
	var errs []error
	for _, n := range e.nodes {
		if err := n.op.abort(); err != nil {
			errs = append(errs, fmt.Errorf("dataset: %s: abort: %w", n.name(), err))
		}
	}
	return errors.Join(errs...)
}

// fail records a build error with the caller's position.
func (e *Env) fail(where string, err error) {
	e.errs = append(e.errs, fmt.Errorf("dataset: %s: %w", where, err))
}

// caller returns "file.go:line" of the user code that called an API
// function (skip frames above the API function itself).
func caller(skip int) string { return callsite.At(skip + 1) }
