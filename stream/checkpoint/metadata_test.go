package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"testing"
)

func testMetadata() []*metadata {
	return []*metadata{
		{},
		{ID: 9, Kind: Savepoint, Timestamp: -3, Finished: true, OwnShared: true},
		{ID: 1 << 40, Timestamp: 1_700_000_000_000, Operators: []operatorMeta{
			{ID: "src", Name: "Source", Kind: "Source", Parallelism: 1, MaxParallelism: 128, Coordinator: []byte{},
				Subtasks: []subtaskMeta{{State: &fileRef{Name: "op0-0.state", Size: 10, CRC: 0xdeadbeef}}}},
			{ID: "k", Parallelism: 2, MaxParallelism: 32768, Coordinator: []byte("enum"), Finished: true, Subtasks: []subtaskMeta{
				{InFlight: &fileRef{Name: "op1-0.inflight"}, Shared: []fileRef{{Name: "a", Size: 1 << 33, CRC: 1}, {Name: "b"}}},
				{},
			}},
		}},
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range testMetadata() {
		b := encodeMetadata(m)
		got, err := decodeMetadata("m", b)
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip of %+v = %+v", m, got)
		}
		// Every truncation and every flipped bit is caught.
		for i := range b {
			if _, err := decodeMetadata("m", b[:i]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated to %d bytes: %v", i, err)
			}
			for bit := range 8 {
				c := bytes.Clone(b)
				c[i] ^= 1 << bit
				if _, err := decodeMetadata("m", c); err == nil {
					t.Fatalf("bit %d of byte %d flipped: decoded", bit, i)
				}
			}
		}
	}
}

func TestMetadataVersion(t *testing.T) {
	b := encodeMetadata(&metadata{})
	body := b[:len(b)-4]
	body[len(metadataMagic)] = 3
	_, err := decodeMetadata("/x/_metadata", seal(body))
	if err == nil || err.Error() != "checkpoint: /x/_metadata: metadata version 3, this weir reads versions 1 to 2" {
		t.Fatalf("version 3: %v", err)
	}
}

// TestMetadataVersion1 reads a version 1 file, which has no fingerprint,
// no operator kinds and no subtask watermarks: its subtasks restore with
// none (math.MinInt64).
func TestMetadataVersion1(t *testing.T) {
	m := &metadata{ID: 1, Operators: []operatorMeta{{ID: "o", Parallelism: 1, Subtasks: []subtaskMeta{{}}}}}
	b := encodeMetadata(m)
	body := bytes.Clone(b[:len(b)-4])
	body[len(metadataMagic)] = 1
	// version 2 adds three fields, here each one byte: the watermark (varint
	// 0) ends the body; the operator's kind ("") follows its id ("o") and
	// name (""); the fingerprint ("") follows the kind, id, timestamp,
	// finished and shared bytes of the header
	body = body[:len(body)-1]
	kind := len(metadataMagic) + 1 + 5 + 1 + 1 + 2 + 1
	body = append(body[:kind], body[kind+1:]...)
	fp := len(metadataMagic) + 1 + 5
	body = append(body[:fp], body[fp+1:]...)
	got, err := decodeMetadata("m", seal(body))
	if err != nil {
		t.Fatal(err)
	}
	if w := got.Operators[0].Subtasks[0].Watermark; w != math.MinInt64 || got.Operators[0].ID != "o" {
		t.Fatalf("version 1: operator %+v", got.Operators[0])
	}
}

// seal appends the checksum of a metadata file to its body.
func seal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, castagnoli))
}

// FuzzDecodeMetadata: the decoder never panics, on the input as it is and
// on the input sealed with a valid checksum (so that the fuzzer reaches
// the fields), and what it accepts encodes to a file it decodes to the
// same metadata.
func FuzzDecodeMetadata(f *testing.F) {
	for _, m := range testMetadata() {
		b := encodeMetadata(m)
		f.Add(b[:len(b)-4])
	}
	f.Add([]byte("weirckpt"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = decodeMetadata("fuzz", body)
		m, err := decodeMetadata("fuzz", seal(body))
		if err != nil {
			return
		}
		again, err := decodeMetadata("fuzz", encodeMetadata(m))
		if err != nil {
			t.Fatalf("re-encoded metadata: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip %+v != %+v", again, m)
		}
	})
}
