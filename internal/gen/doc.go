// Package gen generates the inputs of weir's iteration jobs and benchmarks:
// R-MAT graphs as Graph500 makes them, grid graphs, points around centres for
// k-means and samples of a known linear model for regression, and writes them
// as text or Parquet files.
//
// # Model
//
// Generators are deterministic: the same arguments and seed give the same
// output on every machine. They stream: Graph, Grid, Points and Regression
// return iterators, so a graph of 2^24 edges or millions of points is written
// without being held in memory. Each iterator can be ranged over more than
// once and gives the same sequence each time.
//
// # Files
//
// Text files hold one record a line: an edge as "src dst", a vertex as "id",
// a point as its coordinates separated by single spaces (shortest decimal
// that reads back to the same float64). Parquet files are written with
// parquet-go, Zstd-compressed: edges as required INT64 columns src and dst,
// vertices as a required INT64 column id; weir's formats/parquet reads them
// into struct{ Src, Dst int64 } and struct{ ID int64 }. Every file is written
// under a temporary name beside its final path and renamed when complete
// (formats.TempFile), so a failed write leaves nothing behind.
package gen
