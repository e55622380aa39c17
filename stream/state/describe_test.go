package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestDescribeKeyedSnapshot: the sections of a keyed snapshot, per key
// group in order and per state by name, count the keys that hold each
// state in that group; the oracle groups the keys with Backend.KeyGroup.
func TestDescribeKeyedSnapshot(t *testing.T) {
	b, err := NewBackend[string](Options{Name: "op", MaxParallelism: 8, Groups: KeyGroupRange{Start: 0, End: 7}})
	if err != nil {
		t.Fatal(err)
	}
	count, err := GetValueState(b, ValueDescriptor[int64]{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	events, err := GetListState(b, ListDescriptor[string]{Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int]int{} // (group, 0 count / 1 events) -> keys
	for i := range 30 {
		k := fmt.Sprintf("key-%d", i)
		b.SetCurrentKey(k)
		count.Update(int64(i))
		want[[2]int{b.KeyGroup(k), 0}]++
		if i%3 == 0 {
			events.AddAll([]string{"a", "b"})
			want[[2]int{b.KeyGroup(k), 1}]++
		}
	}
	var buf bytes.Buffer
	if err := b.Snapshot(&buf, KeyGroupRange{Start: 0, End: 7}); err != nil {
		t.Fatal(err)
	}
	info, err := DescribeSnapshot(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if info.Operator || info.MaxParallelism != 8 {
		t.Fatalf("info %+v", info)
	}
	var wantSecs []SectionInfo
	for g := range 8 {
		for s, name := range []string{"count", "events"} {
			if n := want[[2]int{g, s}]; n > 0 {
				kind := []string{"ValueState", "ListState"}[s]
				wantSecs = append(wantSecs, SectionInfo{Name: name, Kind: kind, KeyGroup: g, Entries: n})
			}
		}
	}
	got := info.Sections
	for i := range got {
		if got[i].Bytes <= 0 {
			t.Fatalf("section %+v without bytes", got[i])
		}
		got[i].Bytes = 0
	}
	if !reflect.DeepEqual(got, wantSecs) {
		t.Fatalf("sections\n%+v\nwant\n%+v", got, wantSecs)
	}
	wantSchemas := []SchemaInfo{
		{Name: "count", Kind: "ValueState", Key: "string", Namespace: "struct { }", Value: "int64"},
		{Name: "events", Kind: "ListState", Key: "string", Namespace: "struct { }", Value: "string"},
	}
	if !reflect.DeepEqual(info.Schemas, wantSchemas) {
		t.Fatalf("schemas\n%+v\nwant\n%+v", info.Schemas, wantSchemas)
	}
	for i := range buf.Len() {
		c := bytes.Clone(buf.Bytes())
		c[i] ^= 0x10
		if _, err := DescribeSnapshot(c); err == nil {
			t.Fatalf("byte %d flipped: described", i)
		}
	}
}

func TestDescribeOperatorSnapshot(t *testing.T) {
	s := NewOperatorStore(OperatorOptions{Name: "op"})
	split, err := GetOperatorListState(s, ListDescriptor[string]{Name: "offsets"})
	if err != nil {
		t.Fatal(err)
	}
	union, err := GetUnionListState(s, ListDescriptor[string]{Name: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	split.AddAll([]string{"x", "y", "z"})
	union.Add("w")
	var buf bytes.Buffer
	if err := s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	info, err := DescribeSnapshot(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := &SnapshotInfo{Operator: true, Sections: []SectionInfo{
		{Name: "offsets", Kind: "split-distribute list state", KeyGroup: -1, Entries: 3, Bytes: info.Sections[0].Bytes},
		{Name: "writer", Kind: "union list state", KeyGroup: -1, Entries: 1, Bytes: info.Sections[1].Bytes},
	}, Schemas: []SchemaInfo{
		{Name: "offsets", Kind: "split-distribute list state", Value: "string"},
		{Name: "writer", Kind: "union list state", Value: "string"},
	}}
	if !reflect.DeepEqual(info, want) || info.Sections[0].Bytes < 3 || info.Sections[1].Bytes < 1 {
		t.Fatalf("info %+v, want %+v", info, want)
	}
	if empty, err := DescribeSnapshot(nil); err != nil || len(empty.Sections) != 0 {
		t.Fatalf("empty: %+v, %v", empty, err)
	}
	if _, err := DescribeSnapshot([]byte("not a snapshot")); !errors.Is(err, ErrCorruptSnapshot) {
		t.Fatalf("garbage: %v", err)
	}
}
