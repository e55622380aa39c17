package spill

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// Writer appends records to one spill file, block by block, and compresses and
// writes full blocks in a background goroutine (write-behind) while the caller
// fills the next block.
//
//	Append ──► cur block ──(full)──► jobs ──► background: compress, CRC, Write
//	              ▲                                   │
//	              └───────────── free ◄───────────────┘
//
// Memory: two block buffers circulate (one being filled, at most one in flight)
// plus, in the background, one compressed-block buffer and the encoder;
// Options.WriterMemory is their sum. A record larger than BlockSize gets a block
// (and, until it is written, a buffer) of its own.
//
// States:
//
//	writing ──Finish succeeds──────────────────────► finished (file kept)
//	writing ──Finish fails, Abort, Space.Close─────► aborted (file removed)
//
// A Writer is not safe for concurrent use. An error from the background (a
// failed write) is returned by the next Append, AppendKV or Finish; after any
// error call Abort (Finish has then already cleaned up, and Abort does nothing).
// Finish or Abort stops the background goroutine.
type Writer struct {
	space  *Space
	name   string
	file   File
	opts   Options
	shared *sharedFile // the file other runs share, or nil for a file of its own
	base   int64       // where this Writer's run starts in the file

	state   writerState
	cur     *buffer // header room + framed records
	bufs    [2]*buffer
	bufCap  int
	records int64
	bytes   int64

	jobs chan *buffer
	free chan *buffer
	done chan struct{}

	// Owned by the background goroutine until done is closed.
	comp      compressor
	compBuf   *buffer
	blocks    int
	diskBytes int64

	failure  atomic.Pointer[error] // first background error
	aborting atomic.Bool           // background skips remaining blocks
}

type writerState uint8

const (
	writing writerState = iota
	finished
	aborted
)

func newWriter(s *Space, name string, f File) *Writer {
	bufCap := headerSize + s.opts.BlockSize
	w := &Writer{
		space:  s,
		name:   name,
		file:   f,
		opts:   s.opts,
		bufCap: bufCap,
		jobs:   make(chan *buffer, 1),
		free:   make(chan *buffer, 2),
		done:   make(chan struct{}),
	}
	w.bufs[0], w.bufs[1] = getBuffer(bufCap), getBuffer(bufCap)
	w.cur = w.bufs[0]
	w.cur.b = w.cur.b[:headerSize]
	w.bufs[1].b = w.bufs[1].b[:headerSize]
	w.free <- w.bufs[1]
	go w.run()
	return w
}

// Name returns the file's name.
func (w *Writer) Name() string { return w.name }

// Append appends one record. rec is copied; the caller may reuse it at once.
func (w *Writer) Append(rec []byte) error {
	if err := w.reserve(len(rec)); err != nil {
		return err
	}
	w.cur.b = binary.AppendUvarint(w.cur.b, uint64(len(rec)))
	w.cur.b = append(w.cur.b, rec...)
	return w.appended(len(rec))
}

// AppendKV appends the record uvarint(len(key)) key val, the form of
// memory.AppendKV; Reader.NextKV splits it again.
func (w *Writer) AppendKV(key, val []byte) error {
	n := uvarintLen(uint64(len(key))) + len(key) + len(val)
	if err := w.reserve(n); err != nil {
		return err
	}
	w.cur.b = binary.AppendUvarint(w.cur.b, uint64(n))
	w.cur.b = binary.AppendUvarint(w.cur.b, uint64(len(key)))
	w.cur.b = append(w.cur.b, key...)
	w.cur.b = append(w.cur.b, val...)
	return w.appended(n)
}

// reserve makes room in cur for a record of n bytes plus its framing, cutting
// the block first if the record does not fit.
func (w *Writer) reserve(n int) error {
	if w.state != writing {
		return fmt.Errorf("spill: append to %s: %w", w.name, ErrClosed)
	}
	if f := w.failure.Load(); f != nil {
		return *f
	}
	if n > MaxRecordSize {
		return fmt.Errorf("spill: append to %s: record of %d bytes exceeds MaxRecordSize", w.name, n)
	}
	need := uvarintLen(uint64(n)) + n
	if len(w.cur.b)-headerSize+need <= w.opts.BlockSize {
		return nil
	}
	if len(w.cur.b) > headerSize {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if headerSize+need > cap(w.cur.b) { // a record of its own, larger than a block
		w.cur.b = make([]byte, headerSize, headerSize+need)
	}
	return nil
}

// appended counts a record of n bytes and sends an oversized block on its way.
func (w *Writer) appended(n int) error {
	w.records++
	w.bytes += int64(n)
	if len(w.cur.b)-headerSize > w.opts.BlockSize {
		return w.flush()
	}
	return nil
}

// flush hands cur to the background and takes the free buffer, waiting while
// the background is a block behind.
func (w *Writer) flush() error {
	w.jobs <- w.cur
	w.cur = <-w.free
	if cap(w.cur.b) != w.bufCap { // came back from an oversized record
		w.cur.b = make([]byte, headerSize, w.bufCap)
	}
	if f := w.failure.Load(); f != nil {
		return *f
	}
	return nil
}

// run is the background goroutine: it compresses and writes the blocks it
// receives and hands their buffers back, until jobs is closed.
func (w *Writer) run() {
	defer close(w.done)
	for b := range w.jobs {
		if w.failure.Load() == nil && !w.aborting.Load() {
			if err := w.writeBlock(b.b); err != nil {
				w.fail(err)
			}
		}
		b.b = b.b[:headerSize]
		w.free <- b
	}
	w.comp.release()
	putBuffer(w.compBuf, compressedCap(w.opts.BlockSize))
	w.compBuf = nil
}

// fail records the first background error (kept out of run's loop so that the
// error variable does not escape there on every block).
func (w *Writer) fail(err error) { w.failure.Store(&err) }

// writeBlock compresses (or seals) blk, whose first headerSize bytes are room
// for the header, and writes it with one Write.
func (w *Writer) writeBlock(blk []byte) error {
	if w.opts.Codec != None && w.compBuf == nil {
		var err error
		if w.comp, err = newCompressor(w.opts.Codec); err != nil {
			return fmt.Errorf("spill: write %s block %d: %w", w.name, w.blocks, err)
		}
		w.compBuf = getBuffer(compressedCap(w.opts.BlockSize))
	}
	var out []byte
	ok := false
	if w.compBuf != nil {
		out, ok = w.comp.compress(w.compBuf.b[:0], blk[headerSize:])
	}
	if !ok {
		sealRaw(blk)
		out = blk
	}
	n, err := w.file.Write(out)
	w.diskBytes += int64(n)
	w.space.stats.diskWritten.Add(int64(n))
	if err == nil && n < len(out) {
		err = fmt.Errorf("short write of %d of %d bytes", n, len(out))
	}
	if err != nil {
		return fmt.Errorf("spill: write %s block %d: %w", w.name, w.blocks, err)
	}
	w.blocks++
	return nil
}

// Finish writes the last block, waits for the background, syncs the file and
// returns the run's Handle; a file of its own is closed, a shared one stays open
// for the Space's next Writer. The run stays until Space.Remove or Space.Close.
// On error Finish drops the run (removing its file unless other runs share it),
// and the Writer is aborted.
func (w *Writer) Finish() (Handle, error) {
	if w.state != writing {
		return Handle{}, fmt.Errorf("spill: finish %s: %w", w.name, ErrClosed)
	}
	if len(w.cur.b) > headerSize && w.failure.Load() == nil {
		w.jobs <- w.cur
		w.cur = nil
	}
	w.stop()
	var err error
	if f := w.failure.Load(); f != nil {
		err = *f
	}
	if err == nil {
		if serr := w.file.Sync(); serr != nil {
			err = fmt.Errorf("spill: sync %s: %w", w.name, serr)
		}
	}
	if w.shared != nil {
		if err == nil {
			err = w.space.writerDone(w.shared, true, w.base+w.diskBytes)
		} else {
			w.space.writerDone(w.shared, false, 0)
		}
		w.space.forgetWriter(w)
		if err != nil {
			w.state = aborted
			return Handle{}, err
		}
		w.state = finished
		return Handle{Name: w.name, Offset: w.base, Records: w.records, Bytes: w.bytes, DiskBytes: w.diskBytes}, nil
	}
	cerr := w.file.Close()
	if err == nil && cerr != nil {
		err = fmt.Errorf("spill: close %s: %w", w.name, cerr)
	}
	if err != nil {
		w.state = aborted
		w.space.remove(w.name) // a failure here leaves the file to Space.Close
		w.space.forgetWriter(w)
		return Handle{}, err
	}
	w.state = finished
	w.space.forgetWriter(w)
	return Handle{Name: w.name, Records: w.records, Bytes: w.bytes, DiskBytes: w.diskBytes}, nil
}

// Abort stops the background and drops the run: its file is closed and removed
// unless other runs share it (the file then takes no more runs). It does nothing
// after Finish (successful or not) or a previous Abort, so `defer w.Abort()` is
// the idiom.
func (w *Writer) Abort() {
	if w.state != writing {
		return
	}
	w.state = aborted
	w.aborting.Store(true)
	w.stop()
	if w.shared != nil {
		w.space.writerDone(w.shared, false, 0)
		w.space.forgetWriter(w)
		return
	}
	w.file.Close()
	w.space.remove(w.name) // a failure here leaves the file to Space.Close
	w.space.forgetWriter(w)
}

// stop closes jobs, waits for the background goroutine and recycles buffers.
func (w *Writer) stop() {
	close(w.jobs)
	<-w.done
	w.space.stats.written.Add(w.bytes)
	w.cur = nil
	for i, b := range w.bufs {
		putBuffer(b, w.bufCap)
		w.bufs[i] = nil
	}
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
