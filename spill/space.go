package spill

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by a Space, Writer or Reader used after it was closed,
// finished or aborted.
var ErrClosed = errors.New("spill: closed")

// Handle names a finished run, the byte range of a spill file one Writer
// wrote, and says what it holds. Only a Handle returned by Writer.Finish can be
// opened: the Reader checks the range against Records, Bytes and DiskBytes, so
// a truncated file is an error even when it is cut at a block boundary.
type Handle struct {
	Name      string // file name in the FS
	Offset    int64  // where the run starts in the file
	Records   int64  // number of records
	Bytes     int64  // sum of the records' lengths
	DiskBytes int64  // file size (headers and compressed payloads)
}

// Stats counts a Space's I/O since NewSpace.
type Stats struct {
	BytesWritten     int64 // record bytes appended (raw, before framing and compression)
	DiskBytesWritten int64 // bytes written to files (headers and compressed payloads)
	BytesRead        int64 // record bytes returned by Readers (counted at their end or Close)
	DiskBytesRead    int64 // bytes read from files
	Files            int64 // files created
}

// Space is one operator's set of spill files: it names them after the owner and
// a sequence number, tracks which exist, and removes them.
//
// Space's methods are safe for concurrent use. Each Writer and Reader belongs to
// one goroutine at a time, and Close must not run concurrently with calls on the
// Space's Writers and Readers: the operator calls it once its goroutines have
// stopped (on success, error or cancellation). DiskFS.Close is the last resort
// when even that cannot happen.
type Space struct {
	fs     FS
	prefix string
	opts   Options

	seq   atomic.Int64
	stats struct {
		written, diskWritten, read, diskRead, files atomic.Int64
	}

	mu      sync.Mutex
	closed  bool
	files   map[string]struct{} // created and not yet removed
	writers map[*Writer]struct{}
	readers map[*Reader]struct{}
	shared  map[string]*sharedFile // files runs are appended to, by name
	idle    []*sharedFile          // shared files open for the next Writer
}

// sharedFile is a spill file that holds the runs of Writers created one after
// another. At most one Writer appends to it at a time; it stays open for
// writing between Writers until it reaches Options.FileSize or a Writer fails
// on it, and it is removed once it holds no run and no Writer.
type sharedFile struct {
	name string
	f    File  // open for writing; nil once full or failed
	size int64 // bytes of the finished runs
	live int   // finished runs not yet removed
	busy bool  // a Writer is appending
}

var spaceSeq atomic.Int64

// maxOwnerLen is how much of the owner a file name keeps, well within the
// 255 bytes file systems allow a name.
const maxOwnerLen = 96

// NewSpace returns a Space that keeps its files in fs, under names that start
// with owner (characters other than letters, digits, '.', '_' and '-' become
// '_'; only its first 96 bytes are kept) followed by a number unique in this
// process, so two Spaces with the same owner never collide.
func NewSpace(fs FS, owner string, opts Options) *Space {
	clean := strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, owner)
	if clean == "" {
		clean = "spill"
	}
	if len(clean) > maxOwnerLen {
		clean = clean[:maxOwnerLen]
	}
	return &Space{
		fs:      fs,
		prefix:  fmt.Sprintf("%s-%d-", clean, spaceSeq.Add(1)),
		opts:    opts.EnsureDefaults(),
		files:   map[string]struct{}{},
		writers: map[*Writer]struct{}{},
		readers: map[*Reader]struct{}{},
		shared:  map[string]*sharedFile{},
	}
}

// Options returns the Space's options, defaults filled in.
func (s *Space) Options() Options { return s.opts }

// Create returns a Writer for a new run. The run goes at the end of a file the
// Space's earlier Writers appended to, if one is idle and smaller than
// Options.FileSize, else into a new file. The file belongs to the Space until
// its last run is removed or Close, whatever happens to the Writer.
func (s *Space) Create() (*Writer, error) {
	if !s.opts.Codec.valid() {
		return nil, fmt.Errorf("spill: create: unknown codec %d", s.opts.Codec)
	}
	s.mu.Lock()
	if n := len(s.idle); n > 0 && !s.closed {
		sf := s.idle[n-1]
		s.idle = s.idle[:n-1]
		sf.busy = true
		w := newWriter(s, sf.name, sf.f)
		w.shared, w.base = sf, sf.size
		s.writers[w] = struct{}{}
		s.mu.Unlock()
		return w, nil
	}
	name := fmt.Sprintf("%s%06d.spill", s.prefix, s.seq.Add(1))
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("spill: create %s: %w", name, ErrClosed)
	}
	s.files[name] = struct{}{} // before the FS call, so Close never misses it
	s.mu.Unlock()

	f, err := s.fs.Create(name)
	if err != nil {
		s.mu.Lock()
		delete(s.files, name)
		s.mu.Unlock()
		return nil, fmt.Errorf("spill: create %s: %w", name, err)
	}
	s.stats.files.Add(1)
	w := newWriter(s, name, f)
	if s.opts.FileSize > 0 {
		w.shared = &sharedFile{name: name, f: f, busy: true}
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.writers[w] = struct{}{}
		if w.shared != nil {
			s.shared[name] = w.shared
		}
	}
	s.mu.Unlock()
	if closed {
		w.Abort()
		return nil, fmt.Errorf("spill: create %s: %w", name, ErrClosed)
	}
	return w, nil
}

// Open opens a finished run and returns a Reader that reads it ahead in the
// background. Any number of Readers may read runs of one file, also while a
// Writer appends to it.
func (s *Space) Open(h Handle) (*Reader, error) {
	if h.Records < 0 || h.Bytes < 0 || h.DiskBytes < 0 || h.Offset < 0 {
		return nil, fmt.Errorf("spill: open %s: bad handle %+v", h.Name, h)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, ErrClosed)
	}
	f, err := s.fs.Open(h.Name)
	if err != nil {
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, err)
	}
	if h.Offset > 0 {
		if err := seekTo(f, h.Offset); err != nil {
			f.Close()
			return nil, fmt.Errorf("spill: open %s at %d: %w", h.Name, h.Offset, err)
		}
	}
	r := newReader(s, h, f)
	s.mu.Lock()
	closed = s.closed
	if !closed {
		s.readers[r] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		r.Close()
		return nil, fmt.Errorf("spill: open %s: %w", h.Name, ErrClosed)
	}
	return r, nil
}

// Remove removes a finished run, once. A run that shares its file with others
// stays on disk until the last of them is removed (or Close); a file of its own
// is removed at once. Readers open on it keep reading (the FS permitting);
// Close them as usual.
func (s *Space) Remove(h Handle) error {
	s.mu.Lock()
	sf := s.shared[h.Name]
	if sf == nil {
		s.mu.Unlock()
		return s.remove(h.Name)
	}
	sf.live--
	if sf.live > 0 || sf.busy {
		s.mu.Unlock()
		return nil
	}
	f := s.dropShared(sf)
	s.mu.Unlock()
	return s.removeShared(sf.name, f)
}

// dropShared forgets sf, which holds no run and no Writer, and returns its
// write handle, if still open. s.mu is held.
func (s *Space) dropShared(sf *sharedFile) File {
	delete(s.shared, sf.name)
	for i, o := range s.idle {
		if o == sf {
			s.idle = append(s.idle[:i], s.idle[i+1:]...)
			break
		}
	}
	f := sf.f
	sf.f = nil
	return f
}

// removeShared closes a dropped shared file's write handle f (if not nil) and
// removes the file.
func (s *Space) removeShared(name string, f File) error {
	var cerr error
	if f != nil {
		if err := f.Close(); err != nil {
			cerr = fmt.Errorf("spill: close %s: %w", name, err)
		}
	}
	return errors.Join(cerr, s.remove(name))
}

// writerDone returns a shared file to the Space when its Writer finished
// (ok, the file now ends at end) or failed. The file is kept open for the
// next Writer unless it reached Options.FileSize, the Writer failed (the
// file's end is then unknown) or the Space is closed; a file that holds no
// run is then removed. The error is that of closing the file after a
// successful run; the run is then not kept.
func (s *Space) writerDone(sf *sharedFile, ok bool, end int64) error {
	s.mu.Lock()
	sf.busy = false
	if ok {
		sf.size = end
		if end < s.opts.FileSize && !s.closed {
			sf.live++
			s.idle = append(s.idle, sf)
			s.mu.Unlock()
			return nil
		}
	}
	f := sf.f
	sf.f = nil
	var cerr error
	if f != nil {
		if err := f.Close(); err != nil {
			cerr = fmt.Errorf("spill: close %s: %w", sf.name, err)
		}
	}
	if ok && cerr == nil {
		sf.live++
	}
	drop := sf.live == 0
	if drop {
		delete(s.shared, sf.name)
	}
	s.mu.Unlock()
	if drop {
		s.remove(sf.name) // a failure here leaves the file to Close
	}
	return cerr
}

func (s *Space) remove(name string) error {
	if err := s.fs.Remove(name); err != nil {
		return fmt.Errorf("spill: remove %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.files, name)
	s.mu.Unlock()
	return nil
}

// Close aborts open Writers, closes open Readers and removes every file of the
// Space that still exists. It returns the errors of the removals, joined. After
// Close, Create and Open fail with ErrClosed. Close is safe to call twice; the
// second call does nothing.
func (s *Space) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	writers := make([]*Writer, 0, len(s.writers))
	for w := range s.writers {
		writers = append(writers, w)
	}
	readers := make([]*Reader, 0, len(s.readers))
	for r := range s.readers {
		readers = append(readers, r)
	}
	s.mu.Unlock()

	var errs []error
	for _, w := range writers {
		w.Abort()
	}
	for _, r := range readers {
		r.Close() // errors of readers are of no interest once the data is dropped
	}
	s.mu.Lock()
	for _, sf := range s.shared {
		if sf.f != nil {
			sf.f.Close() // the files are removed below
			sf.f = nil
		}
	}
	s.shared, s.idle = map[string]*sharedFile{}, nil
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	s.mu.Unlock()
	for _, n := range names {
		if err := s.remove(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stats returns the Space's counters.
func (s *Space) Stats() Stats {
	return Stats{
		BytesWritten:     s.stats.written.Load(),
		DiskBytesWritten: s.stats.diskWritten.Load(),
		BytesRead:        s.stats.read.Load(),
		DiskBytesRead:    s.stats.diskRead.Load(),
		Files:            s.stats.files.Load(),
	}
}

// Files returns the names of the Space's files that exist (created and not yet
// removed), in no particular order.
func (s *Space) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	return names
}

func (s *Space) forgetWriter(w *Writer) {
	s.mu.Lock()
	delete(s.writers, w)
	s.mu.Unlock()
}

func (s *Space) forgetReader(r *Reader) {
	s.mu.Lock()
	delete(s.readers, r)
	s.mu.Unlock()
}
