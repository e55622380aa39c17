package shuffle

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ChannelID names a channel: one producer subtask's partition for one
// consumer subtask of one edge, in one attempt of a job.
type ChannelID struct {
	Job      string
	Attempt  uint32
	Edge     uint32
	Producer uint32
	Consumer uint32
}

// String returns the id as job/attempt/edge/producer->consumer.
func (id ChannelID) String() string {
	return fmt.Sprintf("%s/%d/%d/%d->%d", id.Job, id.Attempt, id.Edge, id.Producer, id.Consumer)
}

// InboxID names a consumer subtask's end of an edge: the channels of every
// producer subtask to it.
type InboxID struct {
	Job      string
	Attempt  uint32
	Edge     uint32
	Consumer uint32
}

func (id ChannelID) inbox() InboxID {
	return InboxID{Job: id.Job, Attempt: id.Attempt, Edge: id.Edge, Consumer: id.Consumer}
}

// String returns the id as job/attempt/edge/->consumer.
func (id InboxID) String() string {
	return fmt.Sprintf("%s/%d/%d/->%d", id.Job, id.Attempt, id.Edge, id.Consumer)
}

// The message types from producer to consumer (the first byte of a message).
const (
	msgHello     byte = 1 // the producer process's name
	msgOpen      byte = 2 // channel index, ChannelID
	msgData      byte = 3 // channel index, payload
	msgEvent     byte = 4 // channel index, event kind, payload
	msgPriority  byte = 5 // channel index, event kind, payload
	msgHeartbeat byte = 6 // nothing
)

// The message types from consumer to producer.
const (
	msgCredit  byte = 11 // pairs (channel index, credits)
	msgRelease byte = 12 // channel indices whose consumer ended
	msgBeat    byte = 13 // nothing
)

// errWire is a malformed message.
var errWire = errors.New("shuffle: malformed message")

// header is the decoded head of a producer-to-consumer message.
type header struct {
	typ  byte
	idx  uint64 // channel index on the connection
	kind EventKind
	id   ChannelID // msgOpen
	name string    // msgHello
	body int       // offset of the payload
}

// headerMax bounds the encoded head of a data, event or priority message.
const headerMax = 1 + binary.MaxVarintLen64 + 1

// putHeader writes the head of a data, event or priority message to b,
// which has room for headerMax bytes, and returns its length.
func putHeader(b []byte, typ byte, idx uint64, kind EventKind) int {
	b[0] = typ
	n := 1 + binary.PutUvarint(b[1:], idx)
	if typ != msgData {
		b[n] = byte(kind)
		n++
	}
	return n
}

// appendOpen appends an open message for channel idx named id.
func appendOpen(b []byte, idx uint64, id ChannelID) []byte {
	b = append(b, msgOpen)
	b = binary.AppendUvarint(b, idx)
	b = binary.AppendUvarint(b, uint64(len(id.Job)))
	b = append(b, id.Job...)
	b = binary.AppendUvarint(b, uint64(id.Attempt))
	b = binary.AppendUvarint(b, uint64(id.Edge))
	b = binary.AppendUvarint(b, uint64(id.Producer))
	return binary.AppendUvarint(b, uint64(id.Consumer))
}

// appendHello appends a hello message naming the producer process.
func appendHello(b []byte, name string) []byte {
	b = append(b, msgHello)
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

// decodeHeader decodes the head of a producer-to-consumer message. It
// allocates only the strings of hello and open messages.
func decodeHeader(b []byte) (h header, err error) {
	if len(b) == 0 {
		return h, errWire
	}
	h.typ = b[0]
	r := reader{b: b, off: 1}
	switch h.typ {
	case msgHeartbeat:
	case msgHello:
		h.name = r.str()
	case msgOpen:
		h.idx = r.uvarint()
		h.id.Job = r.str()
		h.id.Attempt = r.u32()
		h.id.Edge = r.u32()
		h.id.Producer = r.u32()
		h.id.Consumer = r.u32()
	case msgData:
		h.idx = r.uvarint()
	case msgEvent, msgPriority:
		h.idx = r.uvarint()
		h.kind = EventKind(r.byte())
	default:
		return h, fmt.Errorf("%w: type %d", errWire, h.typ)
	}
	if r.bad {
		return h, fmt.Errorf("%w: type %d truncated", errWire, h.typ)
	}
	h.body = r.off
	if h.typ != msgData && h.typ != msgEvent && h.typ != msgPriority && r.off != len(b) {
		return h, fmt.Errorf("%w: type %d has %d trailing bytes", errWire, h.typ, len(b)-r.off)
	}
	return h, nil
}

// appendGrant appends a credit pair to a msgCredit message.
func appendGrant(b []byte, idx uint64, n uint64) []byte {
	b = binary.AppendUvarint(b, idx)
	return binary.AppendUvarint(b, n)
}

// walkControl calls grant for each pair of a msgCredit message and release
// for each index of a msgRelease one.
func walkControl(b []byte, grant func(idx, n uint64), release func(idx uint64)) error {
	if len(b) == 0 {
		return errWire
	}
	r := reader{b: b, off: 1}
	switch b[0] {
	case msgBeat:
	case msgCredit:
		for r.off < len(b) && !r.bad {
			idx, n := r.uvarint(), r.uvarint()
			if !r.bad {
				grant(idx, n)
			}
		}
	case msgRelease:
		for r.off < len(b) && !r.bad {
			idx := r.uvarint()
			if !r.bad {
				release(idx)
			}
		}
	default:
		return fmt.Errorf("%w: control type %d", errWire, b[0])
	}
	if r.bad {
		return fmt.Errorf("%w: control type %d truncated", errWire, b[0])
	}
	return nil
}

// reader decodes varints and strings; bad is set on the first short or
// overlong read, after which every read returns zero.
type reader struct {
	b   []byte
	off int
	bad bool
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *reader) u32() uint32 {
	v := r.uvarint()
	if v > 1<<32-1 {
		r.bad = true
		return 0
	}
	return uint32(v)
}

func (r *reader) byte() byte {
	if r.bad || r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}
