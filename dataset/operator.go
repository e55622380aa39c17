package dataset

import (
	"fmt"

	"github.com/weirdata/weir/flow"
)

// execution is what an operator does once per execution of the program,
// outside its tasks; stateless gives the defaults.
type execution interface {
	// reset prepares per-execution state, before any task runs.
	reset()
	// done publishes results, once the execution succeeded and committed.
	done()
	// commit publishes what the operator's tasks wrote (two-phase output),
	// once the job succeeded; abort takes back this execution's output on
	// failure: it aborts what is not committed and removes what is (best
	// effort), returning what it could not remove.
	commit() error
	abort() error
	// canCache says whether a loop-invariant input can be kept as an index
	// across supersteps instead of replayed (see loop.seal).
	canCache(input int) bool
}

// stateless: no state, no output to commit, no input kept as an index.
type stateless struct{}

func (stateless) reset()            {}
func (stateless) done()             {}
func (stateless) commit() error     { return nil }
func (stateless) abort() error      { return nil }
func (stateless) canCache(int) bool { return false }

// none is the output type of a sink, whose output collector is nil.
type none = struct{}

// pusher is a chainable operator from In to Out (record at a time, a sink's
// tail): open returns its instance in a task, which the task opens, pushes
// its input into and closes.
type pusher[In, Out any] interface {
	execution
	open(tc *task, out collector[Out]) (flow.OneInput[In], error)
}

// puller is an operator that reads its task's inputs itself (a source, a
// sort, a join), run as a flow.Driver.
type puller[Out any] interface {
	execution
	// run reads the task's inputs, pushes the output into out and ends it.
	run(tc *task, out collector[Out]) error
}

// operator is a node's operator with its types erased, for translate: the
// one place a task's chain is assembled from untyped nodes. It is a struct of
// two functions rather than a generic type with methods, so that each
// operator's types add two small functions to the binary, not a method set.
type operator struct {
	// execution is the typed operator inside (a pusher or a puller); impl
	// returns it for the optional interfaces some implement (keyJoin,
	// keySource).
	execution
	// chainable: the operator can follow its producer in a task.
	chainable bool
	// link returns the operator's instance in a task where it follows its
	// producer, and the collector the producer pushes into; nil for a puller.
	link func(tc *task, out any) (flow.Operator, any, error)
	// head runs the operator as the first of a task.
	head func(tc *task, out any) error
}

func (o *operator) impl() any { return o.execution }

// pushes makes p a node's operator.
func pushes[In, Out any](p pusher[In, Out]) *operator {
	instance := func(tc *task, out any) (flow.OneInput[In], error) {
		c, err := typedOut[Out](out)
		if err != nil {
			return nil, err
		}
		return p.open(tc, c)
	}
	return &operator{
		execution: p,
		chainable: true,
		link: func(tc *task, out any) (flow.Operator, any, error) {
			op, err := instance(tc, out)
			if err != nil {
				return nil, nil, err
			}
			return op, flow.Feed(op), nil
		},
		head: func(tc *task, out any) error {
			op, err := instance(tc, out)
			if err != nil {
				return err
			}
			return flow.Drive(tc.TaskContext, 0, op)
		},
	}
}

// pulls makes p a node's operator.
func pulls[Out any](p puller[Out]) *operator {
	return &operator{
		execution: p,
		head: func(tc *task, out any) error {
			c, err := typedOut[Out](out)
			if err != nil {
				return err
			}
			return flow.RunDriver(tc.TaskContext, &driver{run: func() error { return p.run(tc, c) }})
		},
	}
}

// driver is a puller's instance in a task; what it holds it registers with
// the task's lifecycle (OnExit, Keep).
type driver struct {
	flow.Idle
	run func() error
}

func (d *driver) Run() error { return d.run() }

// typedOut asserts the collector of an operator's output, once per task: a
// sink's is nil.
func typedOut[T any](x any) (collector[T], error) {
	if x == nil {
		return nil, nil
	}
	c, ok := x.(collector[T])
	if !ok {
		return nil, fmt.Errorf("internal error: output collector is %T", x)
	}
	return c, nil
}
