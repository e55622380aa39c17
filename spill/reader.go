package spill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Reader returns the records of one spill file in the order they were
// appended. A background goroutine reads, checks and decompresses the next
// block (read-ahead) while the caller consumes the current one.
//
//	background: Read header+payload, CRC, decompress ──► full ──► Next/NextKV
//	                      ▲                                          │
//	                      └──────────────── free ◄───────────────────┘
//
// Memory: two block buffers circulate (one being consumed, one being read
// ahead), plus the background's compressed-block buffer and decoder;
// Options.ReaderMemory is their sum.
//
// A Reader is not safe for concurrent use. A corrupt or truncated file gives an
// error wrapping ErrCorrupt that names the file and block; the Reader then stays
// failed. Close stops the background goroutine; it is safe to call twice.
type Reader struct {
	space *Space
	h     Handle
	file  File

	cur     *buffer // block being consumed (uncompressed)
	pos     int
	block   int // blocks consumed
	records int64
	total   int64 // record bytes returned
	bytes   int64 // record bytes not yet added to the Space's stats
	err     error // sticky
	closed  bool
	bufs    [2]*buffer
	bufCap  int

	full chan blockResult
	free chan *buffer
	stop chan struct{}
	done chan struct{}

	// Owned by the background goroutine until done is closed.
	dec       decompressor
	compBuf   *buffer
	diskRead  int64
	rawBudget int64
	hdr       [headerSize]byte
}

type blockResult struct {
	buf *buffer
	err error // io.EOF after the last block
}

func newReader(s *Space, h Handle, f File) *Reader {
	r := &Reader{
		space:  s,
		h:      h,
		file:   f,
		bufCap: s.opts.BlockSize,
		full:   make(chan blockResult, 1),
		free:   make(chan *buffer, 2),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	// Every record adds at most maxFraming bytes of framing to the payloads.
	r.rawBudget = math.MaxInt64
	if h.Records <= (math.MaxInt64-h.Bytes)/maxFraming {
		r.rawBudget = h.Bytes + maxFraming*h.Records
	}
	r.bufs[0], r.bufs[1] = getBuffer(r.bufCap), getBuffer(r.bufCap)
	r.free <- r.bufs[0]
	r.free <- r.bufs[1]
	go r.run()
	return r
}

// Name returns the file's name.
func (r *Reader) Name() string { return r.h.Name }

// Next returns the next record, or io.EOF after the last one. The slice is
// valid until the next call of Next, NextKV or Close.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	for r.cur == nil || r.pos >= len(r.cur.b) {
		if err := r.nextBlock(); err != nil {
			r.err = err
			return nil, err
		}
	}
	b := r.cur.b
	n, k := binary.Uvarint(b[r.pos:])
	if k <= 0 || n > uint64(len(b)-r.pos-k) {
		r.err = fmt.Errorf("spill: read %s block %d: %w: bad length of record %d", r.h.Name, r.block-1, ErrCorrupt, r.records)
		return nil, r.err
	}
	start := r.pos + k
	end := start + int(n)
	r.pos = end
	r.records++
	r.total += int64(n)
	r.bytes += int64(n)
	return b[start:end:end], nil
}

// NextKV returns the next record split as Writer.AppendKV wrote it. key and val
// alias the record and are valid until the next call.
func (r *Reader) NextKV() (key, val []byte, err error) {
	rec, err := r.Next()
	if err != nil {
		return nil, nil, err
	}
	kl, k := binary.Uvarint(rec)
	if k <= 0 || kl > uint64(len(rec)-k) {
		r.err = fmt.Errorf("spill: read %s block %d: %w: record %d is not a key/value pair", r.h.Name, r.block-1, ErrCorrupt, r.records-1)
		return nil, nil, r.err
	}
	end := k + int(kl)
	return rec[k:end:end], rec[end:], nil
}

// nextBlock recycles the current block and takes the next one from the
// background, checking the totals against the Handle at the end.
func (r *Reader) nextBlock() error {
	if r.closed {
		return fmt.Errorf("spill: read %s: %w", r.h.Name, ErrClosed)
	}
	if r.cur != nil {
		r.free <- r.cur // never blocks: free holds both buffers at most
		r.cur = nil
	}
	res := <-r.full
	if res.err == io.EOF {
		r.space.stats.read.Add(r.bytes)
		r.bytes = 0
		if r.records != r.h.Records || r.total != r.h.Bytes {
			return fmt.Errorf("spill: read %s: %w: %d records of %d bytes, handle says %d of %d",
				r.h.Name, ErrCorrupt, r.records, r.total, r.h.Records, r.h.Bytes)
		}
		return io.EOF
	}
	if res.err != nil {
		return res.err
	}
	r.cur, r.pos = res.buf, 0
	r.block++
	return nil
}

// run is the background goroutine: it reads blocks into free buffers and
// hands them over until the file ends, an error occurs or stop is closed.
func (r *Reader) run() {
	defer close(r.done)
	defer func() {
		r.dec.release()
		putBuffer(r.compBuf, compressedCap(r.bufCap))
		r.compBuf = nil
	}()
	var rawRead int64
	for block := 0; ; block++ {
		if r.diskRead == r.h.DiskBytes {
			select {
			case r.full <- blockResult{err: io.EOF}:
			case <-r.stop:
			}
			return
		}
		var b *buffer
		select {
		case b = <-r.free:
		case <-r.stop:
			return
		}
		raw, err := r.readBlock(b, block, r.rawBudget-rawRead)
		rawRead += int64(raw)
		select {
		case r.full <- blockResult{buf: b, err: err}:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// readBlock reads, checks and decodes one block into b and returns its
// uncompressed length.
func (r *Reader) readBlock(b *buffer, block int, rawLeft int64) (int, error) {
	name := r.h.Name
	left := r.h.DiskBytes - r.diskRead
	if left < headerSize {
		return 0, fmt.Errorf("spill: read %s block %d: %w: %d trailing bytes, too short for a header", name, block, ErrCorrupt, left)
	}
	if err := r.readFull(r.hdr[:], block); err != nil {
		return 0, err
	}
	h, err := parseHeader(r.hdr[:], left-headerSize, rawLeft)
	if err != nil {
		return 0, fmt.Errorf("spill: read %s block %d: %w", name, block, err)
	}
	if cap(b.b) < h.raw || (cap(b.b) != r.bufCap && h.raw <= r.bufCap) {
		b.b = make([]byte, 0, max(h.raw, r.bufCap)) // an oversized block, or back from one
	}
	dst := b.b[:h.raw]
	payload := dst
	if h.codec != None {
		if r.compBuf == nil {
			r.compBuf = getBuffer(compressedCap(r.bufCap))
		}
		if cap(r.compBuf.b) < h.stored {
			r.compBuf.b = make([]byte, 0, h.stored) // not recycled: capacity differs
		}
		payload = r.compBuf.b[:h.stored]
	}
	if err := r.readFull(payload, block); err != nil {
		return 0, err
	}
	if got := crc32.Checksum(payload, castagnoli); got != h.crc {
		return 0, fmt.Errorf("spill: read %s block %d: %w: checksum mismatch (stored %08x, computed %08x)", name, block, ErrCorrupt, h.crc, got)
	}
	if h.codec != None {
		if err := r.dec.decompress(h.codec, dst, payload); err != nil {
			return 0, fmt.Errorf("spill: read %s block %d: %w", name, block, err)
		}
		if cap(r.compBuf.b) != compressedCap(r.bufCap) {
			r.compBuf.b = make([]byte, 0, compressedCap(r.bufCap))
		}
	}
	b.b = dst
	return h.raw, nil
}

// readFull reads len(p) bytes, reporting a short file as corruption.
func (r *Reader) readFull(p []byte, block int) error {
	n, err := io.ReadFull(r.file, p)
	r.diskRead += int64(n)
	r.space.stats.diskRead.Add(int64(n))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("spill: read %s block %d: %w: truncated file (%d of %d bytes)", r.h.Name, block, ErrCorrupt, r.diskRead, r.h.DiskBytes)
	default:
		return fmt.Errorf("spill: read %s block %d: %w", r.h.Name, block, err)
	}
}

// Close stops the background goroutine and closes the file. It returns
// nothing useful after a read error (that error was returned by Next); it is
// safe to call twice.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	close(r.stop)
	<-r.done
	r.space.stats.read.Add(r.bytes)
	r.bytes = 0
	r.cur = nil
	for i, b := range r.bufs {
		putBuffer(b, r.bufCap)
		r.bufs[i] = nil
	}
	r.space.forgetReader(r)
	if err := r.file.Close(); err != nil {
		return fmt.Errorf("spill: close %s: %w", r.h.Name, err)
	}
	return nil
}
