package spill

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// The codec benchmark writes and reads back 256 MiB of records through a Space
// on a DiskFS (in os.TempDir) for each codec and each of two data sets:
//
//   - text: random printable 100-byte lines, what `weir sort` spills;
//   - lineitem: serialized numeric records with low-cardinality columns, shaped
//     like TPC-H lineitem (int64 keys, small ints, dates, flags,
//     dictionary-like strings and a short comment of dictionary words).
//
// It reports MB/s of raw records through write and readback together (SetBytes),
// and as metrics the compression ratio (raw/disk) and the separate write and read
// rates. Run with -cpu 1 to model the other core busy sorting, and -cpu 2 for an
// idle machine:
//
//	go test -run '^$' -bench BenchmarkCodec -benchtime 2x -count 3 -cpu 1,2 ./spill/

const benchTotal = 256 << 20

func BenchmarkCodec(b *testing.B) {
	sets := []struct {
		name string
		gen  func(rng *rand.Rand, dst []byte) []byte
	}{
		{"text", func(rng *rand.Rand, dst []byte) []byte { return appendText(rng, dst, 100) }},
		{"lineitem", appendLineitem},
	}
	for _, set := range sets {
		// 32 MiB of distinct records, cycled to 256 MiB: blocks are compressed
		// independently, so the repetition is invisible to the codecs.
		rng := rand.New(rand.NewPCG(1, 2))
		var recs [][]byte
		for n := 0; n < 32<<20; {
			r := set.gen(rng, nil)
			recs = append(recs, r)
			n += len(r)
		}
		for _, c := range codecs {
			b.Run(set.name+"/"+c.String(), func(b *testing.B) {
				benchCodec(b, c, recs)
			})
		}
	}
}

func benchCodec(b *testing.B, c Codec, recs [][]byte) {
	d, err := NewDiskFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s := NewSpace(d, "bench", Options{Codec: c})
	defer s.Close()
	b.SetBytes(benchTotal)
	var raw, disk int64
	var wdur, rdur time.Duration
	for b.Loop() {
		start := time.Now()
		w, err := s.Create()
		if err != nil {
			b.Fatal(err)
		}
		for n, i := 0, 0; n < benchTotal; i++ {
			r := recs[i%len(recs)]
			if err := w.Append(r); err != nil {
				b.Fatal(err)
			}
			n += len(r)
		}
		h, err := w.Finish()
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		r, err := s.Open(h)
		if err != nil {
			b.Fatal(err)
		}
		var got int64
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got += int64(len(rec))
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		if got != h.Bytes {
			b.Fatalf("read %d bytes, wrote %d", got, h.Bytes)
		}
		if err := s.Remove(h); err != nil {
			b.Fatal(err)
		}
		wdur += mid.Sub(start)
		rdur += time.Since(mid)
		raw += h.Bytes
		disk += h.DiskBytes
	}
	b.ReportMetric(float64(raw)/float64(disk), "ratio")
	b.ReportMetric(float64(raw)/1e6/wdur.Seconds(), "writeMB/s")
	b.ReportMetric(float64(raw)/1e6/rdur.Seconds(), "readMB/s")
}

func appendText(rng *rand.Rand, dst []byte, n int) []byte {
	for range n {
		dst = append(dst, byte(' '+rng.IntN(95)))
	}
	return dst
}

var (
	shipInstruct = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	shipMode     = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	commentWords = []string{"furiously", "carefully", "quickly", "blithely", "slyly", "regular", "final",
		"express", "pending", "ironic", "special", "bold", "deposits", "packages", "accounts", "requests",
		"instructions", "theodolites", "foxes", "pinto", "beans", "among", "above", "across", "after", "the"}
	lineitemOrder uint64
)

// appendLineitem appends one lineitem-like record: order-preserving fixed-width
// integers (the form memory's key encoding gives) and uvarint-prefixed strings.
func appendLineitem(rng *rand.Rand, dst []byte) []byte {
	if rng.IntN(4) == 0 {
		lineitemOrder += uint64(1 + rng.IntN(3))
	}
	u64 := func(v uint64) { dst = binary.BigEndian.AppendUint64(dst, v^1<<63) }
	u32 := func(v uint32) { dst = binary.BigEndian.AppendUint32(dst, v^1<<31) }
	str := func(s string) { dst = binary.AppendUvarint(dst, uint64(len(s))); dst = append(dst, s...) }
	u64(lineitemOrder)                      // l_orderkey
	u64(uint64(rng.IntN(200000)))           // l_partkey
	u64(uint64(rng.IntN(10000)))            // l_suppkey
	u32(uint32(1 + rng.IntN(7)))            // l_linenumber
	u64(uint64(1 + rng.IntN(50)))           // l_quantity
	u64(uint64(90000 + rng.IntN(10000000))) // l_extendedprice (cents)
	u64(uint64(rng.IntN(11)))               // l_discount (percent)
	u64(uint64(rng.IntN(9)))                // l_tax (percent)
	dst = append(dst, "ANR"[rng.IntN(3)])   // l_returnflag
	dst = append(dst, "OF"[rng.IntN(2)])    // l_linestatus
	ship := uint32(8000 + rng.IntN(2500))   // days since 1970
	u32(ship)                               // l_shipdate
	u32(ship + uint32(rng.IntN(60)) - 30)   // l_commitdate
	u32(ship + uint32(1+rng.IntN(30)))      // l_receiptdate
	str(shipInstruct[rng.IntN(len(shipInstruct))])
	str(shipMode[rng.IntN(len(shipMode))])
	var comment [64]byte
	c := comment[:0]
	for range 2 + rng.IntN(4) {
		if len(c) > 0 {
			c = append(c, ' ')
		}
		c = append(c, commentWords[rng.IntN(len(commentWords))]...)
	}
	str(string(c[:min(len(c), 43)])) // l_comment
	return dst
}

// BenchmarkAppend measures the Writer alone (append, compress, CRC) on
// lineitem-like records, writing to an FS that discards the bytes; -benchmem
// shows the allocations per record.
func BenchmarkAppend(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([][]byte, 4096)
	for i := range recs {
		recs[i] = appendLineitem(rng, nil)
	}
	for _, c := range codecs {
		b.Run(c.String(), func(b *testing.B) {
			s := NewSpace(discardFS{}, "append", Options{Codec: c})
			defer s.Close()
			w, err := s.Create()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(recs[0])))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := w.Append(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// discardFS is an FS whose files swallow writes, to time the Writer alone.
type discardFS struct{}

func (discardFS) Create(string) (File, error) { return discardFile{}, nil }
func (discardFS) Open(name string) (File, error) {
	return nil, fmt.Errorf("discardfs: open %s: not supported", name)
}
func (discardFS) Remove(string) error { return nil }

type discardFile struct{}

func (discardFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (discardFile) Write(p []byte) (int, error) { return len(p), nil }
func (discardFile) Sync() error                 { return nil }
func (discardFile) Close() error                { return nil }
