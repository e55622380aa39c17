// Package optimizer turns a DataSet program's logical plan into physical
// decisions: for every operator, how each input is shipped (forward, hash,
// range, broadcast, rebalance), how it is exchanged (pipelined or blocking) and
// which local strategy runs it (hybrid hash join with a build side, sort-merge
// join, hash or sort-based grouping, with or without a combiner).
//
// The optimizer never imports the runtime: it reasons over the model in plan.go
// (operators, the keys they require of their inputs, hints, size estimates and
// each operator's part in an iteration) and writes its choices into each Node's
// Decision. The dataset package builds the model from a program, as a copy it
// hands to Optimize, and translates the decisions into a flow graph; nothing
// edits a decision after Optimize, so the plan is exactly what runs.
//
// Optimize runs a Planner, which chooses every operator's strategies, then the
// rules of rules.go in their fixed order, one rule per file: a step's join
// builds on the input it keeps (loopbuild.go), a replayed input is shipped in
// front of its replayer (shipbeforereplay.go), the job's ExecutionMode is
// applied (executionmode.go), exchanges from several subtasks block into an ordered gather
// (orderedgather.go) and where branches rejoin (rejoins.go), exchanges are
// pipelined inside iterations and blocking from an iteration's feeders to
// what reads them after it (loopexchanges.go), every operator gets its share
// of the memory budget (memoryshare.go: the share the cost model weighed), and
// a last rule checks the plan without changing it (check.go). The exchange
// rules that correctness needs run after the mode, so no mode undoes them.
//
// Planners implement Planner. CostBased, the default, is Flink's optimizer with
// statistics: it estimates every operator's output, enumerates strategies
// bottom-up against each input's candidate sub-plans, keeps the cheapest
// sub-plan per interesting property (a partitioning or order a consumer can
// reuse), compares costs by network, then disk, then CPU bytes and work, and
// honours every hint exactly (see costbased.go). Simple applies fixed rules.
//
// Iterations: dataset marks the operators of an iteration with its number and
// their role (Node.Loop, Node.LoopRole: head, replayer, step operator, tail),
// the number of supersteps to expect (Node.Iterations: the maximum, or at most
// DefaultIterations when the loop may end earlier) and their loop-invariant
// inputs (Node.Static). CostBased multiplies the work done every superstep
// and counts the work on static inputs once (shipping them; a join's build on
// the static side it keeps as a hash index across supersteps, the only side
// such a join builds on), so that a step prefers to ship its static inputs
// once and its dynamic ones cheaply; the notes say so ("static input 1
// cached: shipped and built once, probed ×20 supersteps", "×20 supersteps:
// ... per superstep, ... once"). An iteration's result, a source with SizeOf,
// is estimated as its partial solution or solution set.
//
// Keys and properties are in terms of logical field names the program declares
// (Node.Keys, Node.Forwards): a property survives an operator only through the
// fields it forwards, or all of them when it passes its records through
// (Node.PreservesAll). A partitioning on a subset of a grouping's fields
// satisfies the grouping; a join's inputs must be hashed by the same fields and
// key type to be co-partitioned.
//
// Plans print as an indented text tree (Text, what Explain returns), JSON and
// Graphviz DOT (explain.go), with estimates, costs and notes, and with what each
// operator did when Node.Actual is filled in after a run (EXPLAIN ANALYZE).
package optimizer
