// Package formats defines how weir reads and writes files: a Source splits its
// input into independently readable pieces (a Parquet row group, a byte range of
// a CSV or text file, a range of Arrow record batches) and decodes each into
// batches of a Go type T; a Sink writes batches of T from each parallel subtask
// and makes the output visible only on Commit, which the job calls once all of
// its tasks have succeeded.
//
// The formats live in subpackages (parquet, csv, text, arrow); this package holds
// the contracts they share and the mapping of struct fields to columns.
//
// # Contracts
//
//   - Source.Read passes records to its callback a batch at a time; the batch slice
//     may be reused after the callback returns, so a consumer copies the records it
//     keeps. Strings and byte slices inside records stay valid and unchanged after
//     that (sources carve them from per-batch slabs and never reuse those).
//   - Errors name the file and, where there is one, the row group, line, row or
//     column: "formats/csv: orders.csv line 17, column o_totalprice: ...".
//   - A Writer commits in two phases: the task writes to a temporary name beside
//     the final path and Closes it (flush, footer, fsync); the job, after every
//     task succeeded, Commits each closed writer (a rename). A failed Close or
//     Commit removes the temporary file, and so does Abort at any point before
//     Commit: a job that fails leaves nothing behind. A writer that also
//     implements Remover can take back its committed file when a later commit
//     of the same job fails.
//   - Struct fields map to columns by the name in the `weir:"name"` tag, else the
//     name in the `parquet:"name,..."` tag (parquet-go's convention; its options
//     are ignored), else the field name compared case-insensitively, else the
//     field name in snake_case. A `weir` tag wins over a `parquet` tag; a name of
//     "-" in the tag that decides skips the field. Only exported fields are
//     mapped, and one place (FieldsOf, Resolve) does it for every format. A
//     field without a column is an error naming the file, the field and the
//     column.
package formats
