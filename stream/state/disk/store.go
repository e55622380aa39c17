package disk

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/state"
)

// The sizes of a store's block cache and memtable when the budget allows,
// and the least it runs with.
const (
	DefaultCacheSize    = 8 << 20
	DefaultMemTableSize = 4 << 20
	minCacheSize        = 256 << 10
	minMemTableSize     = 64 << 10
)

// Options configure a Store.
type Options struct {
	// Name names the store in errors and in its memory reservation.
	Name string
	// Dir is the directory the store's own directory is created in; ""
	// is os.TempDir(). The job passes its temporary directory.
	Dir string
	// Memory is the job's memory manager: the block cache and two
	// memtables are reserved on it for the store's life. Nil is unlimited.
	Memory *memory.Manager
	// CacheSize and MemTableSize are the sizes asked for (zero: the
	// defaults); both are halved until the cache and two memtables take at
	// most half the budget available, down to 256 KiB and 64 KiB.
	CacheSize, MemTableSize int64
}

// Store is a state.Store on a Pebble database in a directory of its own.
type Store struct {
	name     string
	parent   string
	dir      string // the store's own directory, removed by Close
	db       *pebble.DB
	cache    int64
	memtable int64
	res      *memory.Reservation
	offEnd   func() // ends the runtime limit's hold of the C memory
	ownMem   *memory.Manager
	token    string            // names this store's shared files apart
	uploaded map[string]string // data file -> shared file holding it
	ckpts    int
}

var _ state.Store = (*Store)(nil)

// Open creates a store in a new directory under o.Dir.
func Open(o Options) (*Store, error) {
	s := &Store{name: o.Name, parent: o.Dir, uploaded: map[string]string{}}
	mem := o.Memory
	if mem == nil {
		mem = memory.MustNewManager(memory.Options{})
		s.ownMem = mem
	}
	s.res = mem.NewReservation("disk state: " + o.Name)
	s.cache, s.memtable = o.CacheSize, o.MemTableSize
	if s.cache <= 0 {
		s.cache = DefaultCacheSize
	}
	if s.memtable <= 0 {
		s.memtable = DefaultMemTableSize
	}
	avail := mem.Available()
	for s.cache+2*s.memtable > avail/2 && (s.cache > minCacheSize || s.memtable > minMemTableSize) {
		s.cache, s.memtable = max(s.cache/2, minCacheSize), max(s.memtable/2, minMemTableSize)
	}
	if err := s.res.Grow(s.cache + 2*s.memtable); err != nil {
		s.release()
		return nil, fmt.Errorf("disk: %s: the block cache and memtables need %s, but only %s of the memory budget of %s is free: %w",
			o.Name, memory.FormatBytes(s.cache+2*s.memtable), memory.FormatBytes(max(mem.Budget()-mem.Used(), 0)), memory.FormatBytes(mem.Budget()), err)
	}
	if offHeap {
		s.offEnd = memory.OffHeap(s.cache + 2*s.memtable)
	}
	var err error
	if s.dir, err = os.MkdirTemp(o.Dir, "weir-state-*"); err != nil {
		s.release()
		return nil, fmt.Errorf("disk: %s: %w", o.Name, err)
	}
	var tok [6]byte
	_, _ = rand.Read(tok[:])
	s.token = hex.EncodeToString(tok[:])
	if s.db, err = s.open(filepath.Join(s.dir, "db"), false); err != nil {
		_ = os.RemoveAll(s.dir)
		s.release()
		return nil, err
	}
	return s, nil
}

// open opens the database in dir with the store's sizes.
func (s *Store) open(dir string, readOnly bool) (*pebble.DB, error) {
	c := pebble.NewCache(s.cache)
	defer c.Unref()
	o := &pebble.Options{
		Cache:                       c,
		MemTableSize:                uint64(s.memtable),
		MemTableStopWritesThreshold: 2,
		DisableWAL:                  true,
		Merger:                      pebble.DefaultMerger,
		Logger:                      quiet{},
		ReadOnly:                    readOnly,
	}
	// bloom filters spare the lookups of absent keys (a new key's state, a
	// timer's deduplication) a data block read per table
	o.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := pebble.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("disk: %s: open %s: %w", s.name, dir, err)
	}
	return db, nil
}

// CacheSize returns the block cache's bytes; MemTableSize a memtable's.
func (s *Store) CacheSize() int64    { return s.cache }
func (s *Store) MemTableSize() int64 { return s.memtable }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Flushes returns the number of memtable flushes to disk so far.
func (s *Store) Flushes() int64 { return s.db.Metrics().Flush.Count }

func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("disk: %s: %s: %w", s.name, op, err)
}

// Get implements state.Store.
func (s *Store) Get(dst, key []byte) ([]byte, bool, error) {
	v, c, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, s.wrap("get", err)
	}
	dst = append(dst, v...)
	return dst, true, s.wrap("get", c.Close())
}

// Set implements state.Store.
func (s *Store) Set(key, value []byte) error {
	return s.wrap("set", s.db.Set(key, value, pebble.NoSync))
}

// Merge implements state.Store.
func (s *Store) Merge(key, value []byte) error {
	return s.wrap("merge", s.db.Merge(key, value, pebble.NoSync))
}

// Delete implements state.Store.
func (s *Store) Delete(key []byte) error { return s.wrap("delete", s.db.Delete(key, pebble.NoSync)) }

// DeleteRange implements state.Store.
func (s *Store) DeleteRange(start, end []byte) error {
	return s.wrap("delete range", s.db.DeleteRange(start, end, pebble.NoSync))
}

// Scan implements state.Store.
func (s *Store) Scan(start, end []byte, f func(key, value []byte) bool) error {
	return s.wrap("scan", scan(s.db, start, end, f))
}

func scan(db *pebble.DB, start, end []byte, f func(key, value []byte) bool) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		if !f(it.Key(), v) {
			break
		}
	}
	return it.Close()
}

// shared reports whether a file of a Pebble checkpoint is an immutable
// data file, written to shared files once.
func shared(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// Checkpoint implements state.Store: it flushes the memtables, takes a
// Pebble checkpoint (hard links of the data files, copies of the manifest
// and options) and writes the data files not written before to shared.
func (s *Store) Checkpoint(sf state.SharedFiles) ([]state.StoreFile, error) {
	if err := s.db.Flush(); err != nil {
		return nil, s.wrap("checkpoint", err)
	}
	s.ckpts++
	tmp := filepath.Join(s.dir, fmt.Sprintf("checkpoint-%d", s.ckpts))
	defer os.RemoveAll(tmp)
	if err := s.db.Checkpoint(tmp); err != nil {
		return nil, s.wrap("checkpoint", err)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, s.wrap("checkpoint", err)
	}
	var files []state.StoreFile
	live := map[string]string{}
	for _, e := range ents {
		name := e.Name()
		if !shared(name) {
			data, err := os.ReadFile(filepath.Join(tmp, name))
			if err != nil {
				return nil, s.wrap("checkpoint", err)
			}
			files = append(files, state.StoreFile{Name: name, Data: data})
			continue
		}
		sh, ok := s.uploaded[name]
		if !ok {
			sh = s.token + "-" + name
			if err := upload(sf, sh, filepath.Join(tmp, name)); err != nil {
				return nil, s.wrap("checkpoint", err)
			}
		}
		live[name] = sh
		files = append(files, state.StoreFile{Name: name, Shared: sh})
	}
	s.uploaded = live
	return files, nil
}

func upload(sf state.SharedFiles, name, path string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := sf.CreateShared(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

// materialize writes files into the new directory dir.
func materialize(dir string, files []state.StoreFile, sf state.SharedFiles) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if f.Shared == "" {
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				return err
			}
			continue
		}
		if err := download(sf, f.Shared, path); err != nil {
			return err
		}
	}
	return nil
}

func download(sf state.SharedFiles, name, path string) error {
	src, err := sf.OpenShared(name)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// Restore implements state.Store: the database is replaced by the
// snapshot's, whose data files count as written to shared already.
func (s *Store) Restore(files []state.StoreFile, sf state.SharedFiles) error {
	if err := s.db.Close(); err != nil {
		return s.wrap("restore", err)
	}
	s.db = nil
	dir := filepath.Join(s.dir, "db")
	if err := os.RemoveAll(dir); err != nil {
		return s.wrap("restore", err)
	}
	if err := materialize(dir, files, sf); err != nil {
		return s.wrap("restore", err)
	}
	db, err := s.open(dir, false)
	if err != nil {
		return err
	}
	s.db = db
	s.uploaded = map[string]string{}
	for _, f := range files {
		if f.Shared != "" {
			s.uploaded[f.Name] = f.Shared
		}
	}
	return nil
}

// Open implements state.Store: the snapshot's database opens read-only in
// a directory of its own under the store's.
func (s *Store) Open(files []state.StoreFile, sf state.SharedFiles) (state.StoreReader, error) {
	if err := s.res.Grow(s.cache); err != nil {
		return nil, s.wrap("open snapshot", fmt.Errorf("the block cache of %d bytes exceeds the memory budget: %w", s.cache, err))
	}
	dir, err := os.MkdirTemp(s.dir, "restore-*")
	if err != nil {
		s.res.Shrink(s.cache)
		return nil, s.wrap("open snapshot", err)
	}
	r := &reader{dir: dir, name: s.name, release: func() { s.res.Shrink(s.cache) }}
	if err := materialize(filepath.Join(dir, "db"), files, sf); err != nil {
		_ = os.RemoveAll(dir)
		r.release()
		return nil, s.wrap("open snapshot", err)
	}
	if r.db, err = s.open(filepath.Join(dir, "db"), true); err != nil {
		_ = os.RemoveAll(dir)
		r.release()
		return nil, err
	}
	return r, nil
}

// Uploaded returns the shared files the store's last checkpoint or restore
// named, in name order.
func (s *Store) Uploaded() []string {
	out := make([]string, 0, len(s.uploaded))
	for _, sh := range s.uploaded {
		out = append(out, sh)
	}
	slices.Sort(out)
	return out
}

// Close implements state.Store: it closes the database, removes its
// directory and releases the memory.
func (s *Store) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
		s.db = nil
	}
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	s.release()
	return s.wrap("close", err)
}

func (s *Store) release() {
	if s.offEnd != nil {
		s.offEnd()
	}
	_ = s.res.Release()
	if s.ownMem != nil {
		_ = s.ownMem.Close()
	}
}

// reader is an incremental snapshot's database opened read-only.
type reader struct {
	name    string
	dir     string
	db      *pebble.DB
	release func() // returns the cache's memory
}

func (r *reader) Scan(start, end []byte, f func(key, value []byte) bool) error {
	if err := scan(r.db, start, end, f); err != nil {
		return fmt.Errorf("disk: %s: scan snapshot: %w", r.name, err)
	}
	return nil
}

func (r *reader) Close() error {
	err := r.db.Close()
	if rerr := os.RemoveAll(r.dir); err == nil {
		err = rerr
	}
	r.release()
	if err != nil {
		return fmt.Errorf("disk: %s: close snapshot: %w", r.name, err)
	}
	return nil
}

// quiet is a Pebble logger that keeps Pebble's messages off the job's
// output; a fatal one panics, as Pebble's own logger exits.
type quiet struct{}

func (quiet) Infof(string, ...any)              {}
func (quiet) Errorf(string, ...any)             {}
func (quiet) Fatalf(format string, args ...any) { panic(fmt.Sprintf("pebble: "+format, args...)) }
