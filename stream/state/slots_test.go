package state

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzSlotTable runs a sequence of inserts, updates, finds and removes on a
// slotTable and checks every step and the final contents against a Go map.
// Each op is 3 bytes: the kind, a key of 256 values and its hash code taken
// from few values, so that runs, collisions and wrap-around are frequent.
//
//	go test ./stream/state -run '^$' -fuzz FuzzSlotTable
func FuzzSlotTable(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 2, 1, 0, 3, 1, 2, 1, 1, 1, 3, 1})
	f.Add(binary.LittleEndian.AppendUint64(nil, 0x0102030405060708))
	seq := make([]byte, 0, 3*400)
	for i := range 400 {
		seq = append(seq, byte(i%5), byte(i*7), byte(i%3))
	}
	f.Add(seq)
	f.Fuzz(func(t *testing.T, ops []byte) {
		var tab slotTable[int64, int64]
		oracle := map[int64]int64{}
		// code is a function of the key, as a hash code is
		code := func(k int64) int32 { return int32(k % 5 * 0x3fffffff) }
		for i := 0; i+2 < len(ops); i += 3 {
			k := int64(ops[i+1])
			if ops[i+2]&1 == 1 {
				k = -k - 1
			}
			c := code(k)
			v := int64(i)
			switch ops[i] % 4 {
			case 0, 1: // insert or update
				if p := tab.find(k, c); p != nil {
					p.v = v
				} else {
					tab.insert(k, c).v = v
				}
				oracle[k] = v
			case 2: // remove
				_, ok := oracle[k]
				if got := tab.remove(k, c); got != ok {
					t.Fatalf("op %d: remove(%d) = %v, want %v", i/3, k, got, ok)
				}
				delete(oracle, k)
			case 3: // find
				p := tab.find(k, c)
				want, ok := oracle[k]
				if (p != nil) != ok || ok && p.v != want {
					t.Fatalf("op %d: find(%d) = %v, want %d, %v", i/3, k, p, want, ok)
				}
			}
			if tab.len() != len(oracle) {
				t.Fatalf("op %d: %d entries, want %d", i/3, tab.len(), len(oracle))
			}
		}
		seen := 0
		for i := range tab.slots {
			s := &tab.slots[i]
			if !s.used() {
				continue
			}
			seen++
			if want, ok := oracle[s.k]; !ok || s.c.v != want || s.c.code != slotCode(code(s.k)) {
				t.Fatalf("slot %d holds %d = %d (code %d), oracle %d, %v", i, s.k, s.c.v, s.c.code, want, ok)
			}
		}
		if seen != len(oracle) {
			t.Fatalf("%d used slots, want %d", seen, len(oracle))
		}
		for k, want := range oracle {
			if p := tab.find(k, code(k)); p == nil || p.v != want {
				t.Fatalf("find(%d) = %v, want %d", k, p, want)
			}
		}
	})
}

// TestPrefetchAndKeyCode sets keys through KeyCode, KeyGroupForHash and
// SetCurrentKeyCode after Prefetch, the keyed operators' path, and checks
// that each finds what SetCurrentKey wrote, against a map, over enough
// keys that the tables grow; a key of another backend's groups is refused
// as SetCurrentKey refuses it.
func TestPrefetchAndKeyCode(t *testing.T) {
	const maxP = 128
	b, _ := newBackend[int64](t, maxP, KeyGroupRange{Start: 0, End: 63}, 0, nil)
	st, err := GetValueState(b, ValueDescriptor[int64]{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{}
	for k := int64(0); k < 5000; k++ {
		if b.KeyGroup(k) > 63 {
			continue
		}
		b.SetCurrentKey(k)
		st.Update(k * 3)
		want[k] = k * 3
	}
	var codes, groups []int32
	var keys []int64
	for k := int64(0); k < 5000; k++ {
		if _, ok := want[k]; ok {
			c := b.KeyCode(k)
			keys, codes, groups = append(keys, k), append(codes, c), append(groups, int32(KeyGroupForHash(c, maxP)))
		}
	}
	b.Prefetch(codes, groups)
	for i, k := range keys {
		b.SetCurrentKeyCode(k, codes[i], int(groups[i]))
		got, ok := st.Value()
		if !ok || got != want[k] {
			t.Fatalf("key %d: %d, %v, want %d", k, got, ok, want[k])
		}
		st.Update(got + 1)
		b.SetCurrentKey(k)
		if got, _ := st.Value(); got != want[k]+1 {
			t.Fatalf("key %d after the update: %d, want %d", k, got, want[k]+1)
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	for k := int64(0); ; k++ {
		if g := b.KeyGroup(k); g > 63 {
			b.SetCurrentKeyCode(k, b.KeyCode(k), g)
			break
		}
	}
	st.Update(1)
	if !errors.Is(b.Err(), ErrNoKey) {
		t.Fatalf("a key of group outside the backend: Err %v, want ErrNoKey", b.Err())
	}
}
