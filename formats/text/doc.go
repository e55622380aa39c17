// Package text reads and writes files of lines as records of type string.
//
// # Model
//
// Open takes a file, a directory (its regular files, sorted by name, skipping
// names starting with "." or "_") or a glob. Each file is cut into byte ranges of
// Options.SplitSize (32 MiB by default). A record is a line without its '\n'; every
// other byte, a trailing '\r' included, is kept as is. A final line without '\n' is
// a record; an empty file has none.
//
// # Split rule
//
// A line belongs to the split holding its first byte. A split starting at byte s > 0
// skips through the first '\n' at or after s-1 and then reads every line that starts
// before its end, reading past the end to finish the last one. Together the splits of
// a file yield each line exactly once, in order.
//
// # Reuse
//
// Read reads the file in chunks into a freshly allocated buffer per chunk and hands
// out strings that alias it, so strings stay valid after the callback returns (a
// retained string keeps its chunk alive). The batch slice itself is reused.
//
// # Errors
//
// Errors start with "formats/text:" and name the file and the operation.
//
// # Writing
//
// NewSink writes one line per record, each followed by '\n', to a temporary file
// beside the final path, renamed on Commit (see formats.Sink). Records are
// written as is: one holding '\n' reads back as several lines.
package text
