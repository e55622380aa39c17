// Package parquet reads Parquet files into Go structs, column by column, and
// writes structs as Parquet. It implements formats.Source and formats.Sink.
//
// # Model
//
// Open reads the footers of a file, a directory (its *.parquet files, sorted)
// or a glob, and plans the read once: the exported fields of T name the
// columns to read (formats.FieldsOf and formats.Resolve, so projection is
// whatever T names), and each field gets a conversion chosen from the column's
// physical and logical type and the field's Go type. Splits lists one split
// per row group, leaving out row groups whose min/max statistics rule out a
// declared filter. Read decodes one row group, a batch of rows at a time:
//
//	column chunk ──Pages()──▶ typed page views (Int32/Int64/Double/ByteArray,
//	                          dictionary indices gathered through the dictionary)
//	      │ definition levels → valid[]
//	      ▼
//	vector per column (int64 / float64 / byte refs) ──filters──▶ selection []int32
//	      │ each filter's column filled for the rows the filters before it kept;
//	      │ the other columns for the rows all kept, skipped when none is
//	      ▼
//	[]T: one monomorphic copy loop per field over the selected rows
//
// A column filled for selected rows looks up (dictionary) or copies (plain)
// the values of those rows only; its page is still decompressed and its
// dictionary indexes decoded whole. Pages with NULLs are filled whole, and so
// is a batch whose selection keeps all but a quarter of its rows or less
// (sequential loops beat the lookups there). A range filter on an integer
// column tests each row with one unsigned comparison and no branch.
//
// ReadMemory (formats.ReadMemorer) tells the caller what decode buffers Read
// holds for a split, per decoded column the chunk reader's buffer plus at
// most a page stored and three decoded (see maxPageBytes), so a job reserves
// them from its budget.
//
// No reflection runs per record: reflect is used by Open (to build the plan)
// and by NewSink's Create (to build the schema) only. Hot loops are generic
// functions instantiated per type; a field's loop is a function value chosen
// by Open.
//
// # Types
//
// Field type ← column type:
//
//	int8..int64, int, uint8..uint64, uint ← INT32, INT64 (signed or unsigned logical type),
//	                                         DECIMAL with scale 0, DATE (days), TIMESTAMP (units);
//	                                         range-checked: a value that does not fit is an error
//	                                         naming file, row group, row and column
//	float32, float64 ← FLOAT, DOUBLE, INT32/INT64, and DECIMAL scaled: unscaled / 10^scale,
//	                   one correctly rounded division (DECIMAL(15,2) 17.00 → 17.0)
//	Decimal          ← DECIMAL (INT32/INT64) and integers: exact, {Unscaled, Scale}
//	bool             ← BOOLEAN
//	string, []byte   ← BYTE_ARRAY (any logical type), FIXED_LEN_BYTE_ARRAY
//	time.Time        ← DATE (midnight UTC), TIMESTAMP millis/micros/nanos (UTC either way)
//	Date             ← DATE (days since 1970-01-01; String gives YYYY-MM-DD)
//	*X for any X above ← the same, nil for NULL
//
// NULL into a non-pointer field is an error naming file, row group, row and
// column, unless Open was given NullAsZero. A field type the column cannot
// convert to is an error from Open naming the file, the column and both
// types; so is a field without a column. Nested and repeated columns, INT96
// and DECIMAL stored as byte arrays are not supported (an error at Open, and
// only if T names them).
//
// Decimal keeps TPC-H money exact: Mul adds scales, Add aligns them, and the
// result prints with its scale, as DuckDB prints DECIMAL sums. See Decimal
// for its range.
//
// # Filters
//
// Where(column, op, values...) declares a filter (Eq, Lt, Le, Gt, Ge,
// Between, In). Open converts its values to the column's stored domain —
// exactly, through rationals: Between(0.05, 0.07) on DECIMAL(15,2) becomes
// unscaled 5..7 — so rows are filtered on the stored integers, floats or
// bytes without converting them. A row group whose statistics show no value
// can match (or that holds only NULLs) is not a split. NULL never matches.
// Filter columns need not be fields of T.
//
// Read runs the filters in order, each on the rows the ones before kept: a
// filter's column is decoded for those rows only, and the columns no filter
// reads only for the rows all kept. A byte-array filter on a dictionary page
// judges each dictionary value once and each row by its index.
// WhereColumns(left, op, right) compares two columns of a row (TPC-H's
// l_commitdate < l_receiptdate); it runs after the Where filters, and has no
// statistics to skip row groups with.
//
// ReadKeys (formats.KeyFilterer) is Read with one more filter, given at run
// time: a set of integer keys that an integer column's value must be in
// (NULLs pass), tested after the declared filters and before the columns
// they do not read are decoded. dataset's KeyColumns uses it for the
// runtime filters of hash joins.
//
// # Reuse and ownership
//
// Per Read (pooled across Reads of the same Source): the column vectors, the
// selection vector, the batch []T and the page cursors are reused from batch
// to batch; decoding allocates nothing per row. What a batch hands out stays
// valid after fn returns: strings point into a slab allocated per batch and
// column (or, for dictionary-encoded columns, into one copy of the
// dictionary per column chunk), []byte fields into a per-batch slab, and
// pointer fields into a per-batch array. The batch slice itself is reused.
// A small dictionary's strings (at most 256 values and 16 KiB) are interned
// across the chunks a pooled reader reads: a value it has seen before points
// at the earlier copy, so equal strings of different row groups share their
// bytes (a group key then compares by pointer) and a chunk's copy is dropped
// with its batches.
//
// # Errors and corrupt input
//
// Errors name the file and, where known, the row group, row and column.
// parquet-go v0.32.0 panics on some corrupt input (schema elements, page
// headers, statistics); Open, Read and Stats recover those panics and return
// them as errors naming the file (and row group and column where known).
// Open checks the footer length before parquet-go allocates it.
//
// # Sink
//
// NewSink writes one column per mapped field (pointer fields OPTIONAL, others
// REQUIRED) with Zstd by default, to a temporary file renamed on Commit; with
// n > 1 subtasks, path is a directory of part-00000.parquet, ... files. It
// writes a batch column by column into parquet-go's column writers, 64 rows
// at a time as parquet-go's WriteRows does (the same pages, the same bytes),
// and ends a row group itself every RowGroupRows rows. Zstd pages are
// encoded with a 1 MiB window (a page is at most about 256 KiB), by encoders
// all sinks share: an encoder then holds 5 MiB, not the 20 MiB of zstd's
// default 8 MiB window, outside any budget.
package parquet
