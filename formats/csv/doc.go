// Package csv reads and writes RFC 4180 CSV files as records of a struct type T.
//
// # Model
//
// Open[T] takes a file, a directory (its files sorted by name, skipping names
// starting with "." or "_") or a glob. Each file's header row names its columns,
// and T's fields map to them by formats.Resolve, so files may order columns
// differently (Options.Columns renames a field's column); with Options.NoHeader
// the columns map to T's fields in field order. A UTF-8 byte-order mark at the
// start of a file is skipped. Every record must have as many fields as the
// header (or as T has fields). Blank lines are skipped, as are comment lines when
// Options.Comment is set. A quoted field may hold the delimiter, "" (one quote)
// and newlines; \r\n ends a record like \n, and inside quotes it reads as \n (as
// in encoding/csv). A record (or header) longer than Options.MaxRecordSize (16
// MiB) is an error.
//
// Inputs are regular files: a named pipe or a device (no size, no second
// read) is refused by Open. A file is read as it was when Open read its size: a file that grew since is
// read to that size, and if the bytes there end inside a record (no newline
// after it), that record is being written and is not read. A file that did not
// grow may end without a newline after its last record.
//
// Two fields read no column and say where their record starts: an int64 tagged
// `weir:",offset"` gets the byte offset of its first byte in the file and one
// tagged `weir:",line"` its line number. The sink does not write them.
//
// # Types
//
// Fields may be signed and unsigned integers (decimal digits), float32,
// float64 (decimal numbers with an optional exponent; NaN and the infinities
// only with Options.NonFinite, hexadecimal and 1_000 never), bool (as
// strconv.ParseBool), string, []byte (the text as is), time.Time (see
// Options.TimeLayout), types defined on them, and pointers to all but []byte.
// An unquoted empty field, or one equal to Options.NullString, is NULL: a nil
// pointer or a nil []byte. A quoted field is never NULL. NULL in a non-pointer
// number, bool or time field is a parse error; in a string field it is the text.
// How each field is parsed is chosen once by Open; records are parsed without
// reflection, through the field offsets.
//
// # Split rule
//
// A split is a byte range of whole records; the header belongs to no split. The
// step is Options.SplitSize, or for n parallel readers (SplitsFor, which
// dataset.FromSource calls with its parallelism) formats.SplitTarget of the
// files' total bytes of records: at most SplitSize, and small enough that there
// are a multiple of n steps unless they would be under 64 KiB. A file's records
// up to the step are one split; a bigger file is read once by Splits to place
// boundaries: a boundary is the byte after a '\n' preceded by an even number of
// quote bytes, at or after the step past the previous boundary. In a valid RFC
// 4180 file an odd count means the newline is inside a quoted field, so quoted
// fields may hold newlines. Splits also count lines, so errors name true line
// numbers. Files read with a Comment character are not split (a comment may
// hold a quote).
//
// # Errors
//
// Errors start with "formats/csv:" and name the file, the line where the record
// starts and, for a bad value, the column (a *RecordError):
//
//	formats/csv: orders.csv line 17, column o_totalprice: parsing "12x.5": invalid syntax
//
// A row with too few or too many fields, a bare quote in an unquoted field, text
// after a closing quote and an unterminated quote are errors naming the line.
// A field with no column in a header is an error from Open naming the field.
//
// # Reading
//
// Read pushes the batches of a split to a function; a Reader (NewReader) pulls
// them, one per Next, and its Offset is the byte offset of the next record, from
// which Seek gives the rest of the split (counting the lines before it, so that
// line numbers stay true). A stream source stores that offset in its
// checkpoints.
//
// Read and a Reader reuse their read buffer and the batch slice. Strings and []byte values are
// copied into 64 KiB slabs that are replaced when full and never overwritten,
// and pointer fields point into a block of values allocated per batch, so all of
// them stay valid after the callback returns. Parsing a record allocates nothing.
//
// # Writing
//
// NewSink writes a header of column names (unless NoHeader) and one row per
// record to a temporary file beside the final path, renamed on Commit. Numbers
// are formatted as strconv does, time.Time by TimeLayout, NULL as NullString.
// A field is quoted when it is empty or equal to NullString, holds the
// delimiter, a quote, '\r' or '\n', starts or ends with a space or tab, or is a
// first field starting with the comment character or the byte-order mark.
// NaN and the infinities are written as NaN, +Inf and -Inf, which a source
// reads with Options.NonFinite. Known limits: a string with
// \r\n inside reads back with \n, and with NullString "" a record whose only
// column is NULL is written as a blank line, which reads back as no record.
package csv
