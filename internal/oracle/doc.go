// Package oracle computes the answers of weir's iteration jobs the naive way,
// in memory and single-threaded, so that tests can check the jobs against an
// independent implementation: PageRank by power iteration, connected
// components by union-find, single-source shortest paths by Dijkstra,
// transitive closure by repeated joins until nothing changes, k-means by
// Lloyd's algorithm and least squares by the normal equations; a line
// sort (SortLines) with its nastiest inputs (NastyLines) for `weir sort`;
// and the reading and comparing of reference answer files (ReadAnswer,
// CompareAnswer: DuckDB's TPC-H answers).
//
// The oracles favour being obviously right over being fast; they are meant
// for graphs and point sets of up to some hundred thousand records. Where
// Flink's example of the same algorithm fixes a semantic detail (dangling
// pages, empty clusters, ties), the function's comment says what it does.
//
// The oracles are for tests: input that breaks a precondition (an edge
// endpoint out of range, a negative weight, a singular system) panics with a
// message starting "oracle: ".
package oracle
