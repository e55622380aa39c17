package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/weirdata/weir/memory"
)

// channelEntry is one channel's in-flight records of an unaligned
// checkpoint (Flink's InputChannelStateHandle and
// ResultSubpartitionStateHandle): the records a consumer read before the
// channel's barrier after it had snapshotted (Output false), or the
// records a producer had not sent yet when its barrier overtook them
// (Output true). A restored job sends them again, from the producer's
// side, before anything new.
type channelEntry struct {
	// Edge names the network edge: the consumer's stable operator id and
	// the index of the input.
	Edge     string
	Output   bool
	Producer int
	Consumer int
	// Producers and Consumers are the edge's parallelisms when it was
	// written.
	Producers, Consumers int
	// Records are the records, encoded back to back with the edge's codec.
	Records []byte
}

// channelStateVersion starts an encoded channel state.
const channelStateVersion = 1

var errChannelState = errors.New("stream: corrupt channel state")

// encodeChannelState writes entries as SubtaskState.InFlight: a version
// byte, the count, and per entry its edge, kind, producer, consumer and
// records, each length-prefixed or a uvarint (producer, consumer and the two
// parallelisms).
func encodeChannelState(es []channelEntry) []byte {
	if len(es) == 0 {
		return nil
	}
	b := []byte{channelStateVersion}
	b = binary.AppendUvarint(b, uint64(len(es)))
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(len(e.Edge)))
		b = append(b, e.Edge...)
		kind := byte(0)
		if e.Output {
			kind = 1
		}
		b = append(b, kind)
		for _, v := range [4]int{e.Producer, e.Consumer, e.Producers, e.Consumers} {
			b = binary.AppendUvarint(b, uint64(v))
		}
		b = binary.AppendUvarint(b, uint64(len(e.Records)))
		b = append(b, e.Records...)
	}
	return b
}

// decodeChannelState reads what encodeChannelState wrote.
func decodeChannelState(b []byte) ([]channelEntry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != channelStateVersion {
		return nil, fmt.Errorf("%w: version %d", errChannelState, b[0])
	}
	b = b[1:]
	num := func() (uint64, error) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, errChannelState
		}
		b = b[k:]
		return v, nil
	}
	bytesOf := func() ([]byte, error) {
		n, err := num()
		if err != nil || n > uint64(len(b)) {
			return nil, errChannelState
		}
		v := b[:n:n]
		b = b[n:]
		return v, nil
	}
	n, err := num()
	if err != nil || n > uint64(len(b)) {
		return nil, errChannelState
	}
	es := make([]channelEntry, 0, n)
	for range n {
		var e channelEntry
		edge, err := bytesOf()
		if err != nil {
			return nil, err
		}
		e.Edge = string(edge)
		if len(b) == 0 || b[0] > 1 {
			return nil, errChannelState
		}
		e.Output = b[0] == 1
		b = b[1:]
		var v [4]int
		for k := range v {
			x, err := num()
			if err != nil || x > 1<<31 {
				return nil, errChannelState
			}
			v[k] = int(x)
		}
		e.Producer, e.Consumer, e.Producers, e.Consumers = v[0], v[1], v[2], v[3]
		if e.Producer >= e.Producers || e.Consumer >= e.Consumers {
			return nil, errChannelState
		}
		if e.Records, err = bytesOf(); err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	if len(b) != 0 {
		return nil, errChannelState
	}
	return es, nil
}

// codecs caches each record type's codec.
var codecs sync.Map // reflect.Type -> *memory.Codec[Record[T]]

// recordCodec returns the codec of Record[T], which unaligned checkpoints
// need for the records of every network edge.
func recordCodec[T any]() (*memory.Codec[Record[T]], error) {
	t := reflect.TypeFor[T]()
	if c, ok := codecs.Load(t); ok {
		return c.(*memory.Codec[Record[T]]), nil
	}
	c, err := memory.NewCodec[Record[T]]()
	if err != nil {
		return nil, fmt.Errorf("stream: unaligned checkpoints persist the records in flight: %v: %w", t, err)
	}
	codecs.Store(t, c)
	return c, nil
}

// appendRecords encodes rs onto dst.
func appendRecords[T any](c *memory.Codec[Record[T]], dst []byte, rs []Record[T]) []byte {
	for i := range rs {
		dst = c.Append(dst, &rs[i])
	}
	return dst
}

// decodeRecords decodes what appendRecords wrote.
func decodeRecords[T any](c *memory.Codec[Record[T]], b []byte) ([]Record[T], error) {
	var out []Record[T]
	for len(b) > 0 {
		var r Record[T]
		n, err := c.Decode(b, &r)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errChannelState, err)
		}
		if n <= 0 || n > len(b) {
			return nil, errChannelState
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, nil
}
