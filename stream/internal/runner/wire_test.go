package runner

import (
	"reflect"
	"testing"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
)

func wireSamples() []*msg {
	task := protocol.TaskID{Job: "0123456789abcdef0123456789abcdef", Attempt: 3, Vertex: "uid-7", Subtask: 2}
	ack := protocol.Encode(protocol.Ack{Task: task, Checkpoint: 9, Operators: []protocol.OperatorSnapshot{{ID: "w", State: []byte{1, 2}, Watermark: -5}}})
	return []*msg{
		{Kind: wireRegister, Task: task},
		{Kind: wireAlignRegister, Task: task},
		{Kind: wireCoord, Inner: ack},
		{Kind: wireDeliver, Task: task, Inner: protocol.Encode(protocol.Trigger{Checkpoint: 4, Timestamp: 1700, Stop: true})},
		{Kind: wireSplitRequest, Seq: 77, Source: "events", Subtask: 1},
		{Kind: wireSplitGrant, Seq: 77, Grant: source.Grant{Split: source.Split{ID: "file a", Offset: 1 << 40, Records: 12, Len: -1},
			Status: source.Later, Retry: 3 * time.Millisecond}},
		{Kind: wireSplitGrant, Seq: 78, Err: "no enumerator"},
		{Kind: wireEnded, Status: flow.Finished, Finals: []final{{ID: "sink", State: []byte("committables")}, {ID: "s2", State: []byte{}}}},
		{Kind: wireEnded, Status: flow.Failed, Err: "boom"},
		{Kind: wireStop},
		{Kind: wireDone, Status: flow.Canceled, Err: "canceled"},
	}
}

// Every message decodes to what was encoded; each prefix of one is an
// error, as is a byte more.
func TestWireRoundTrip(t *testing.T) {
	for _, m := range wireSamples() {
		b := m.encode()
		got, err := decode(b)
		if err != nil {
			t.Fatalf("%d: %v", m.Kind, err)
		}
		if len(m.Finals) > 0 && len(m.Finals[1].State) == 0 {
			m.Finals[1].State = nil // an empty state reads back as none
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip of kind %d: %+v, want %+v", m.Kind, got, m)
		}
		for i := range len(b) {
			if _, err := decode(b[:i]); err == nil && m.Kind != wireStop {
				t.Fatalf("kind %d: the prefix of %d of %d bytes decoded", m.Kind, i, len(b))
			}
		}
		if _, err := decode(append(b, 0)); err == nil {
			t.Fatalf("kind %d: a byte more decoded", m.Kind)
		}
	}
}

// FuzzWire: decode never panics, and what it accepts encodes back to the
// same bytes.
func FuzzWire(f *testing.F) {
	for _, m := range wireSamples() {
		f.Add(m.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decode(b)
		if err != nil {
			return
		}
		if again := m.encode(); string(again) != string(b) {
			// varints have one shortest form; a longer one decodes too
			m2, err := decode(again)
			if err != nil || !reflect.DeepEqual(m, m2) {
				t.Fatalf("re-encoded %x as %x: %v", b, again, err)
			}
		}
	})
}
