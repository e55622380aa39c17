package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/spill"
)

// This file names the types of other weir packages that Options and Result
// hand to a program, so that a program imports only dataset and formats. They
// are aliases: a dataset.Plan is an optimizer.Plan, so the packages that
// define them stay the single place their fields and methods are documented.

// Plan is a planned program: its operators (Nodes) with their annotations,
// estimates and the planner's decisions, and, in Result.Plan, what each
// operator did (Node.Actual). Text, JSON and DOT render it as EXPLAIN does. A
// program that inspects the nodes themselves reads the optimizer package's
// documentation of Node, Decision and Actual.
type Plan = optimizer.Plan

// Planner chooses the strategies of a Plan's operators.
type Planner = optimizer.Planner

// The planners: CostBased (the default) weighs network, disk and CPU costs
// from estimates; Simple applies fixed rules.
type (
	CostBased = optimizer.CostBased
	Simple    = optimizer.Simple
)

// Progress is a running job's state, as Options.Progress receives it: per
// task, its subtasks and the records read and sent so far.
type Progress = flow.Progress

// Metrics are what the runtime measured per task (a chain of operators) and
// subtask, and the job's peak managed memory.
type Metrics = flow.Result

// SpillOptions sets the spill files' block size and compression.
type SpillOptions = spill.Options

// SpillCodec is a spill file's compression, as SpillOptions.Codec takes it.
type SpillCodec = spill.Codec

// The spill codecs: SpillDefault is the spill package's choice.
const (
	SpillDefault = spill.DefaultCodec
	SpillNone    = spill.None
	SpillS2      = spill.S2
	SpillZstd    = spill.Zstd
)

// SpillFS is the file system spill files go to (Options.SpillFS): the spill
// package's DiskFS, MemFS or, in tests, a FaultFS that fails chosen
// operations.
type SpillFS = spill.FS

// ExecutionMode sets the exchange modes of a whole job (Options.Mode), as
// Flink's ExecutionMode does.
type ExecutionMode = optimizer.ExecutionMode

// The execution modes: PipelinedExecution (the default) keeps the planner's
// exchanges; PipelinedForced pipelines every exchange that may be;
// BatchExecution blocks every shuffle; BatchForced blocks every exchange.
const (
	PipelinedExecution = optimizer.PipelinedExecution
	PipelinedForced    = optimizer.PipelinedForced
	BatchExecution     = optimizer.BatchExecution
	BatchForced        = optimizer.BatchForced
)
