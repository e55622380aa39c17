package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrCorrupt is the error of bytes that do not decode as a message.
var ErrCorrupt = errors.New("stream/protocol: corrupt message")

type kind uint8

const (
	kindTrigger kind = iota + 1
	kindComplete
	kindAbort
	kindResume
	kindAck
	kindDecline
	kindFinished
	kindNotified
	kindReportedWatermark
	kindWatermarkAlignment
	kindInputsEnded
)

func (Trigger) kind() kind  { return kindTrigger }
func (Complete) kind() kind { return kindComplete }
func (Abort) kind() kind    { return kindAbort }
func (Resume) kind() kind   { return kindResume }
func (Ack) kind() kind      { return kindAck }
func (Decline) kind() kind  { return kindDecline }
func (Finished) kind() kind { return kindFinished }
func (Notified) kind() kind { return kindNotified }

func (InputsEnded) kind() kind { return kindInputsEnded }

func (ReportedWatermark) kind() kind  { return kindReportedWatermark }
func (WatermarkAlignment) kind() kind { return kindWatermarkAlignment }

// Encode returns m's bytes: its kind, then its fields.
func Encode(m Message) []byte {
	var e encoder
	e.b = append(e.b, byte(m.kind()))
	switch m := m.(type) {
	case Trigger:
		e.varint(m.Checkpoint)
		e.varint(m.Timestamp)
		e.bool(m.Savepoint)
		e.bool(m.Stop)
	case Complete:
		e.varint(m.Checkpoint)
		e.bool(m.Confirm)
	case Abort:
		e.varint(m.Checkpoint)
		e.string(m.Reason)
	case Resume:
	case Ack:
		e.task(m.Task)
		e.varint(m.Checkpoint)
		e.uvarint(uint64(len(m.Operators)))
		for _, op := range m.Operators {
			e.string(op.ID)
			e.bytes(op.State)
			e.uvarint(uint64(len(op.Shared)))
			for _, s := range op.Shared {
				e.string(s)
			}
			e.varint(op.Watermark)
		}
		e.bytes(m.InFlight)
		e.varint(int64(m.Alignment))
	case Decline:
		e.task(m.Task)
		e.varint(m.Checkpoint)
		e.string(m.Reason)
	case Finished:
		e.task(m.Task)
	case InputsEnded:
		e.task(m.Task)
	case Notified:
		e.task(m.Task)
		e.varint(m.Checkpoint)
	case ReportedWatermark:
		e.task(m.Task)
		e.varint(m.Watermark)
	case WatermarkAlignment:
		e.varint(m.MaxAllowed)
	}
	return e.b
}

// Decode reads what Encode wrote.
func Decode(b []byte) (Message, error) {
	if len(b) == 0 {
		return nil, ErrCorrupt
	}
	d := decoder{b: b[1:]}
	var m Message
	switch kind(b[0]) {
	case kindTrigger:
		m = Trigger{Checkpoint: d.varint(), Timestamp: d.varint(), Savepoint: d.bool(), Stop: d.bool()}
	case kindComplete:
		m = Complete{Checkpoint: d.varint(), Confirm: d.bool()}
	case kindAbort:
		m = Abort{Checkpoint: d.varint(), Reason: d.string()}
	case kindResume:
		m = Resume{}
	case kindAck:
		a := Ack{Task: d.task(), Checkpoint: d.varint()}
		n := d.count()
		for range n {
			op := OperatorSnapshot{ID: d.string(), State: d.bytes()}
			for range d.count() {
				op.Shared = append(op.Shared, d.string())
			}
			op.Watermark = d.varint()
			a.Operators = append(a.Operators, op)
		}
		a.InFlight = d.bytes()
		a.Alignment = time.Duration(d.varint())
		m = a
	case kindDecline:
		m = Decline{Task: d.task(), Checkpoint: d.varint(), Reason: d.string()}
	case kindFinished:
		m = Finished{Task: d.task()}
	case kindInputsEnded:
		m = InputsEnded{Task: d.task()}
	case kindNotified:
		m = Notified{Task: d.task(), Checkpoint: d.varint()}
	case kindReportedWatermark:
		m = ReportedWatermark{Task: d.task(), Watermark: d.varint()}
	case kindWatermarkAlignment:
		m = WatermarkAlignment{MaxAllowed: d.varint()}
	default:
		return nil, fmt.Errorf("%w: kind %d", ErrCorrupt, b[0])
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the message", ErrCorrupt, len(d.b))
	}
	return m, nil
}

// EncodeRestore returns r's bytes.
func EncodeRestore(r *TaskRestore) []byte {
	var e encoder
	e.uvarint(uint64(len(r.Operators)))
	for _, op := range r.Operators {
		e.string(op.ID)
		e.uvarint(uint64(len(op.States)))
		for _, s := range op.States {
			e.bytes(s)
		}
		e.varint(op.Watermark)
	}
	e.bool(r.Finished)
	e.b = append(e.b, EncodeChannels(r.Channels)...)
	return e.b
}

// DecodeRestore reads what EncodeRestore wrote.
func DecodeRestore(b []byte) (*TaskRestore, error) {
	d := decoder{b: b}
	r := &TaskRestore{}
	for range d.count() {
		op := OperatorRestore{ID: d.string()}
		for range d.count() {
			op.States = append(op.States, d.bytes())
		}
		op.Watermark = d.varint()
		r.Operators = append(r.Operators, op)
	}
	r.Finished = d.bool()
	if d.err != nil {
		return nil, d.err
	}
	var err error
	if r.Channels, err = DecodeChannels(d.b); err != nil {
		return nil, err
	}
	return r, nil
}

// channelsVersion starts encoded channel state.
const channelsVersion = 1

// EncodeChannels writes channel entries as a checkpoint keeps them
// (SubtaskState.InFlight): a version byte, the count, and per entry its
// edge, kind, producer, consumer, the two parallelisms and the records.
// No entries encode as nil.
func EncodeChannels(es []ChannelEntry) []byte {
	if len(es) == 0 {
		return nil
	}
	e := encoder{b: []byte{channelsVersion}}
	e.uvarint(uint64(len(es)))
	for _, c := range es {
		e.string(c.Edge)
		e.bool(c.Output)
		for _, v := range [4]int{c.Producer, c.Consumer, c.Producers, c.Consumers} {
			e.uvarint(uint64(v))
		}
		e.bytes(c.Records)
	}
	return e.b
}

// DecodeChannels reads what EncodeChannels wrote.
func DecodeChannels(b []byte) ([]ChannelEntry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != channelsVersion {
		return nil, fmt.Errorf("%w: channel state version %d", ErrCorrupt, b[0])
	}
	d := decoder{b: b[1:]}
	n := d.count()
	es := make([]ChannelEntry, 0, n)
	for range n {
		c := ChannelEntry{Edge: d.string(), Output: d.bool()}
		var v [4]int
		for k := range v {
			x := d.uvarint()
			if x > 1<<31 {
				d.fail()
			}
			v[k] = int(x)
		}
		c.Producer, c.Consumer, c.Producers, c.Consumers = v[0], v[1], v[2], v[3]
		if d.err == nil && (c.Producer >= c.Producers || c.Consumer >= c.Consumers) {
			d.fail()
		}
		c.Records = d.bytes()
		if d.err != nil {
			return nil, d.err
		}
		es = append(es, c)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return es, nil
}

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) string(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) bytes(p []byte) {
	e.uvarint(uint64(len(p)))
	e.b = append(e.b, p...)
}
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *encoder) task(t TaskID) {
	e.string(t.Job)
	e.uvarint(uint64(t.Attempt))
	e.string(t.Vertex)
	e.uvarint(uint64(t.Subtask))
}

// decoder reads fields until the first error, then returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

// count reads a count of items of at least a byte each.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) bool() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *decoder) task() TaskID {
	return TaskID{Job: d.string(), Attempt: int(d.uvarint()), Vertex: d.string(), Subtask: int(d.uvarint())}
}
