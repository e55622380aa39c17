// Package iterate holds weir's iteration jobs as DataSet programs on the bulk
// and delta iterations of package dataset (Flink's iterate and iterateDelta):
// PageRank, connected components, single-source shortest paths, k-means,
// linear regression by batch gradient descent and transitive closure, each with
// built-in default data. `weir run` runs them.
//
// # Contracts
//
//   - Each job has a program function (PageRank, ConnectedComponents,
//     ShortestPaths, KMeans, LinearRegression, TransitiveClosure) that builds
//     the iteration on given data sets and returns its unsorted result, for
//     tests and other programs; and a Run function (RunPageRank, ...) that
//     builds the program on a fresh dataset.Env from Options, reads its inputs
//     (files, or the default data when a path is ""), runs it and writes the
//     result lines sorted, so that output is deterministic at any parallelism
//     and memory budget.
//   - Output goes to Options.Output through the formats/text sink (a temporary
//     file renamed on success, nothing left on error) or to Options.Stdout.
//     Output is always text, whatever the file name.
//   - Text inputs are read one file per split so that a malformed line fails
//     the run with a *ParseError naming the file and the 1-based line. Graph
//     inputs whose name ends in ".parquet" are read with formats/parquet
//     instead: vertices from an INT64 column id, edges from INT64 columns src
//     and dst (as internal/gen writes them).
//   - Loop-invariant inputs (the links, the edges, the points, the samples) are
//     read once; the iterations keep them as join indexes or replay them every
//     superstep (see dataset.Iterate).
//   - User functions run concurrently on every subtask and keep no shared
//     mutable state; a broken precondition inside one (a point whose number of
//     coordinates differs from the centroids') panics, which Execute turns into
//     an error naming the operator.
package iterate
