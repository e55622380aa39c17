package csv

import (
	"fmt"

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
	// TrimSpace trims spaces and tabs around every field (outside its quotes).
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

// columnsOf maps T's fields to columns, rejecting types the format cannot hold.
func columnsOf[T any]() ([]column, error) {
	cols, err := formats.Columns[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/csv: %w", err)
	}
	return cols, nil
}
