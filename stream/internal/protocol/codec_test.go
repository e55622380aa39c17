package protocol

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

var task = TaskID{Job: "0f3a", Attempt: 2, Vertex: "9c1e5d", Subtask: 3}

func messages() []Message {
	return []Message{
		Trigger{Checkpoint: 7, Timestamp: 1700000000123, Savepoint: true, Stop: true},
		Trigger{Checkpoint: 1},
		Complete{Checkpoint: 9, Confirm: true},
		Notified{Task: task, Checkpoint: 9},
		Abort{Checkpoint: 4, Reason: "expired before completing"},
		Resume{},
		Ack{Task: task, Checkpoint: 5, Operators: []OperatorSnapshot{
			{ID: "a1", State: []byte{1, 2, 3}, Shared: []string{"x.sst", "y.sst"}, Watermark: -9},
			{ID: "b2", Watermark: -1 << 63},
		}, InFlight: []byte("records"), Alignment: 3 * time.Millisecond},
		Decline{Task: task, Checkpoint: 6, Reason: "disk full"},
		Finished{Task: task},
		InputsEnded{Task: task},
		ReportedWatermark{Task: task, Watermark: 1042},
		ReportedWatermark{Task: task, Watermark: 1<<63 - 1},
		WatermarkAlignment{MaxAllowed: -1 << 63},
		WatermarkAlignment{MaxAllowed: 2042},
	}
}

// TestRoundTrip checks that every message decodes to what was encoded.
func TestRoundTrip(t *testing.T) {
	for _, m := range messages() {
		got, err := Decode(Encode(m))
		if err != nil {
			t.Fatalf("%#v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("got %#v, want %#v", got, m)
		}
	}
}

// TestTruncated checks that every proper prefix of an encoded message is
// refused.
func TestTruncated(t *testing.T) {
	for _, m := range messages() {
		b := Encode(m)
		for i := range len(b) {
			if _, err := Decode(b[:i]); err == nil {
				t.Fatalf("%T: a prefix of %d of %d bytes decoded", m, i, len(b))
			}
		}
		if _, err := Decode(append(b, 0)); err == nil {
			t.Fatalf("%T: a trailing byte decoded", m)
		}
	}
}

func TestRestoreRoundTrip(t *testing.T) {
	r := &TaskRestore{
		Operators: []OperatorRestore{{ID: "k", States: [][]byte{{1}, {2, 3}}, Watermark: 41}, {ID: "s", Watermark: -1 << 63}},
		Finished:  true,
		Channels: []ChannelEntry{{Edge: "k/0", Producer: 1, Consumer: 0, Producers: 2, Consumers: 1, Records: []byte{9}},
			{Edge: "k/0", Output: true, Producer: 0, Consumer: 0, Producers: 2, Consumers: 1}},
	}
	got, err := DecodeRestore(EncodeRestore(r))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("got %#v, want %#v", got, r)
	}
}

func TestChannelsRejectOutOfRange(t *testing.T) {
	b := EncodeChannels([]ChannelEntry{{Edge: "e", Producer: 2, Producers: 2, Consumers: 1}})
	if _, err := DecodeChannels(b); err == nil {
		t.Fatal("a producer beyond its parallelism decoded")
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range messages() {
		f.Add(Encode(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if again := Encode(m); !bytes.Equal(Encode(mustDecode(t, again)), again) {
			t.Fatalf("%#v does not re-encode stably", m)
		}
	})
}

func FuzzDecodeRestore(f *testing.F) {
	f.Add(EncodeRestore(&TaskRestore{Operators: []OperatorRestore{{ID: "a", States: [][]byte{{1}}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRestore(b)
		if err != nil {
			return
		}
		back, err := DecodeRestore(EncodeRestore(r))
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("%#v does not round-trip: %v", r, err)
		}
	})
}

func mustDecode(t *testing.T, b []byte) Message {
	t.Helper()
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
