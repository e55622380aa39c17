package stream

import (
	"context"
	"strings"
	"testing"
)

// TestUIDCollision: two operators with one uid fail the build, naming
// both.
func TestUIDCollision(t *testing.T) {
	env := New(Options{Parallelism: 1})
	a := FromSlice(env, []int{1}).UID("src")
	Collect(Map(a, func(v int) int { return v }).UID("src"))
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), `Map: the uid "src" is taken by FromSlice already`) {
		t.Fatalf("err = %v", err)
	}
}

// TestOperatorIDs: derived ids follow the operators' kinds and lineage,
// not names or positions: an operator added on another path keeps every
// id, one inserted upstream changes the ids downstream of it; a uid decides
// the id alone.
func TestOperatorIDs(t *testing.T) {
	build := func(name, uid string, extra, filter bool) []string {
		env := New(Options{Parallelism: 1})
		if extra {
			Collect(Map(FromSlice(env, []string{"x"}), func(s string) string { return s }))
		}
		src := FromSlice(env, []int{1, 2})
		if filter {
			src = src.Filter(func(int) bool { return true })
		}
		m := Map(src, func(v int) int { return v }).Name(name)
		if uid != "" {
			m = m.UID(uid)
		}
		Collect(m)
		ids := env.operatorIDs()
		var out []string
		for _, n := range env.nodes() {
			out = append(out, ids[n])
		}
		return out
	}
	mapID := func(ids []string) string { return ids[len(ids)-2] }
	a, b := build("a", "", false, false), build("b", "", false, false)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("renaming changed the ids: %v vs %v", a, b)
	}
	seen := map[string]bool{}
	for _, id := range a {
		if seen[id] || len(id) != 32 {
			t.Fatalf("ids %v: duplicate or malformed", a)
		}
		seen[id] = true
	}
	if c := build("a", "", true, false); mapID(c) != mapID(a) || c[len(c)-3] != a[0] {
		t.Fatalf("operators added on another path moved the ids: %v vs %v", c, a)
	}
	if c := build("a", "", false, true); mapID(c) == mapID(a) || c[0] != a[0] {
		t.Fatalf("a filter inserted before the map kept its id, or moved the source's: %v vs %v", c, a)
	}
	u1, u2 := build("a", "m", false, false), build("b", "m", true, true)
	if mapID(u1) != mapID(u2) {
		t.Fatalf("the uid's id moved: %v vs %v", u1, u2)
	}
}
