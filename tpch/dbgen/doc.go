// Package dbgen generates the TPC-H tables row for row as TPC's dbgen does,
// in the variant DuckDB embeds (CALL dbgen(sf=...)), and writes them as
// Parquet files with DuckDB's column types.
//
// # Model
//
// Every column (or group of columns) draws from its own random number stream,
// a Park–Miller generator (x' = 16807·x mod 2³¹−1) with a fixed starting
// seed (rng.go). Each stream has a boundary, the number of draws one row of
// its table may make; after each row the stream is advanced to that boundary
// whatever the row used. So row i of a table starts from the seeds advanced
// by i·boundary draws, which a generator computes in O(log i) (skip): any
// range of rows can be generated on its own, and a parallel run writes
// exactly what a sequential one writes.
//
// Values follow dbgen's build.c: keys from row numbers (o_orderkey sparse:
// 8 of every 32 keys), o_custkey skipping every third customer, one to seven
// lineitems per order whose dates follow o_orderdate and whose prices make
// o_totalprice and o_orderstatus, l_suppkey and ps_suppkey from the part key
// (partSupp), p_retailprice from the part key, part names from five of 92
// permuted colors, phone numbers from the nation, addresses from random
// alphanumerics, and comments as slices of a fixed text pool generated once
// from the grammar of dists.dss (text.go). The distributions (word lists with
// weights, nations, regions, types, containers, ...) are TPC-H specification
// data, embedded in dists.go.
//
// Scale factors follow dbgen's driver: below 1, the key arithmetic is that of
// scale 1 and every table's base row count is multiplied by int(1000·sf)/1000
// (SF 0.01: 1,500 customers, 15,000 orders); from 1 on, sf is truncated to an
// integer. Scale factors of 30000 and more (where dbgen switches two streams
// to a 64-bit generator) are refused.
//
// # API
//
// Generate writes <Dir>/<table>.parquet for the tables asked for. Customers,
// Suppliers, Parts (with their partsupp rows) and Orders (with their
// lineitems) are iterators over any range of rows; Nations and Regions return
// their rows.
//
// # Contracts
//
//   - The files equal DuckDB's row for row and value for value (tests compare
//     SF 0.01 and SF 0.1 with files DuckDB 1.5.6 wrote). Columns have DuckDB's
//     physical and logical types (INT64 keys, INT32 nation and region keys,
//     p_size and o_shippriority, DECIMAL(15,2) as INT64, DATE as INT32,
//     strings as UTF-8 BYTE_ARRAY) but are REQUIRED where DuckDB's are
//     OPTIONAL: no value is ever null. Files are Snappy-compressed with
//     RowGroupRows rows per row group.
//   - Generate is atomic: each file is written under a temporary name in Dir,
//     and only when every table is complete are they renamed; an error or a
//     cancelled context leaves no file behind.
//   - Memory is bounded: Options.Parallelism goroutines generate blocks of a
//     few thousand rows, at most 2·Parallelism+1 blocks exist at once, and
//     one goroutine per table writes them in order. The text pool (10 MiB) is
//     built once per process and shared.
//   - Rows yielded by the iterators are valid until the next iteration; their
//     strings stay valid (they point into the text pool, constant tables or
//     per-generator arenas that are never reused).
//
// Attribution: the algorithms, seeds and distributions are those of the
// TPC-H specification and its reference data generator dbgen, copyright the
// Transaction Processing Performance Council, as shipped by TPC and embedded
// in DuckDB's tpch extension. This package is an independent Go
// implementation of that generator.
package dbgen
