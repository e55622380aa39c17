package examples

import (
	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/text"
)

// ParseError is a malformed line of an input file (text.ParseError). Run
// functions return it wrapped only in their own prefix ("examples: weblog: "),
// so that the one-line message names the file and the line.
type ParseError = text.ParseError

// slab copies the strings a parser keeps (text.Strings).
type slab = text.Strings

// openLines opens a file, a directory or a glob of lines, parsed into T one
// line at a time (text.OpenParsed: byte ranges of the files, cut for the
// job's parallelism; an error names its file and line).
func openLines[T any](path string, parse func([]byte, *slab) (T, error)) (formats.Source[T], error) {
	return text.OpenParsed(path, parse)
}
