package dataset

import (
	"context"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

// TestHintsReachThePlan checks that WithJoinHint and WithCrossHint set the
// strategy the planner then chooses, for hints the planner would not pick on
// these sizes by itself.
func TestHintsReachThePlan(t *testing.T) {
	env := newEnv(t, config{"p3", 3, 0})
	big := FromSlice(env, make([]int64, 1000)).WithEstimate(1_000_000_000)
	small := FromSlice(env, []int64{1, 2, 3})
	Count(Join(small, big, Self[int64](), Self[int64](), func(a, b *int64) int64 { return *a }).
		WithJoinHint(BroadcastHashSecond))
	Count(Cross(small, big, func(a, b *int64) int64 { return *a }).WithCrossHint(SecondIsHuge))
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if j := nodeNamed(t, p, "Join"); j.JoinHint != BroadcastHashSecond || j.Decision.Ship[1] != optimizer.Broadcast {
		t.Errorf("join hint %s, input 1 shipped %s, want BROADCAST:\n%s", j.JoinHint, j.Decision.Ship[1], p.Text())
	}
	if c := nodeNamed(t, p, "Cross"); c.CrossHint != SecondIsHuge || c.Decision.Ship[0] != optimizer.Broadcast {
		t.Errorf("cross hint %d, input 0 shipped %s, want BROADCAST:\n%s", c.CrossHint, c.Decision.Ship[0], p.Text())
	}
}

// TestHintOnTheWrongOperator checks that a hint on an operator it does not
// apply to is a build error naming the call.
func TestHintOnTheWrongOperator(t *testing.T) {
	env := newEnv(t, config{"p1", 1, 0})
	xs := FromSlice(env, []int64{1, 2})
	Count(Map(xs, func(v int64) int64 { return v }).WithJoinHint(BroadcastHashFirst))
	Count(Join(xs, xs, Self[int64](), Self[int64](), func(a, b *int64) int64 { return *a }).WithCrossHint(SecondIsTiny))
	Count(Join(xs, xs, Self[int64](), Self[int64](), func(a, b *int64) int64 { return *a }).WithJoinHint(JoinHint(99)))
	_, err := env.Execute(context.Background())
	if err == nil {
		t.Fatal("Execute succeeded")
	}
	for _, want := range []string{"WithJoinHint at hint_test.go:38: Map at hint_test.go:38", "is not a join",
		"WithCrossHint at hint_test.go:39: Join at hint_test.go:39", "is not a cross",
		"WithJoinHint at hint_test.go:40", "join hint 99 is not one of the JoinHint constants"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
