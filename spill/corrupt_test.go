package spill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

// corruptFixture writes a multi-block file and returns the Space, the MemFS,
// the Handle, the file's bytes and the offset where each block starts.
func corruptFixture(t testing.TB, c Codec) (*Space, *MemFS, Handle, []byte, []int) {
	mem := NewMemFS()
	s := NewSpace(mem, "corrupt", Options{Codec: c, BlockSize: 256})
	rng := rand.New(rand.NewPCG(uint64(c), 10))
	recs := make([][]byte, 60)
	for i := range recs {
		recs[i] = compressibleRecord(rng, rng.IntN(40))
	}
	recs = append(recs, textRecord(rng, 700)) // a block of its own
	h := writeFile(t, s, recs)
	data, err := mem.Contents(h.Name)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int
	for off := 0; off < len(data); {
		starts = append(starts, off)
		h, err := parseHeader(data[off:], int64(len(data)-off-headerSize), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		off += headerSize + h.stored
	}
	if len(starts) < 4 {
		t.Fatalf("fixture has %d blocks, want several", len(starts))
	}
	return s, mem, h, data, starts
}

// blockOf returns the number of the block that holds byte off.
func blockOf(starts []int, off int) int {
	b := 0
	for b+1 < len(starts) && starts[b+1] <= off {
		b++
	}
	return b
}

// readErr reads the whole file and returns the error that ended it (nil at a
// clean end).
func readErr(s *Space, h Handle) error {
	r, err := s.Open(h)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// TestCorruptByte flips every byte of a file, one at a time, and expects an
// ErrCorrupt naming the file and the block that holds the byte.
func TestCorruptByte(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			s, mem, h, data, starts := corruptFixture(t, c)
			for off := range data {
				bad := append([]byte(nil), data...)
				bad[off] ^= 0xff
				if err := mem.SetContents(h.Name, bad); err != nil {
					t.Fatal(err)
				}
				err := readErr(s, h)
				wantErr(t, err, ErrCorrupt, h.Name, fmt.Sprintf("block %d", blockOf(starts, off)))
			}
			closeSpace(t, s, mem)
		})
	}
}

// TestCorruptChecksum checks the message of a payload corruption.
func TestCorruptChecksum(t *testing.T) {
	s, mem, h, data, starts := corruptFixture(t, None)
	data[starts[2]+headerSize+3] ^= 1
	mem.SetContents(h.Name, data)
	wantErr(t, readErr(s, h), ErrCorrupt, h.Name, "block 2", "checksum mismatch")
	closeSpace(t, s, mem)
}

// TestTruncated cuts the file at every length, block boundaries included, and
// expects an ErrCorrupt.
func TestTruncated(t *testing.T) {
	for _, c := range codecs {
		s, mem, h, data, _ := corruptFixture(t, c)
		for n := range len(data) {
			mem.SetContents(h.Name, data[:n])
			wantErr(t, readErr(s, h), ErrCorrupt, h.Name)
		}
		mem.SetContents(h.Name, data)
		if err := readErr(s, h); err != nil {
			t.Fatalf("%s: intact file: %v", c, err)
		}
		closeSpace(t, s, mem)
	}
}

// TestHandleMismatch opens a file with a Handle that does not describe it.
func TestHandleMismatch(t *testing.T) {
	s, mem, h, _, _ := corruptFixture(t, S2)
	for _, bad := range []Handle{
		{Name: h.Name, Records: h.Records - 1, Bytes: h.Bytes, DiskBytes: h.DiskBytes},
		{Name: h.Name, Records: h.Records + 1, Bytes: h.Bytes, DiskBytes: h.DiskBytes},
		{Name: h.Name, Records: h.Records, Bytes: h.Bytes, DiskBytes: h.DiskBytes - 1},
		{Name: h.Name, Records: h.Records, Bytes: h.Bytes / 2, DiskBytes: h.DiskBytes},
		{Name: h.Name, Records: h.Records, Bytes: h.Bytes, DiskBytes: h.DiskBytes + 100},
	} {
		wantErr(t, readErr(s, bad), ErrCorrupt, h.Name)
	}
	if _, err := s.Open(Handle{Name: h.Name, Records: -1}); err == nil {
		t.Fatal("Open of a negative handle succeeded")
	}
	if err := readErr(s, h); err != nil {
		t.Fatal(err)
	}
	closeSpace(t, s, mem)
}

// FuzzReader feeds arbitrary bytes (and Handle fields) to a Reader as a spill
// file: it must never panic, never return more records than the Handle says,
// and either end cleanly or with an error wrapping ErrCorrupt. With reseal set,
// the checksum of every block is fixed up first, so that arbitrary payloads
// reach the S2 and zstd decoders.
func FuzzReader(f *testing.F) {
	for _, c := range codecs {
		_, _, h, data, _ := corruptFixture(f, c)
		f.Add(data, uint16(h.Records), uint32(h.Bytes), false)
		f.Add(data, uint16(h.Records), uint32(h.Bytes), true)
	}
	f.Add([]byte("WS\x01\x01\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"), uint16(1), uint32(0), true)
	f.Fuzz(func(t *testing.T, data []byte, records uint16, size uint32, reseal bool) {
		if reseal {
			data = resealBlocks(data)
		}
		mem := NewMemFS()
		mem.SetContents("f", data)
		s := NewSpace(mem, "fuzz", Options{BlockSize: 1024})
		defer s.Close()
		h := Handle{Name: "f", Records: int64(records), Bytes: int64(size % (4 << 20)), DiskBytes: int64(len(data))}
		r, err := s.Open(h)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var n, bytes int64
		for {
			rec, err := r.Next()
			if err == io.EOF {
				if n != h.Records {
					t.Fatalf("clean end after %d records, handle says %d", n, h.Records)
				}
				return
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				return
			}
			n++
			bytes += int64(len(rec))
			if bytes > h.Bytes+maxFraming*h.Records {
				t.Fatalf("read %d bytes, more than the handle allows", bytes)
			}
		}
	})
}

// resealBlocks returns a copy of data with the CRC of every block whose header
// is in bounds recomputed.
func resealBlocks(data []byte) []byte {
	data = append([]byte(nil), data...)
	for off := 0; off+headerSize <= len(data); {
		stored := int(binary.LittleEndian.Uint32(data[off+4:]))
		if stored > len(data)-off-headerSize {
			break
		}
		payload := data[off+headerSize : off+headerSize+stored]
		binary.LittleEndian.PutUint32(data[off+12:], crc32.Checksum(payload, castagnoli))
		off += headerSize + stored
	}
	return data
}
