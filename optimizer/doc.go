// Package optimizer turns a DataSet program's logical plan into physical
// decisions: for every operator, how each input is shipped (forward, hash,
// range, broadcast, rebalance), how it is exchanged (pipelined or blocking) and
// which local strategy runs it (hybrid hash join with a build side, sort-merge
// join, hash or sort-based grouping, with or without a combiner).
//
// The optimizer never imports the runtime: it reasons over the model in plan.go
// (operators, the keys they require of their inputs, hints and size estimates)
// and writes its choices into each Node's Decision. The dataset package builds
// the model from a program and translates the decisions into a flow graph.
//
// Planners implement Planner. Simple, the planner of this release, applies fixed
// rules and honours every hint; the cost-based planner with interesting-property
// propagation replaces it behind the same interface.
package optimizer
