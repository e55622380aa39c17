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
//   - PageRank, ConnectedComponents and ShortestPaths also have a formulation
//     on the graph package's iterations over adjacency arrays
//     (PageRankGraph and ConnectedComponentsGraph: scatter-gather;
//     ShortestPathsGraph: vertex-centric), with the same
//     results (their oracles check both) and a *graph.Stats for the
//     iteration's figures. Their one difference: edges whose ends are not
//     both vertices are left out (PageRank's links to ids that are no pages
//     give those ids a rank). RunPageRank runs PageRankGraph,
//     RunConnectedComponents ConnectedComponentsGraph and RunShortestPaths
//     ShortestPathsGraph; their output is declared sorted by vertex, so the
//     final sort passes it through.
//   - Output goes to Options.Output or to Options.Stdout. A file is written
//     under a temporary name and renamed on success; nothing is left on error.
//     A file whose name ends in ".parquet" (in any case) gets Parquet through
//     the formats/parquet sink, the same rows in the same order as the text
//     lines with typed, named columns: pagerank id INT64, rank DOUBLE;
//     connected components vertex, component INT64; sssp vertex INT64,
//     distance DOUBLE; k-means cluster INT64, x1 .. xd DOUBLE (d at most 8,
//     taken from the first initial centroid before the job starts); linear
//     regression one row per coefficient, name STRING ("b", "w1", ..) and
//     value DOUBLE; transitive closure src, dst INT64. Any other name gets the
//     text lines (formats/text).
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
