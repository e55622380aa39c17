package stream_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
)

// Async I/O: each user is looked up in a service whose client answers on
// its own goroutines (here a map behind a goroutine per call); up to 10
// lookups are in flight, each has 1 second, and the results come out in
// the order of the input.
func ExampleOrderedWait() {
	names := map[int]string{1: "ada", 2: "grace", 3: "edsger"}
	lookup := func(ctx context.Context, id int, done func(string, error)) {
		go func() {
			if n, ok := names[id]; ok {
				done(n, nil)
				return
			}
			done("", fmt.Errorf("user %d: not found", id))
		}()
	}
	env := stream.New(stream.Options{Parallelism: 1})
	ids := stream.FromSlice(env, []int{3, 1, 2, 4})
	users := stream.OrderedWait(ids, func() stream.AsyncFunction[int, string] {
		return stream.AsyncFunction[int, string]{
			AsyncInvoke: func(ctx context.Context, id int, rf stream.ResultFuture[string]) {
				lookup(ctx, id, func(name string, err error) {
					if err != nil {
						rf.Complete(nil) // an unknown user gives no result
						return
					}
					rf.Complete([]string{strings.ToUpper(name)})
				})
			},
		}
	}, time.Second, 10)
	stream.Print(users)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// EDSGER
	// ADA
	// GRACE
}
