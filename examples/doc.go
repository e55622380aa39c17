// Package examples holds Flink's batch examples (flink-examples-batch, package
// org.apache.flink.examples.java) as weir DataSet programs, with Flink's default
// data built in: WordCount, WebLogAnalysis and EnumTriangles (the optimized
// variant, which builds triads on the vertex of smaller degree). `weir run`
// runs them.
//
// # Contracts
//
//   - Each example has a Run function (RunWordCount, RunWebLog, RunTriangles)
//     that builds the program on a fresh dataset.Env from Options, runs it and
//     writes its result lines sorted, so that output is deterministic at any
//     parallelism and memory budget; and a Program function that builds the
//     unsorted query on given data sets, for tests and other programs.
//   - Output goes to Options.Output through the formats/text sink (a temporary
//     file renamed on success, nothing left on error) or to Options.Stdout.
//   - Inputs with fields (weblog's relations, triangle edges) are read one file
//     per split so that a malformed line fails the run with a *ParseError naming
//     the file and the 1-based line; the rest of the program runs at full
//     parallelism. WordCount's text input is read in byte-range splits.
//   - User functions run concurrently on every subtask: they keep no shared
//     mutable state except through sync.Pool.
package examples
