// Package dataset is weir's typed DataSet API: programs over data sets of Go
// values, written with generics and run in-process on all cores within a memory
// budget.
//
// # Model
//
// An Env collects a program: sources (FromSlice, FromSource) produce a
// *DataSet[T]; transformations (Map, FlatMap, Filter, GroupBy(...).Reduce, Join,
// ...) produce new data sets; sinks (Collect, Count) end them. Nothing runs until
// Env.Execute, which plans the program (a Planner chooses ship and
// local strategies, honouring hints), translates it into a flow graph and runs
// it.
//
// Fold groups by key and folds each group in place (fold(acc *A, v T)),
// calling the user's functions on the input records themselves: cheaper than
// a Map to the accumulator type and a Reduce when the accumulator is large.
//
// Names: Count is a sink (the number of records of a data set); the aggregate
// functions that Aggregate and AggregateAll compute per group live in package
// agg (agg.Count, agg.Sum, ..., of type agg.Func); the values an iteration's
// step combines across subtasks per superstep are loop aggregators (LoopCount,
// LoopSum, ..., of type LoopAggregator).
//
// Type-changing transforms are package functions (Go methods cannot have type
// parameters); type-preserving ones are methods. Errors found while building a
// program (a key type that cannot be a key, a record type the serializer does
// not support) are kept with the caller's file and line and returned by Execute:
// the API does not panic at its users. A panic inside a user function becomes
// Execute's error, naming the operator and subtask.
//
// # Annotations and estimates
//
// Keys are functions, opaque to the optimizer; annotations tell it what they
// mean. On names the logical fields of an operator's key ("orderkey"; both
// inputs of a join share the names), Grouping.On names a grouping's key
// before its reduction, and Forwards declares the fields an operator copies
// from its input to its output unchanged ("f", or "f->g" to rename), as
// Flink's withForwardedFields does: with them a planner can see that data
// partitioned on orderkey by a join is still partitioned on orderkey for the
// grouping after it. SortedOn declares that each subtask of an operator
// emits its records sorted on named fields (Flink's splitsOrderedBy): a Sort
// or SortPartition on those fields whose input arrives forwarded then passes
// it through, checking the order, instead of sorting it (a Sort of the whole
// data set only at parallelism 1, where one subtask holds every key). weir
// cannot check the annotations against the functions: a wrong one gives wrong
// results (a wrong SortedOn fails the sort that relies on it). Some facts need no annotation: Filter,
// sorts, the key partitioners, First, Distinct and GroupFirst emit their input
// records unchanged; Reduce (whose function keeps the key), Aggregate and
// Distinct forward their named key fields; every keyed input carries its key's
// Go type, so equal keys of equal type are known to hash alike.
//
// KeyColumns declares, on a join, the Parquet column each input's integer key
// is read from. It is a promise like Forwards (a wrong one gives wrong
// results), and it lets a hash join filter its probe side's scan by its
// build side's keys at run time (see KeyColumns).
//
// Sizes: FromSlice's estimate is its length, FromSource's the source's
// statistics (rows and stored bytes); WithEstimate declares an operator's
// output rows and WithSelectivity its output rows per input row. Every
// operator's record size is estimated from its type, once (the static size,
// plus 16 bytes for each string, slice, map, pointer or interface).
//
// Env.Plan returns the planned program, a Plan, without running anything (the
// iterations' fix-ups included: their edges pipelined, blocking edges from
// what feeds a loop to what reads it after); Options.Planned gets the same
// plan from inside Execute and may stop it there, for callers that do not
// hold the Env (weir explain <job>). Execute returns the same plan in
// Result.Plan with what each operator did (records emitted, and its task's
// busy time, peak memory and spilled bytes) in its nodes' Actual; its Text
// method prints it as EXPLAIN ANALYZE does. Errors in annotations (On where there is no
// key, Forwards or WithSelectivity on a source) name the caller, like the
// API's other build errors.
//
// # Execution
//
// Every operator is a typed struct of flow's operator contract: a pusher (Map,
// FlatMap, Filter, their Err forms, First, Output) is a flow.OneInput in its
// task; a puller (sources, sorts, joins, groupings) a flow.Driver. Pushers whose
// input is forwarded run chained inside their producer's task: batches pass
// from function to function with no exchange and no copy. A Reduce runs a combiner on the producer side of
// its shuffle, then a hash aggregation (sortjoin.HashAggregator) per subtask, or,
// when its input arrives sorted on the key, a sorted grouping that folds each
// group as it streams by. A ReduceGroup sorts its subtask's records by key
// (sortjoin.Sorter), or, for flat records of one dense 8-byte key and no
// SortGroup, groups them in memory by a counting sort, handing them to the
// sorter when the keys are sparse or the budget refuses;
// joins run the sortjoin hybrid hash join or sort-merge join. Keys are the
// results of typed key selectors, encoded once per record with memory.ValueKey;
// records cross spilling operators serialized with memory.Codec. Self[T]() is
// the whole-record key (Flink's "*"): sorting strings or byte slices ascending
// by it stores each record once, as its own key (the sort's variant
// "self-key").
//
// Every subtask of an operator that holds managed memory (a sort, a hash table,
// a combiner) gets an even share of Options.Memory and spills beyond it.
// Options.Memory defaults to memory.DefaultBudget; while a job runs the Go
// runtime's soft memory limit follows its budget (memory.LimitRuntime), and the
// spill files' blocks are sized for it (spill.Options.ForBudget).
//
// # Adaptive execution
//
// With Options.Adaptive, Execute plans the program, then runs it in two
// stages. Stage 1 runs the operators that feed an input of a join, cogroup or
// cross whose strategy the planner chose freely (no hint, no forced ship on
// that input, not a source: its size is known or declared), with everything
// they depend on; each such operator's subtask i writes its records,
// serialized with memory.Codec, to its own file under Options.TmpDir (or in
// Options.SpillFS). Stage 2
// plans the rest of the program again, reading those files through sources
// whose estimates are the real counts and whose subtask i replays file i, and
// runs it: a repartition join whose filtered input turned out tiny becomes a
// broadcast join. The planner counts a replayed input as unpartitioned, so an
// input whose partitioning a later operator reuses is not measured; nor is one
// whose ancestors also feed operators after the boundary, nor one whose type
// has no codec (the plan's notes say why). Result.Plan holds stage 1 as
// first planned and stage 2 as planned again, with notes giving the measured
// sizes, and Actual.Replanned on the operators whose ship or local strategies
// changed. Sinks commit only after stage 2 succeeded; the stored files are
// removed on every path.
//
// # Spread over processes
//
// With Options.Spread, each of several processes runs a share of the same
// program: every process plans the same plan and runs the subtasks of its
// slots (subtask i of every operator in the process holding slot i modulo
// the slots of all), the channels between processes going over the
// Spread's Transport (flow.Remote). Collect and Count gather the whole
// result into every process, so the program that reads them goes on the
// same way in each. Sources take their splits by subtask instead of from a
// shared counter; an iteration's superstep barrier meets across the
// processes, part 0 deciding for all; Options.Adaptive is refused; each
// process commits the outputs of its own subtasks. See Spread.
//
// # Iterations
//
// Iterate (bulk) and IterateDelta run loops inside the dataflow, as Flink does,
// not as one job per superstep. The step function builds its operators once;
// they run in long-lived tasks, once per superstep:
//
//   - The head (the step's input) emits the partial solution or workset, then an
//     end-of-superstep event on each output; loop-invariant inputs the step
//     reads (data sets built outside it) are read once and replayed each
//     superstep (shipped once: an exchange between a replayer and its consumer
//     moves in front of the replayer), kept as Go values while they fit the
//     budget (typed.Cache; serialized and spilling when not): the step's
//     functions must not modify what their strings and slices point to,
//     which every superstep shares; except the invariant side of a join,
//     which is read once and kept as a typed hash table (or, when it does not
//     fit, a sortjoin.Index) that every superstep probes, and the input of a
//     FoldWithBroadcast, which keeps its typed.Cache itself and folds it
//     every superstep with no replayer in between.
//   - What an operator holds for a superstep is released when the superstep
//     ends; a Reduce's combiner and final tables are kept by the task, reset,
//     for the next superstep.
//   - Inside the step every edge is pipelined; a reader in superstep mode
//     (flow.Reader.Supersteps) ends each superstep at the aligned event, so an
//     operator that reads "until EOF" runs one superstep and is run again for
//     the next. Its outputs then send the event on.
//   - The tails store the next partial solution, workset or delta per subtask
//     (spools: serialized in managed memory, spilling), and every subtask of the
//     loop meets at a barrier. The last to arrive swaps the partial solutions,
//     merges the delta into the solution set, rolls the aggregators, records
//     the superstep's statistics (Result.Iterations) and decides: the maximum
//     number of supersteps, an empty workset, an empty termination criterion
//     (TerminateWhenEmpty) or a convergence criterion (ConvergeWhen) end the loop.
//   - The solution set of a delta iteration is one sortjoin.Index per subtask,
//     hash-partitioned by key like the workset that probes it (JoinSolution), and
//     spills buckets to disk when it outgrows the budget.
//   - The loop's result is a source that emits the last partial solution (or the
//     solution set) once the loop ended.
//
// Planning: the planner sees the step's operators (with the head, the
// replayers and the tails) as running once per superstep,
// optimizer.Node.Iterations times: the maximum number of supersteps, or at
// most optimizer.DefaultIterations for delta iterations and iterations with
// a termination or convergence criterion, which may end earlier. Inputs from
// outside the loop that reach an operator only in the first superstep (the
// initial partial solution or workset, a replayer's input, the invariant side
// of a join kept as an index) are marked optimizer.Node.Static: shipping them
// is paid once, and a join builds on its invariant side, once. So a step's
// join ships a small dynamic input to the invariant side's partitions (or
// broadcasts it) rather than re-shipping the invariant side every superstep;
// its notes in EXPLAIN say what is paid once and what per superstep. The
// loop's result is estimated as large as the initial partial solution (bulk)
// or the solution set's input (delta).
//
// Branches of a step that part at the head or a replayed input and meet again
// are fine (those emit to each output on its own); branches that part at an
// operator inside the step and meet again are refused, since a pipelined
// exchange could deadlock there. Sinks belong after the iteration.
//
// Output chains into its producer's task when it can. Its writers close their
// temporary files when their input ends; Execute commits (renames) them only
// after the whole job succeeded, and aborts them otherwise, so a failed job
// leaves no output.
package dataset
