package state

// slotTable is one key group's cells of a single-value state in the Void
// namespace: an open-addressing table with linear probing that keeps each
// cell inline next to its key, so that finding a key's value reads one
// place. It is hashed by the key's hash code (the code that picks the key
// group, Flink's key.hashCode(), as Flink's CopyOnWriteStateTable), spread
// by a Fibonacci multiply; each slot keeps its code, so that growing and
// deleting need no rehash. A pointer to a cell is valid until the next
// insert or delete. ver is the slots' copy-on-write version (cow): a
// capture keeps the slots, and a write copies them first.
type slotTable[T comparable, V any] struct {
	slots []slot[T, V] // a power of two long, or nil when empty
	n     int
	shift uint   // 64 - log2(len(slots))
	ver   uint64 // the slots' copy-on-write version
}

// slot is an entry: the key, then the cell, which ends with the slot's code
// (0 when the slot is free). Without padding, a slot of a 24-byte key and a
// 24-byte value is one cache line of 64 bytes.
type slot[T comparable, V any] struct {
	k T
	c cell[V]
}

// used reports whether the slot holds an entry.
func (s *slot[T, V]) used() bool { return s.c.code != 0 }

// slotCode is the code a table keeps for code: never 0, the free slot's.
func slotCode(code int32) int32 { return code | 1 }

// minSlots is the length of a table's first slots.
const minSlots = 8

// home returns the slot where the probe for code starts.
func (t *slotTable[T, V]) home(code int32) int {
	return int(uint64(uint32(slotCode(code))) * 0x9e3779b97f4a7c15 >> t.shift)
}

// find returns k's cell, or nil.
func (t *slotTable[T, V]) find(k T, code int32) *cell[V] {
	if t.n == 0 {
		return nil
	}
	code = slotCode(code)
	mask := len(t.slots) - 1
	for i := t.home(code); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.c.code == 0 {
			return nil
		}
		if s.c.code == code && s.k == k {
			return &s.c
		}
	}
}

// insert adds k, which the table does not hold, and returns its zero cell.
func (t *slotTable[T, V]) insert(k T, code int32) *cell[V] {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.n++
	mask := len(t.slots) - 1
	i := t.home(code)
	for t.slots[i].used() {
		i = (i + 1) & mask
	}
	s := &t.slots[i]
	s.k, s.c.code = k, slotCode(code)
	return &s.c
}

// grow doubles the slots (or makes the first ones) and moves every entry.
func (t *slotTable[T, V]) grow() {
	old := t.slots
	size := max(minSlots, 2*len(old))
	t.slots = make([]slot[T, V], size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	mask := size - 1
	for j := range old {
		if !old[j].used() {
			continue
		}
		i := t.home(old[j].c.code)
		for t.slots[i].used() {
			i = (i + 1) & mask
		}
		t.slots[i] = old[j]
	}
}

// remove deletes k and reports whether the table held it. The entries after
// it in its run move back over the gap (backward-shift deletion), so that no
// probe stops early.
func (t *slotTable[T, V]) remove(k T, code int32) bool {
	if t.n == 0 {
		return false
	}
	code = slotCode(code)
	mask := len(t.slots) - 1
	i := t.home(code)
	for {
		s := &t.slots[i]
		if !s.used() {
			return false
		}
		if s.c.code == code && s.k == k {
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; t.slots[j].used(); j = (j + 1) & mask {
		// the entry at j may fill the gap at i unless its home lies
		// cyclically in (i, j]
		if h := t.home(t.slots[j].c.code); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot[T, V]{}
	return true
}

// prefetcher is a state that can read ahead where keys' entries are.
type prefetcher interface {
	slotted() bool
	// prefetch reads a byte of the slot where the probe for each code
	// starts and returns their sum (Backend.Prefetch).
	prefetch(codes, groups []int32, start int) uint8
}

// len returns the number of entries.
func (t *slotTable[T, V]) len() int { return t.n }
