// Package arrow reads and writes Arrow IPC files (the file format, with a
// footer) as records of a struct type T, through arrow-go's ipc package.
//
// # Model
//
// Open[T] takes a file, a directory (its files sorted by name, skipping names
// starting with "." or "_") or a glob, reads each file's schema and maps T's
// fields to its columns by formats.Resolve, checking once that each column's
// type can fill its field. A split is one record batch; Read decodes it
// (RecordBatchAt, so each Read has its own reader and memory) and calls the
// callback once with all its rows.
//
// # Types
//
//	Go field                     Arrow columns read          written as
//	int, int8 ... int64          any integer (range checked)  Int of the same width
//	uint, uint8 ... uint64       any integer (range checked)  Uint of the same width
//	float32, float64             Float32, Float64, Decimal128 (value × 10^-scale)
//	                                                          Float of the same width
//	bool                         Boolean                      Boolean
//	string                       String, LargeString, Binary, LargeBinary, and
//	                             dictionaries of them         String
//	[]byte                       the same                     Binary (nullable)
//	time.Time                    Date32, Date64 (UTC midnight), Timestamp of any
//	                             unit, in its zone (UTC when none)
//	                                                          Timestamp[ns, UTC]
//
// Bodies compressed with LZ4 or Zstd are read (arrow-go decompresses them).
// Types defined on these work too. A pointer field is nullable: null is nil. A
// null in a non-pointer field is an error; in a []byte it is nil. Timestamps are
// written in nanoseconds, so writing an instant outside 1677-2262 is an error.
//
// # Reuse
//
// Each column's copy loop is chosen once per record batch by the column's Arrow
// type and writes fields through their offsets. The bytes of a string or binary
// column are copied into one Go slab per batch and the values point into it;
// pointer fields point into one block of values per column per batch. So
// nothing handed to the callback refers to Arrow memory, and all of it stays
// valid after the callback returns.
//
// # Errors
//
// Errors start with "formats/arrow:" and name the file and, for a value, the
// column (and row). A truncated or corrupt file is an error naming the file,
// never a panic or a crash: before arrow-go reads a footer, checkFooter checks
// that the flatbuffer vectors its schema decoding allocates from fit in the
// footer (arrow-go v18.8.0 trusts them, and a damaged length is a fatal
// out-of-memory), and panics inside arrow-go while decoding are recovered into
// errors.
//
// # Writing
//
// NewSink writes a schema from T (see the table), gathers rows into record
// batches of SinkOptions.BatchRows, writes them to a temporary file beside the
// final path; Close writes the footer and syncs the file, and Commit renames it.
package arrow
