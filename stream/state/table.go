package state

import (
	"fmt"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// Void is the namespace of public keyed state; windows use their window.
type Void struct{}

// Kind is a kind of keyed state, as Flink names them.
type Kind uint8

// The kinds of state. Timers are snapshotted as a kind of their own.
const (
	KindValue Kind = iota + 1
	KindList
	KindMap
	KindReducing
	KindAggregating
	kindTimers
)

func (k Kind) String() string {
	switch k {
	case KindValue:
		return "ValueState"
	case KindList:
		return "ListState"
	case KindMap:
		return "MapState"
	case KindReducing:
		return "ReducingState"
	case KindAggregating:
		return "AggregatingState"
	case kindTimers:
		return "timers"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// registered is what the backend knows of a state or a timer service: its
// name and kind, and how to write, read and drop one key group.
type registered interface {
	stateName() string
	kind() Kind
	// write appends the entries of group index idx that are not expired at
	// now to dst and returns it with their count.
	write(dst []byte, idx int, now int64) ([]byte, int)
	// read adds n entries from src to group index idx.
	read(src []byte, idx, n int) error
	drop()
	// freeze returns the containers for a capture (the heap backend's).
	freeze() frozen
}

// nsKey is the key of a state table: Flink's (key, namespace). The
// namespace comes first so that the Void namespace adds no padding: a key of
// one word hashes as a word.
type nsKey[K, N comparable] struct {
	n N
	k K
}

// table holds one state's entries, a map per key group, so that a snapshot or
// a rescale moves whole groups (Flink's CopyOnWriteStateTable layout). vers
// are the groups' copy-on-write versions (cow).
type table[K, N comparable, S any] struct {
	groups []map[nsKey[K, N]]S
	vers   []uint64
}

func newTable[K, N comparable, S any](n int) table[K, N, S] {
	return table[K, N, S]{groups: make([]map[nsKey[K, N]]S, n), vers: make([]uint64, n)}
}

// of returns group idx's map, creating it.
func (t *table[K, N, S]) of(idx int) map[nsKey[K, N]]S {
	m := t.groups[idx]
	if m == nil {
		m = map[nsKey[K, N]]S{}
		t.groups[idx] = m
	}
	return m
}

// entryOverhead estimates a Go map's bytes per entry beyond key and value.
const entryOverhead = 16

// sizer estimates the bytes a value holds: its size, plus for types with
// pointers the length of its Codec form (what the pointers reach).
type sizer[T any] struct {
	codec *memory.Codec[T]
	fixed int64
	flat  bool
	mig   migration[T] // reads a restore's values of an older schema
}

func newSizer[T any](what string) (sizer[T], error) {
	c, err := memory.NewCodec[T]()
	if err != nil {
		return sizer[T]{}, fmt.Errorf("state: %s: %w", what, err)
	}
	var zero T
	return sizer[T]{codec: c, fixed: int64(unsafe.Sizeof(zero)), flat: c.Flat()}, nil
}

// extra returns the bytes v reaches through pointers, using *scratch.
func (s *sizer[T]) extra(v *T, scratch *[]byte) int64 {
	if s.flat {
		return 0
	}
	*scratch = s.codec.Append((*scratch)[:0], v)
	return int64(len(*scratch))
}

// base is what every kind of state shares: the backend, the name, the current
// namespace, the TTL and the codecs of key and namespace.
type base[K, N comparable] struct {
	b     *Backend[K]
	name  string
	what  string // "ValueState \"name\"" for errors
	ns    N
	ttl   ttl
	key   sizer[K]
	space sizer[N]
	fixed int64 // bytes of a table entry without pointers reached

	// a disk backend's: the state's id in the store and key and value
	// buffers
	id   uint16
	kbuf []byte
	vbuf []byte
}

func newBase[K, N comparable](b *Backend[K], name string, k Kind, cfg TTLConfig, entry int64) (base[K, N], error) {
	s := base[K, N]{b: b, name: name, what: fmt.Sprintf("%s %q", k, name), ttl: newTTL(cfg)}
	if name == "" {
		return s, fmt.Errorf("state: %s: a %s needs a name", b.name, k)
	}
	var err error
	if s.key, err = newSizer[K]("key of " + s.what); err != nil {
		return s, err
	}
	if s.space, err = newSizer[N]("namespace of " + s.what); err != nil {
		return s, err
	}
	s.fixed = entryOverhead + int64(unsafe.Sizeof(nsKey[K, N]{})) + entry
	if b.store != nil {
		if s.id, err = b.storeID(name, k); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (s *base[K, N]) stateName() string { return s.name }

// SetNamespace sets the namespace later accesses refer to (windows set their
// window; public state keeps Void).
func (s *base[K, N]) SetNamespace(n N) { s.ns = n }

// Namespace returns the current namespace.
func (s *base[K, N]) Namespace() N { return s.ns }

// cur returns the table key of the current key and namespace and the group
// index, or -1.
func (s *base[K, N]) cur() (nsKey[K, N], int) {
	return nsKey[K, N]{k: s.b.key, n: s.ns}, s.b.at()
}

// keyBytes is the estimate of a table entry without its value's pointers.
func (s *base[K, N]) keyBytes(k *nsKey[K, N]) int64 {
	n := s.fixed
	if !s.key.flat {
		n += s.key.extra(&k.k, &s.b.scratch)
	}
	if !s.space.flat {
		n += s.space.extra(&k.n, &s.b.scratch)
	}
	return n
}

// appendKey writes an entry's key and namespace for a snapshot.
func (s *base[K, N]) appendKey(dst []byte, k *nsKey[K, N]) []byte {
	dst = s.key.codec.Append(dst, &k.k)
	return s.space.codec.Append(dst, &k.n)
}

// readKey decodes an entry's key and namespace, and checks that the key
// belongs to group index idx.
func (s *base[K, N]) readKey(d *dec, k *nsKey[K, N], idx int) {
	decodeInto(d, s.key.codec, &k.k)
	decodeInto(d, s.space.codec, &k.n)
	if g := s.b.groups.Start + idx; d.Err == nil && s.b.KeyGroup(k.k) != g {
		d.Fail("a key of key group %d in key group %d", s.b.KeyGroup(k.k), g)
	}
}

// lookup returns the registered state of that name as T, or an error when it
// has another kind or type.
func lookup[T any, K comparable](b *Backend[K], name string) (T, bool, error) {
	var zero T
	r, ok := b.states[name]
	if !ok {
		return zero, false, nil
	}
	t, ok := r.(T)
	if !ok {
		return zero, false, fmt.Errorf("state: %s: state %q is a %s of other types than the %T asked for", b.name, name, r.kind(), zero)
	}
	return t, true, nil
}

func errNoFunc(backend string, k Kind, name string) error {
	return fmt.Errorf("state: %s: %s %q needs its function", backend, k, name)
}

// keysIn returns the keys with an entry in namespace ns, in key-group order.
func keysIn[K, N comparable, S any](t *table[K, N, S], ns N) []K {
	var out []K
	for _, m := range t.groups {
		for k := range m {
			if k.n == ns {
				out = append(out, k.k)
			}
		}
	}
	return out
}

// dkey appends the store key of key k in namespace ns of group: the state's
// prefix, then k and ns in their memory.Codec form.
func (s *base[K, N]) dkey(dst []byte, group int, k *K, ns *N) []byte {
	dst = appendPrefix(dst, s.id, group)
	dst = s.key.codec.Append(dst, k)
	return s.space.codec.Append(dst, ns)
}

// curKey sets s.kbuf to the store key of the current key in ns and returns
// false without a current key.
func (s *base[K, N]) curKey(ns N) bool {
	if s.b.at() < 0 {
		return false
	}
	s.kbuf = s.dkey(s.kbuf[:0], s.b.group, &s.b.key, &ns)
	return true
}

// decodeKeyNS decodes the key and namespace of a store key.
func (s *base[K, N]) decodeKeyNS(key []byte, k *nsKey[K, N]) ([]byte, error) {
	d := newDec(key[4:])
	decodeInto(&d, s.key.codec, &k.k)
	decodeInto(&d, s.space.codec, &k.n)
	return d.B, d.Err
}

// groupRange returns the store keys of group g of the state: [start, end).
func (s *base[K, N]) groupRange(g int) ([]byte, []byte) {
	start := appendPrefix(nil, s.id, g)
	return start, prefixEnd(start)
}

// storeKeysIn returns the keys with an entry in namespace ns in the store,
// in key-group order, each once.
func (s *base[K, N]) storeKeysIn(ns N) []K {
	var out []K
	var last []byte
	for g := s.b.groups.Start; g <= s.b.groups.End; g++ {
		start, end := s.groupRange(g)
		err := s.b.store.Scan(start, end, func(key, _ []byte) bool {
			var k nsKey[K, N]
			rest, err := s.decodeKeyNS(key, &k)
			if err != nil {
				s.b.storeErr(fmt.Errorf("%w: %s: %v", ErrCorruptSnapshot, s.what, err))
				return false
			}
			kns := key[:len(key)-len(rest)]
			if k.n == ns && string(kns) != string(last) {
				out = append(out, k.k)
				last = append(last[:0], kns...)
			}
			return true
		})
		s.b.storeErr(err)
	}
	return out
}
