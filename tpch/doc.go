// Package tpch holds the 22 TPC-H queries written as weir DataSet programs, over the eight TPC-H tables stored as Parquet files
// (<dir>/lineitem.parquet, <dir>/orders.parquet, ...).
//
// # Model
//
// Each query is a function Qn(env, dir) that adds its program to a
// *dataset.Env and returns a *Rows[QnRow]: the typed result rows, filled in
// when env.Execute succeeds, in the query's ORDER BY order. The programs are
// written as a Flink DataSet program would be:
//
//   - a scan per table reads only the columns its projection struct names
//     (the weir tags are the TPC-H column names), and the SQL's range,
//     equality and IN predicates on base columns are pushed into the scan
//     with parquet.Where, so row groups and rows are dropped while decoding;
//   - joins are dataset.Join with a hint where the choice is obvious: the
//     small nation and region tables (and the filtered supplier and part
//     tables) are broadcast to the big side;
//   - GROUP BY is GroupBy(...).Reduce over an accumulator struct, a global
//     aggregate is dataset.AggregateAll;
//   - ORDER BY is dataset.Sort (a total sort) and ORDER BY ... LIMIT is Sort
//     followed by First;
//   - every join and grouping names its key with On, by the TPC-H column
//     without its table prefix where the column joins tables ("orderkey",
//     "custkey", "suppkey", "nationkey", "partkey", "regionkey"), and joins
//     declare with Forwards the key fields their function copies into its
//     result, so the optimizer sees, for example, that Q3's grouping by
//     orderkey after the join on orderkey needs no second shuffle.
//
// Money is parquet.Decimal throughout, so sums are exact and print with the
// scale DuckDB prints (price × (1 − discount) has scale 4); averages and
// ratios are float64.
//
// # Registry
//
// Query(n) returns the Spec of query n: its SELECT column names and a builder
// that formats the typed rows as CSV fields. Run builds, executes and formats
// one query on an Env; the `weir tpch` command is a thin layer over it.
//
// # Contracts
//
// A Qn function only adds operators to env; nothing runs until env.Execute.
// An Env runs one program: call Run (or one Qn) per fresh Env. Errors opening
// a table name its file; errors of the run are Execute's, wrapped with
// "tpch: qN".
package tpch
