package state

import (
	"encoding/binary"
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
			if !s.used {
				continue
			}
			seen++
			if want, ok := oracle[s.k]; !ok || s.c.v != want || s.code != code(s.k) {
				t.Fatalf("slot %d holds %d = %d (code %d), oracle %d, %v", i, s.k, s.c.v, s.code, want, ok)
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
