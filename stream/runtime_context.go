package stream

import (
	"errors"
	"fmt"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/state"
)

// RuntimeContext is Flink's RuntimeContext: what a user function knows of
// the parallel instance it runs in (its task and operator, its subtask's
// index among the operator's parallel subtasks, the attempt) and its
// metric group. Every function with an Open gets its RuntimeContext
// there (ProcessFunction, CoProcessFunction, BroadcastProcessFunction,
// RichMapFunction ...; the keyed functions a KeyedRuntimeContext), and
// each Context returns it (Context.RuntimeContext). A RuntimeContext
// belongs to one subtask of one attempt: a restarted job makes new ones.
type RuntimeContext struct {
	job, task, operator  string
	subtask, parallelism int
	maxParallelism       int
	attempt              int
	group                *metrics.Group
}

// newRuntimeContext returns the runtime context of the operator b builds.
func newRuntimeContext(b *graph.Build) *RuntimeContext {
	rc := &RuntimeContext{}
	rc.init(b)
	return rc
}

func (rc *RuntimeContext) init(b *graph.Build) {
	cfg := b.Config()
	*rc = RuntimeContext{job: cfg.Job, task: cfg.Name, operator: b.Node.Name, subtask: b.Subtask(),
		parallelism: b.Parallelism(), maxParallelism: b.OperatorMaxParallelism, attempt: max(cfg.Attempt-1, 0),
		group: b.Metrics}
	if rc.group == nil {
		rc.group = metrics.NewGroup(b.Clock(), rc.operator, fmt.Sprint(rc.subtask))
	}
}

// JobID returns the job's id (Job.ID).
func (rc *RuntimeContext) JobID() string { return rc.job }

// TaskName returns the name of the task the function runs in: the name
// of the first operator of its chain (Flink's getTaskName).
func (rc *RuntimeContext) TaskName() string { return rc.task }

// TaskNameWithSubtasks returns the task's name with the subtask's number
// from 1, the parallelism and the attempt number, as Flink writes it:
// "Map (2/3)#0".
func (rc *RuntimeContext) TaskNameWithSubtasks() string {
	return fmt.Sprintf("%s (%d/%d)#%d", rc.task, rc.subtask+1, rc.parallelism, rc.attempt)
}

// OperatorName returns the name of the function's operator (its
// DataStream's Name), the first part of its metrics' scope.
func (rc *RuntimeContext) OperatorName() string { return rc.operator }

// IndexOfThisSubtask returns the subtask's index, from 0 to
// NumberOfParallelSubtasks()-1.
func (rc *RuntimeContext) IndexOfThisSubtask() int { return rc.subtask }

// NumberOfParallelSubtasks returns the operator's parallelism.
func (rc *RuntimeContext) NumberOfParallelSubtasks() int { return rc.parallelism }

// MaxNumberOfParallelSubtasks returns the operator's max parallelism: its
// key groups for a keyed operator, else Options.MaxParallelism or Flink's
// default for its parallelism (at least 128).
func (rc *RuntimeContext) MaxNumberOfParallelSubtasks() int { return rc.maxParallelism }

// AttemptNumber returns how many times the job restarted before the
// attempt the function runs in: 0 for the first (Flink's
// getAttemptNumber).
func (rc *RuntimeContext) AttemptNumber() int { return rc.attempt }

// MetricGroup returns the operator's metric group in this subtask, scoped
// <operator>.<subtask> (Flink's getMetricGroup): register counters,
// gauges, histograms and meters there, in Open, and update them from the
// function's calls (its subtask's goroutine; an update costs a few
// nanoseconds and allocates nothing). The runtime publishes them after
// each batch; Job.Metrics shows them per subtask
// (VertexMetrics.Subtasks[i].Metrics). They start at zero in every
// attempt.
func (rc *RuntimeContext) MetricGroup() *metrics.Group { return rc.group }

// KeyedRuntimeContext is the RuntimeContext of a keyed function
// (KeyedProcessFunction, KeyedCoProcessFunction,
// KeyedBroadcastProcessFunction, ProcessWindowFunction,
// ProcessJoinFunction): it adds the keyed state of the operator, by
// descriptor, as Flink's getState and its siblings (GetState,
// GetListState, GetMapState, GetReducingState, GetAggregatingState).
type KeyedRuntimeContext[K comparable] struct {
	RuntimeContext
	backend **state.Backend[K] // the operator's, set before Open
}

// newKeyedRuntimeContext returns the keyed runtime context of the operator
// b builds, whose backend *backend is once it opened.
func newKeyedRuntimeContext[K comparable](b *graph.Build, backend **state.Backend[K]) *KeyedRuntimeContext[K] {
	rc := &KeyedRuntimeContext[K]{backend: backend}
	rc.init(b)
	return rc
}

// errNoBackend is the error of keyed state asked for before the operator
// opened its backend.
var errNoBackend = errors.New("stream: keyed state is there from the function's Open on")

// Backend returns the operator's keyed state backend (nil before Open):
// for state in a namespace of the function's own, such as a window's
// (state.NewValue[K, W, V]); GetState and its siblings cover the rest.
func (rc *KeyedRuntimeContext[K]) Backend() *state.Backend[K] { return *rc.backend }

func (rc *KeyedRuntimeContext[K]) stateBackend() (*state.Backend[K], error) {
	if b := *rc.backend; b != nil {
		return b, nil
	}
	return nil, errNoBackend
}

// GetState returns the value state of d for the current key (Flink's
// RuntimeContext.getState): call it in Open and keep the handle, which
// reads and writes the value of whatever key is current.
func GetState[K comparable, V any](rc *KeyedRuntimeContext[K], d state.ValueDescriptor[V]) (state.ValueState[V], error) {
	b, err := rc.stateBackend()
	if err != nil {
		return nil, err
	}
	s, err := state.GetValueState(b, d)
	if err != nil {
		return nil, fmt.Errorf("stream: GetState: %w", err)
	}
	return s, nil
}

// GetListState returns the list state of d (Flink's getListState), as
// GetState.
func GetListState[K comparable, V any](rc *KeyedRuntimeContext[K], d state.ListDescriptor[V]) (state.ListState[V], error) {
	b, err := rc.stateBackend()
	if err != nil {
		return nil, err
	}
	s, err := state.GetListState(b, d)
	if err != nil {
		return nil, fmt.Errorf("stream: GetListState: %w", err)
	}
	return s, nil
}

// GetMapState returns the map state of d (Flink's getMapState), as
// GetState.
func GetMapState[K, UK comparable, UV any](rc *KeyedRuntimeContext[K], d state.MapDescriptor[UK, UV]) (state.MapState[UK, UV], error) {
	b, err := rc.stateBackend()
	if err != nil {
		return nil, err
	}
	s, err := state.GetMapState(b, d)
	if err != nil {
		return nil, fmt.Errorf("stream: GetMapState: %w", err)
	}
	return s, nil
}

// GetReducingState returns the reducing state of d (Flink's
// getReducingState), as GetState.
func GetReducingState[K comparable, V any](rc *KeyedRuntimeContext[K], d state.ReducingDescriptor[V]) (state.ReducingState[V], error) {
	b, err := rc.stateBackend()
	if err != nil {
		return nil, err
	}
	s, err := state.GetReducingState(b, d)
	if err != nil {
		return nil, fmt.Errorf("stream: GetReducingState: %w", err)
	}
	return s, nil
}

// GetAggregatingState returns the aggregating state of d (Flink's
// getAggregatingState), as GetState.
func GetAggregatingState[K comparable, IN, ACC, OUT any](rc *KeyedRuntimeContext[K], d state.AggregatingDescriptor[IN, ACC, OUT]) (state.AggregatingState[IN, OUT], error) {
	b, err := rc.stateBackend()
	if err != nil {
		return nil, err
	}
	s, err := state.GetAggregatingState(b, d)
	if err != nil {
		return nil, fmt.Errorf("stream: GetAggregatingState: %w", err)
	}
	return s, nil
}
