package source

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Split is one independently readable piece of a source together with its
// position: a small value the checkpoint writes and a restore reads back
// (MarshalBinary, UnmarshalBinary). A reader's Positions are its splits with
// Offset and Records moved past what Next has returned.
type Split struct {
	// ID names the split, unique within its source: a file's path for file
	// sources, host:port for a socket, "sequence 2" for a range.
	ID string
	// Offset is where the next record starts: the byte offset of the next
	// line (text files, tailed files, sockets), the index of the next record
	// (slices, sequences of values, CSV and Parquet files, generators), or the
	// next number (number sequences).
	Offset int64
	// Records counts the records of the split before Offset; the record at
	// Offset is line Records+1 of a file.
	Records int64
	// Len is the number of records in the split, -1 when not known in advance.
	Len int64
}

// String names the split and its position.
func (s Split) String() string {
	return fmt.Sprintf("%s at %d (record %d)", s.ID, s.Offset, s.Records)
}

// MarshalBinary encodes the split: the ID's length and bytes, then Offset,
// Records and Len as varints.
func (s Split) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(s.ID)+4*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(s.ID)))
	b = append(b, s.ID...)
	b = binary.AppendVarint(b, s.Offset)
	b = binary.AppendVarint(b, s.Records)
	b = binary.AppendVarint(b, s.Len)
	return b, nil
}

// ErrCorruptSplit is returned by UnmarshalBinary for bytes MarshalBinary did
// not write.
var ErrCorruptSplit = errors.New("stream/source: corrupt split encoding")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (s *Split) UnmarshalBinary(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return ErrCorruptSplit
	}
	b = b[k:]
	id := string(b[:n])
	b = b[n:]
	var v [3]int64
	for i := range v {
		x, k := binary.Varint(b)
		if k <= 0 {
			return ErrCorruptSplit
		}
		v[i], b = x, b[k:]
	}
	if len(b) != 0 {
		return ErrCorruptSplit
	}
	*s = Split{ID: id, Offset: v[0], Records: v[1], Len: v[2]}
	return nil
}
