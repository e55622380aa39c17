// Package dataset is weir's typed DataSet API: programs over data sets of Go
// values, written with generics and run in-process on all cores within a memory
// budget.
//
// # Model
//
// An Env collects a program: sources (FromSlice, FromSource) produce a
// *DataSet[T]; transformations (Map, FlatMap, Filter, GroupBy(...).Reduce, Join,
// ...) produce new data sets; sinks (Collect, Count) end them. Nothing runs until
// Env.Execute, which plans the program (an optimizer.Planner chooses ship and
// local strategies, honouring hints), translates it into a flow graph and runs
// it.
//
// Type-changing transforms are package functions (Go methods cannot have type
// parameters); type-preserving ones are methods. Errors found while building a
// program (a key type that cannot be a key, a record type the serializer does
// not support) are kept with the caller's file and line and returned by Execute:
// the API does not panic at its users. A panic inside a user function becomes
// Execute's error, naming the operator and subtask.
//
// # Execution
//
// Record-at-a-time operators (Map, FlatMap, Filter) whose input is forwarded run
// chained inside their producer's task: batches pass from function to function
// with no exchange and no copy. A Reduce runs a combiner on the producer side of
// its shuffle, then a hash aggregation (sortjoin.HashAggregator) per subtask;
// joins run the sortjoin hybrid hash join or sort-merge join. Keys are the
// results of typed key selectors, encoded once per record with memory.ValueKey;
// records cross spilling operators serialized with memory.Codec. Self is the
// whole-record key (Flink's "*"): sorting strings or byte slices ascending by
// Self stores each record once, as its own key.
//
// Every subtask of an operator that holds managed memory (a sort, a hash table,
// a combiner) gets an even share of Options.Memory and spills beyond it.
//
// Output chains into its producer's task when it can. Its writers close their
// temporary files when their input ends; Execute commits (renames) them only
// after the whole job succeeded, and aborts them otherwise, so a failed job
// leaves no output.
package dataset
