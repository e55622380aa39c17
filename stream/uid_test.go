package stream

import (
	"context"
	"strings"
	"testing"
)

// TestUIDCollision: two operators with one uid fail the build with Flink's
// message (StreamGraphHasherV2).
func TestUIDCollision(t *testing.T) {
	env := New(Options{Parallelism: 1})
	a := FromSlice(env, []int{1}).UID("src")
	Collect(Map(a, func(v int) int { return v }).UID("src"))
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), `Hash collision on user-specified ID "src". Most likely cause is a non-unique ID.`) {
		t.Fatalf("err = %v", err)
	}
}

// TestOperatorIDs: derived ids follow the graph's structure, not names;
// a uid decides the id alone.
func TestOperatorIDs(t *testing.T) {
	build := func(name, uid string, extra bool) []string {
		env := New(Options{Parallelism: 1})
		src := FromSlice(env, []int{1, 2})
		if extra {
			Collect(FromSlice(env, []int{3}))
		}
		m := Map(src, func(v int) int { return v }).Name(name)
		if uid != "" {
			m = m.UID(uid)
		}
		Collect(m)
		ids := env.operatorIDs()
		var out []string
		for _, n := range env.nodes {
			out = append(out, ids[n])
		}
		return out
	}
	a, b := build("a", "", false), build("b", "", false)
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
	if c := build("a", "", true); c[len(c)-2] == a[1] {
		t.Fatalf("a node added before the map kept its derived id")
	}
	u1, u2 := build("a", "m", false), build("b", "m", true)
	if u1[1] != u2[len(u2)-2] {
		t.Fatalf("the uid's id moved: %v vs %v", u1, u2)
	}
}
