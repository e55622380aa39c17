package core

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/weirdata/weir/memory"
)

// ErrCorruptRecords is the error of encoded records that do not decode.
var ErrCorruptRecords = errors.New("stream: corrupt encoded records")

// codecs caches each record type's codec.
var codecs sync.Map // reflect.Type -> *memory.Codec[Record[T]]

// RecordCodec returns the codec of Record[T]: the value and the timestamp.
func RecordCodec[T any]() (*memory.Codec[Record[T]], error) {
	t := reflect.TypeFor[T]()
	if c, ok := codecs.Load(t); ok {
		return c.(*memory.Codec[Record[T]]), nil
	}
	c, err := memory.NewCodec[Record[T]]()
	if err != nil {
		return nil, fmt.Errorf("stream: records of %v cannot be encoded: %w", t, err)
	}
	codecs.Store(t, c)
	return c, nil
}

// AppendRecords encodes rs onto dst, back to back.
func AppendRecords[T any](c *memory.Codec[Record[T]], dst []byte, rs []Record[T]) []byte {
	for i := range rs {
		dst = c.Append(dst, &rs[i])
	}
	return dst
}

// DecodeRecords decodes what AppendRecords wrote.
func DecodeRecords[T any](c *memory.Codec[Record[T]], b []byte) ([]Record[T], error) {
	var out []Record[T]
	for len(b) > 0 {
		var r Record[T]
		n, err := c.Decode(b, &r)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorruptRecords, err)
		}
		if n <= 0 || n > len(b) {
			return nil, ErrCorruptRecords
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, nil
}
