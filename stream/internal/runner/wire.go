package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/wire"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
)

// The messages between the parts of a spread job (link.go). Each starts
// with its kind; the fields follow as varints and length-prefixed bytes.
//
// A part to part 0: register (a task runs), align register (an aligned
// source's subtask runs), coord (a task's message to the coordinator or
// to its source's alignment), split request, ended (the part's flow job ended: its
// status, error and final sink states). Part 0 to a part: deliver (the
// coordinator's message to a task), split grant, stop (a
// stop-with-savepoint completed), done (the job's end).
type wireKind uint8

const (
	wireRegister wireKind = iota + 1
	wireCoord
	wireSplitRequest
	wireEnded
	wireDeliver
	wireSplitGrant
	wireStop
	wireDone
	wireAlignRegister
)

// errWire is the error of bytes that do not decode as a message.
var errWire = errors.New("stream: corrupt message between the parts of a spread job")

// msg is one decoded message; which fields are set depends on Kind.
type msg struct {
	Kind    wireKind
	Task    protocol.TaskID // register, align register, deliver
	Inner   []byte          // coord, deliver: protocol.Encode's bytes
	Seq     uint64          // split request and grant
	Source  string          // split request: the source's stable id
	Subtask int             // split request
	Grant   source.Grant    // split grant
	Status  flow.Status     // ended, done
	Err     string          // ended, done, split grant
	Finals  []final         // ended
}

// final is a part's final state of a sink (graph.Node.Finalize).
type final struct {
	ID    string
	State []byte
}

func (m *msg) encode() []byte {
	b := []byte{byte(m.Kind)}
	str := func(s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	blob := func(p []byte) []byte {
		b = binary.AppendUvarint(b, uint64(len(p)))
		return append(b, p...)
	}
	id := func(t protocol.TaskID) {
		b = str(t.Job)
		b = binary.AppendVarint(b, int64(t.Attempt))
		b = str(t.Vertex)
		b = binary.AppendVarint(b, int64(t.Subtask))
	}
	switch m.Kind {
	case wireRegister, wireAlignRegister:
		id(m.Task)
	case wireCoord:
		b = blob(m.Inner)
	case wireDeliver:
		id(m.Task)
		b = blob(m.Inner)
	case wireSplitRequest:
		b = binary.AppendUvarint(b, m.Seq)
		b = str(m.Source)
		b = binary.AppendVarint(b, int64(m.Subtask))
	case wireSplitGrant:
		b = binary.AppendUvarint(b, m.Seq)
		sp := m.Grant.Split
		b = str(sp.ID)
		b = binary.AppendVarint(b, sp.Offset)
		b = binary.AppendVarint(b, sp.Records)
		b = binary.AppendVarint(b, sp.Len)
		b = binary.AppendVarint(b, int64(m.Grant.Status))
		b = binary.AppendVarint(b, int64(m.Grant.Retry))
		b = str(m.Err)
	case wireEnded:
		b = binary.AppendUvarint(b, uint64(m.Status))
		b = str(m.Err)
		b = binary.AppendUvarint(b, uint64(len(m.Finals)))
		for _, f := range m.Finals {
			b = str(f.ID)
			b = blob(f.State)
		}
	case wireDone:
		b = binary.AppendUvarint(b, uint64(m.Status))
		b = str(m.Err)
	case wireStop:
	}
	return b
}

// readTask reads a TaskID.
func readTask(d *wire.Decoder) protocol.TaskID {
	return protocol.TaskID{Job: d.LenString(), Attempt: int(d.Varint()), Vertex: d.LenString(), Subtask: int(d.Varint())}
}

// readBytes reads a length-prefixed byte slice, copied out of d's input.
func readBytes(d *wire.Decoder) []byte {
	b := d.Bytes(d.Uvarint())
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// decode reads what encode wrote.
func decode(b []byte) (*msg, error) {
	if len(b) == 0 {
		return nil, errWire
	}
	m := &msg{Kind: wireKind(b[0])}
	d := &wire.Decoder{B: b[1:]}
	switch m.Kind {
	case wireRegister, wireAlignRegister:
		m.Task = readTask(d)
	case wireCoord:
		m.Inner = readBytes(d)
	case wireDeliver:
		m.Task = readTask(d)
		m.Inner = readBytes(d)
	case wireSplitRequest:
		m.Seq = d.Uvarint()
		m.Source = d.LenString()
		m.Subtask = int(d.Varint())
	case wireSplitGrant:
		m.Seq = d.Uvarint()
		m.Grant.Split = source.Split{ID: d.LenString(), Offset: d.Varint(), Records: d.Varint(), Len: d.Varint()}
		m.Grant.Status = source.Status(d.Varint())
		m.Grant.Retry = time.Duration(d.Varint())
		m.Err = d.LenString()
	case wireEnded:
		m.Status = flow.Status(d.Uvarint())
		m.Err = d.LenString()
		for range d.Count() {
			m.Finals = append(m.Finals, final{ID: d.LenString(), State: readBytes(d)})
		}
	case wireDone:
		m.Status = flow.Status(d.Uvarint())
		m.Err = d.LenString()
	case wireStop:
	default:
		return nil, fmt.Errorf("%w: kind %d", errWire, b[0])
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%w: %v", errWire, d.Err)
	}
	if len(d.B) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after a message of kind %d", errWire, len(d.B), m.Kind)
	}
	return m, nil
}
