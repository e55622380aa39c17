package shuffle

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// encodeHeader encodes h with payload body as the producer would.
func encodeHeader(h header, body []byte) []byte {
	switch h.typ {
	case msgHello:
		return appendHello(nil, h.name)
	case msgOpen:
		return appendOpen(nil, h.idx, h.id)
	case msgHeartbeat:
		return []byte{msgHeartbeat}
	}
	b := make([]byte, headerMax+len(body))
	n := putHeader(b, h.typ, h.idx, h.kind)
	return append(b[:n], body...)
}

// FuzzDecodeHeader decodes any bytes as a message head without panicking,
// and what it accepts encodes back to a message that decodes the same.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(appendOpen(nil, 7, ChannelID{Job: "job", Attempt: 2, Edge: 3, Producer: 4, Consumer: 5}))
	f.Add(appendHello(nil, "tm-1"))
	f.Add([]byte{msgHeartbeat})
	f.Add(encodeHeader(header{typ: msgData, idx: 300}, []byte("batch")))
	f.Add(encodeHeader(header{typ: msgEvent, idx: 1, kind: EndOfPartition}, nil))
	f.Add(encodeHeader(header{typ: msgPriority, idx: 1 << 40, kind: 9}, []byte("barrier")))
	f.Add([]byte{msgOpen, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			return
		}
		if h.body > len(b) {
			t.Fatalf("body offset %d past the message's %d bytes", h.body, len(b))
		}
		body := b[h.body:]
		again, err := decodeHeader(encodeHeader(h, body))
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", h, err)
		}
		h.body, again.body = 0, 0
		if h != again {
			t.Fatalf("round trip: %+v became %+v", h, again)
		}
	})
}

// FuzzWalkControl walks any bytes as a consumer-to-producer message without
// panicking, and the grants it finds encode back to the same grants.
func FuzzWalkControl(f *testing.F) {
	f.Add(appendGrant(appendGrant([]byte{msgCredit}, 0, 2), 5, 1))
	f.Add(binary.AppendUvarint([]byte{msgRelease}, 3))
	f.Add([]byte{msgBeat})
	f.Add([]byte{msgCredit, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var grants [][2]uint64
		var released []uint64
		if err := walkControl(b, func(idx, n uint64) { grants = append(grants, [2]uint64{idx, n}) }, func(idx uint64) { released = append(released, idx) }); err != nil {
			return
		}
		var again [][2]uint64
		if len(b) > 0 && b[0] == msgCredit {
			enc := []byte{msgCredit}
			for _, g := range grants {
				enc = appendGrant(enc, g[0], g[1])
			}
			if err := walkControl(enc, func(idx, n uint64) { again = append(again, [2]uint64{idx, n}) }, nil); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(grants, again) {
				t.Fatalf("grants %v became %v", grants, again)
			}
		}
	})
}

// TestHeaderRoundTrip encodes each message type and decodes it back.
func TestHeaderRoundTrip(t *testing.T) {
	id := ChannelID{Job: "0123456789abcdef", Attempt: 1<<32 - 1, Edge: 9, Producer: 1000, Consumer: 7}
	for _, tc := range []struct {
		h    header
		body []byte
	}{
		{header{typ: msgOpen, idx: 12, id: id}, nil},
		{header{typ: msgHello, name: "tm-3"}, nil},
		{header{typ: msgHeartbeat}, nil},
		{header{typ: msgData, idx: 1<<64 - 1}, bytes.Repeat([]byte{7}, 100)},
		{header{typ: msgEvent, idx: 0, kind: 3}, []byte{1, 2}},
		{header{typ: msgPriority, idx: 5, kind: 255}, nil},
	} {
		b := encodeHeader(tc.h, tc.body)
		got, err := decodeHeader(b)
		if err != nil {
			t.Fatalf("%+v: %v", tc.h, err)
		}
		if !bytes.Equal(b[got.body:], tc.body) {
			t.Fatalf("%+v: payload %x, want %x", tc.h, b[got.body:], tc.body)
		}
		got.body = 0
		if got != tc.h {
			t.Fatalf("decoded %+v, want %+v", got, tc.h)
		}
	}
	for _, bad := range [][]byte{nil, {0}, {msgOpen}, {msgData}, {msgEvent, 1}, {msgHello, 5, 'a'}, {msgHeartbeat, 0}, append(appendOpen(nil, 1, id), 0)} {
		if _, err := decodeHeader(bad); err == nil {
			t.Fatalf("decodeHeader(%x) accepted a malformed message", bad)
		}
	}
}
