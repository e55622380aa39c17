package csv

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/weirdata/weir/formats"
)

// Options configure a Source and a Sink. The zero value reads and writes RFC 4180
// files with a header row, ',' between fields and empty fields as NULL.
type Options struct {
	// Delimiter separates fields; ',' when 0. It must be an ASCII character other
	// than '"', '\r' and '\n'.
	Delimiter rune
	// NoHeader says files have no header row: columns map to fields in field
	// order, and the sink writes no header.
	NoHeader bool
	// Comment, when not 0, starts a comment line (only at the start of a record).
	// A file read with a Comment character is one split.
	Comment rune
	// NullString is the text of NULL besides the empty field: an unquoted field
	// equal to it (or empty) sets a pointer field (or a []byte) to nil. The sink
	// writes NULL as NullString and quotes strings equal to it.
	NullString string
	// NonFinite reads NaN, Inf and Infinity (signed or not, in any case) in
	// float fields, as the sink writes NaN, +Inf and -Inf. Without it they are
	// an error naming the file, line and column. Hexadecimal mantissas (0x1p3)
	// and digit separators (1_000) are refused either way.
	NonFinite bool
	// TrimSpace trims spaces and tabs around every field (outside its quotes);
	// a tab that is the delimiter stays one.
	TrimSpace bool
	// TimeLayout parses and formats time.Time fields. When empty, a 10-byte value
	// is read as "2006-01-02" and any other as RFC 3339; the sink writes a UTC
	// midnight as "2006-01-02" and any other instant as RFC 3339 with nanoseconds.
	TimeLayout string
	// SplitSize is the target size of a split in bytes; 32 MiB when 0.
	SplitSize int64
	// BatchRows is the most records per batch; 1024 when 0.
	BatchRows int
	// ChunkSize is the size of each read; 1 MiB when 0. A record longer than a
	// chunk grows the buffer.
	ChunkSize int
	// MaxRecordSize is the most bytes a record (or the header) may take, its
	// line end included; 16 MiB when 0. A longer one is an error naming the
	// file, the line where it starts and the limit.
	MaxRecordSize int
	// Columns renames columns: a field whose column name (its tag, or else its
	// Go name) is a key reads and writes the column the value names, matched
	// exactly and then case-insensitively. A key naming no field is an error.
	Columns map[string]string
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Delimiter == 0 {
		o.Delimiter = ','
	}
	if o.SplitSize <= 0 {
		o.SplitSize = 32 << 20
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 1024
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1 << 20
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = 16 << 20
	}
}

func (o *Options) validate() error {
	bad := func(r rune) bool { return r >= 0x80 || r < 0 || r == '"' || r == '\r' || r == '\n' }
	if bad(o.Delimiter) {
		return fmt.Errorf("formats/csv: delimiter %q is not an ASCII character other than quote and newline", o.Delimiter)
	}
	if o.Comment != 0 && (bad(o.Comment) || o.Comment == o.Delimiter) {
		return fmt.Errorf("formats/csv: comment %q is not an ASCII character other than quote, newline and delimiter", o.Comment)
	}
	return nil
}

// column is a struct field mapped to a column (see formats.Columns).
type column = formats.Column

// The meta fields: a field tagged `weir:",offset"` or `weir:",line"` (an
// int64) reads no column; it is set to where its record starts.
const (
	metaNone   = iota
	metaOffset // the byte offset of the record's first byte in its file
	metaLine   // the line number where the record starts
)

// meta is a meta field: its kind and its offset in the struct.
type meta struct {
	kind   int
	offset uintptr
}

// columnsOf maps T's fields to columns, rejecting types the format cannot
// hold, and renames them as o.Columns says. The meta fields are returned
// apart.
func columnsOf[T any](o *Options) ([]column, []meta, error) {
	all, err := formats.Columns[T]()
	if err != nil {
		return nil, nil, fmt.Errorf("formats/csv: %w", err)
	}
	var cols []column
	var metas []meta
	var renamed map[string]bool
	for _, c := range all {
		if k := metaKind(c.Field.Opts); k != metaNone {
			if c.Field.Tagged || c.Kind != formats.KindInt || c.Size != 8 || c.Ptr {
				return nil, nil, fmt.Errorf("formats/csv: field %s: a %s field is an untagged int64 (`weir:\",%s\"`)", c.Field.GoName, c.Field.Opts, c.Field.Opts)
			}
			metas = append(metas, meta{kind: k, offset: c.Field.Offset})
			continue
		}
		if name, ok := o.Columns[c.Field.Column]; ok {
			if renamed == nil {
				renamed = map[string]bool{}
			}
			renamed[c.Field.Column] = true
			c.Field.Column, c.Field.Tagged = name, true
		}
		cols = append(cols, c)
	}
	if len(renamed) != len(o.Columns) {
		var missing []string
		for k := range o.Columns {
			if !renamed[k] {
				missing = append(missing, k)
			}
		}
		slices.Sort(missing)
		return nil, nil, fmt.Errorf("formats/csv: Options.Columns renames %q, which no field of %s reads", missing, reflect.TypeFor[T]())
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("formats/csv: %s has no field that reads a column", reflect.TypeFor[T]())
	}
	return cols, metas, nil
}

func metaKind(opts string) int {
	switch opts {
	case "offset":
		return metaOffset
	case "line":
		return metaLine
	}
	return metaNone
}
