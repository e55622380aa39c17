package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// Bucket is an object store a Dir keeps its snapshots in (OpenBucket): S3
// or any store with its guarantees. Keys are '/'-separated paths.
//
// A Bucket must give S3's guarantees since 2020: a Put is atomic (a reader
// sees the whole object or none), and reads and lists after a Put or a
// Delete see it (strong read-after-write consistency).
type Bucket interface {
	// Put stores the size bytes of r under key, replacing what was there.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Get opens the object at key. A missing key is an error wrapping
	// fs.ErrNotExist.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Size returns the length of the object at key. A missing key is an
	// error wrapping fs.ErrNotExist.
	Size(ctx context.Context, key string) (int64, error)
	// List returns every key that starts with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes the object at key; a missing key is no error.
	Delete(ctx context.Context, key string) error
	// String names the bucket in messages, as a URL without a path
	// ("s3://bucket").
	String() string
}

// MemBucket is a Bucket in memory, for tests.
type MemBucket struct {
	mu   sync.Mutex
	objs map[string][]byte
	// Fail, if set, is asked before each operation ("put", "get", "size",
	// "list", "delete") with its key; an error it returns fails the
	// operation.
	Fail func(op, key string) error
}

// NewMemBucket returns an empty MemBucket.
func NewMemBucket() *MemBucket { return &MemBucket{objs: map[string][]byte{}} }

func (b *MemBucket) fail(op, key string) error {
	if b.Fail == nil {
		return nil
	}
	return b.Fail(op, key)
}

// Put stores r's bytes under key.
func (b *MemBucket) Put(_ context.Context, key string, r io.Reader, size int64) error {
	if err := b.fail("put", key); err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if int64(len(data)) != size {
		return fmt.Errorf("mem bucket: put %s: %d bytes, want %d", key, len(data), size)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = data
	return nil
}

// Get opens the object at key.
func (b *MemBucket) Get(_ context.Context, key string) (io.ReadCloser, error) {
	if err := b.fail("get", key); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.objs[key]
	if !ok {
		return nil, fmt.Errorf("mem bucket: %s: %w", key, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// Size returns the length of the object at key.
func (b *MemBucket) Size(_ context.Context, key string) (int64, error) {
	if err := b.fail("size", key); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.objs[key]
	if !ok {
		return 0, fmt.Errorf("mem bucket: %s: %w", key, fs.ErrNotExist)
	}
	return int64(len(data)), nil
}

// List returns the keys starting with prefix, sorted.
func (b *MemBucket) List(_ context.Context, prefix string) ([]string, error) {
	if err := b.fail("list", prefix); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []string
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Delete removes the object at key.
func (b *MemBucket) Delete(_ context.Context, key string) error {
	if err := b.fail("delete", key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	return nil
}

// String names the bucket.
func (b *MemBucket) String() string { return "mem://bucket" }

// Set replaces the object at key, as a fault would (tests).
func (b *MemBucket) Set(key string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = data
}

// errRename is what a bucket's file system says to a rename: a Dir on a
// bucket never renames (a Put is atomic already).
var errRename = errors.New("checkpoint: an object store cannot rename")
