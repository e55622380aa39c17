package wire

import (
	"encoding/binary"
	"testing"
)

func TestDecoder(t *testing.T) {
	var b []byte
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -7)
	b = append(b, 1, 0, 9)
	b = binary.AppendUvarint(b, 3)
	b = append(b, "abc"...)
	b = binary.AppendUvarint(b, 2)
	b = append(b, 'x', 'y')
	d := Decoder{B: b}
	if v := d.Uvarint(); v != 300 {
		t.Fatalf("Uvarint = %d", v)
	}
	if v := d.Varint(); v != -7 {
		t.Fatalf("Varint = %d", v)
	}
	if !d.Bool() || d.Bool() {
		t.Fatal("Bool: want true then false")
	}
	if c := d.Byte(); c != 9 {
		t.Fatalf("Byte = %d", c)
	}
	if s := d.LenString(); s != "abc" {
		t.Fatalf("LenString = %q", s)
	}
	if n := d.Count(); n != 2 || string(d.Bytes(2)) != "xy" || d.Err != nil || len(d.B) != 0 {
		t.Fatalf("Count %d, err %v, %d bytes left", n, d.Err, len(d.B))
	}
}

// TestDecoderCorrupt: each kind of corruption sets Err, and the reads
// after it return zero values.
func TestDecoderCorrupt(t *testing.T) {
	for name, c := range map[string]struct {
		b    []byte
		read func(*Decoder)
	}{
		"empty uvarint":  {nil, func(d *Decoder) { d.Uvarint() }},
		"endless varint": {[]byte{0x80, 0x80}, func(d *Decoder) { d.Varint() }},
		"big int":        {binary.AppendUvarint(nil, 1<<31), func(d *Decoder) { d.Int() }},
		"big count":      {binary.AppendUvarint(nil, 5), func(d *Decoder) { d.Count() }},
		"no byte":        {nil, func(d *Decoder) { d.Byte() }},
		"bad flag":       {[]byte{2}, func(d *Decoder) { d.Bool() }},
		"short bytes":    {[]byte{1, 2}, func(d *Decoder) { d.Bytes(3) }},
		"short string":   {[]byte{4, 'a'}, func(d *Decoder) { d.LenString() }},
	} {
		d := Decoder{B: c.b}
		c.read(&d)
		if d.Err == nil {
			t.Errorf("%s: no error", name)
		}
		first := d.Err
		if d.Uvarint() != 0 || d.Bytes(0) != nil || d.Byte() != 0 || d.Err != first {
			t.Errorf("%s: a read after the error returned a value or replaced the error", name)
		}
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 'c', 1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := Decoder{B: b}
		for d.Err == nil && len(d.B) > 0 {
			switch d.Byte() % 6 {
			case 0:
				d.Uvarint()
			case 1:
				d.Varint()
			case 2:
				d.Count()
			case 3:
				d.LenString()
			case 4:
				d.Bool()
			case 5:
				d.Int()
			}
		}
	})
}
