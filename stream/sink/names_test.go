package sink

import (
	"testing"
)

func TestParsePart(t *testing.T) {
	c := newConfig([]Option{WithOutputFileConfig(OutputFileConfig{PartSuffix: "7.txt"})})
	for _, tc := range []struct {
		name    string
		sub     int
		counter uint64
		kind    partKind
	}{
		{".part-0-3" + "7.txt" + ".inprogress", 0, 3, inProgress},
		{".part-0-3" + "7.txt" + ".inprogress.0123456789abcdef", 0, 3, inProgress},
		{".part-12-40" + "7.txt" + ".pending.fedcba9876543210", 12, 40, pending},
		{"..part-2-17" + "7.txt" + ".inprogress.0123456789abcdef.tmp-99", 2, 17, inProgress},
		{".part-12-40" + "7.txt" + ".pending.fedcba987654321", 0, 0, notPart},   // a short nonce
		{".part-12-40" + "7.txt" + ".pending.fedcba9876543210x", 0, 0, notPart}, // more after it
		{".part-12-40" + "7.txt" + ".pending.FEDCBA9876543210", 0, 0, notPart},  // upper case
		{".part-0-3" + "7.txt" + ".inprogress.0123456789abcdef.x", 0, 0, notPart},
		{".part-12-40" + "7.txt" + ".pending", 12, 40, pending},
		{"..part-2-17" + "7.txt" + ".inprogress.tmp-123456", 2, 17, inProgress},
		{"part-0-37.txt", 0, 3, committed},
		{"part-5-1237.txt", 5, 123, committed},
		{"part-0-3.txt", 0, 0, notPart},
		{"..part-0-37.txt.pending", 0, 0, notPart},
		{".part-0-3.inprogress", 0, 0, notPart}, // no suffix
		{".other-0-37.txt.pending", 0, 0, notPart},
		{".part-x-37.txt.pending", 0, 0, notPart},
	} {
		sub, counter, kind := c.parsePart(tc.name)
		if kind != tc.kind || kind != notPart && (sub != tc.sub || counter != tc.counter) {
			t.Errorf("%s: subtask %d counter %d kind %d, want %d %d %d", tc.name, sub, counter, kind, tc.sub, tc.counter, tc.kind)
		}
	}
}

func TestStateAndCommittableRoundTrip(t *testing.T) {
	sub, next, err := decodeState(encodeState(17, 1<<40))
	if err != nil || sub != 17 || next != 1<<40 {
		t.Errorf("state: %d %d %v", sub, next, err)
	}
	for _, b := range [][]byte{nil, {2, 0, 0}, {1, 0}, {1, 0, 0, 0}} {
		if _, _, err := decodeState(b); err == nil {
			t.Errorf("state %v decodes", b)
		}
	}
	c := Committable{Checkpoint: EndOfInput, Pending: "/d/.part-0-1.pending", Final: "/d/part-0-1"}
	b, _ := c.MarshalBinary()
	var d Committable
	if err := d.UnmarshalBinary(b); err != nil || d != (Committable{Checkpoint: EndOfInput, Pending: ".part-0-1.pending", Final: "part-0-1"}) {
		t.Errorf("committable: %+v %v, want the names without the directory", d, err)
	}
	for i := range len(b) {
		if err := d.UnmarshalBinary(b[:i]); err == nil {
			t.Errorf("committable cut at %d decodes", i)
		}
	}
}

// Decoding arbitrary bytes never panics, and what decodes survives a
// round trip through its encoding.
func FuzzDecode(f *testing.F) {
	b, _ := Committable{Checkpoint: 3, Pending: "/d/.p.pending", Final: "/d/p"}.MarshalBinary()
	f.Add(b)
	f.Add(encodeState(2, 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c, d Committable
		if c.UnmarshalBinary(b) == nil {
			e, _ := c.MarshalBinary()
			if err := d.UnmarshalBinary(e); err != nil || d != c {
				t.Errorf("committable %+v decodes from its encoding as %+v, %v", c, d, err)
			}
		}
		if sub, next, err := decodeState(b); err == nil {
			sub2, next2, err := decodeState(encodeState(sub, next))
			if err != nil || sub2 != sub || next2 != next {
				t.Errorf("state %d %d decodes from its encoding as %d %d, %v", sub, next, sub2, next2, err)
			}
		}
	})
}
