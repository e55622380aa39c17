// Package text reads and writes files of lines as records of type string.
//
// # Model
//
// Open takes a file, a directory (its regular files, sorted by name, skipping
// names starting with "." or "_") or a glob. Each file is cut into equal byte
// ranges of at most Options.SplitSize (32 MiB by default); for n parallel readers
// (SplitsFor, which dataset.FromSource calls with its parallelism) the ranges are
// cut so that there are a multiple of n of them over all files, unless that
// would cut ranges under 64 KiB (formats.SplitTarget). A record is a line without
// its '\n'; every other byte, a trailing '\r' included, is kept as is. A final line
// without '\n' is a record; an empty file has none.
//
// OpenParsed reads the same splits and parses each line, without its '\n' and a
// trailing '\r', into a record of the caller's type. A malformed line stops Read
// with a *ParseError naming the file and the line's number in the file: the split
// that meets it counts the lines before its first one, so a split not at the
// start of its file pays one read of the bytes before it, on that error only.
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
// Source.Read reads the file in chunks into a freshly allocated buffer per chunk and
// hands out strings that alias it, so strings stay valid after the callback returns
// (a retained string keeps its chunk alive). The batch slice itself is reused. A
// parsed source reuses its one read buffer: a line is valid only during parse.
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
