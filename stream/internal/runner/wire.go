package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/weirdata/weir/flow"
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
	bytes := func(p []byte) []byte {
		b = binary.AppendUvarint(b, uint64(len(p)))
		return append(b, p...)
	}
	task := func(t protocol.TaskID) {
		b = str(t.Job)
		b = binary.AppendVarint(b, int64(t.Attempt))
		b = str(t.Vertex)
		b = binary.AppendVarint(b, int64(t.Subtask))
	}
	switch m.Kind {
	case wireRegister, wireAlignRegister:
		task(m.Task)
	case wireCoord:
		b = bytes(m.Inner)
	case wireDeliver:
		task(m.Task)
		b = bytes(m.Inner)
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
			b = bytes(f.State)
		}
	case wireDone:
		b = binary.AppendUvarint(b, uint64(m.Status))
		b = str(m.Err)
	case wireStop:
	}
	return b
}

// reader reads fields until the first error, then returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errWire
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errWire
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errWire
		return nil
	}
	p := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return p
}

func (r *reader) string() string { return string(r.bytes()) }

func (r *reader) task() protocol.TaskID {
	return protocol.TaskID{Job: r.string(), Attempt: int(r.varint()), Vertex: r.string(), Subtask: int(r.varint())}
}

// decode reads what encode wrote.
func decode(b []byte) (*msg, error) {
	if len(b) == 0 {
		return nil, errWire
	}
	m := &msg{Kind: wireKind(b[0])}
	r := &reader{b: b[1:]}
	switch m.Kind {
	case wireRegister, wireAlignRegister:
		m.Task = r.task()
	case wireCoord:
		m.Inner = r.bytes()
	case wireDeliver:
		m.Task = r.task()
		m.Inner = r.bytes()
	case wireSplitRequest:
		m.Seq = r.uvarint()
		m.Source = r.string()
		m.Subtask = int(r.varint())
	case wireSplitGrant:
		m.Seq = r.uvarint()
		m.Grant.Split = source.Split{ID: r.string(), Offset: r.varint(), Records: r.varint(), Len: r.varint()}
		m.Grant.Status = source.Status(r.varint())
		m.Grant.Retry = time.Duration(r.varint())
		m.Err = r.string()
	case wireEnded:
		m.Status = flow.Status(r.uvarint())
		m.Err = r.string()
		n := r.uvarint()
		if n > uint64(len(r.b)) {
			return nil, errWire
		}
		for range n {
			m.Finals = append(m.Finals, final{ID: r.string(), State: r.bytes()})
		}
	case wireDone:
		m.Status = flow.Status(r.uvarint())
		m.Err = r.string()
	case wireStop:
	default:
		return nil, fmt.Errorf("%w: kind %d", errWire, b[0])
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after a message of kind %d", errWire, len(r.b), m.Kind)
	}
	return m, nil
}
