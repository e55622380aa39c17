package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
)

// Word count: split lines into words, count each word, print the counts in
// word order.
func Example() {
	env := dataset.New(dataset.Options{Parallelism: 2})
	lines := dataset.FromSlice(env, []string{"to be or not to be", "that is the question"})
	words := dataset.FlatMap(lines, func(line string, emit func(string)) {
		for _, w := range strings.Fields(line) {
			emit(w)
		}
	})
	counts := dataset.Aggregate(dataset.GroupBy(words, func(w string) string { return w }),
		agg.Count[string]())
	sorted := dataset.Sort(counts, func(kv dataset.KV[string, int64]) string { return kv.Key }, dataset.Ascending)
	result := dataset.Collect(sorted)
	if _, err := env.Execute(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	for _, kv := range result.Values() {
		fmt.Println(kv.Key, kv.Value)
	}
	// Output:
	// be 2
	// is 1
	// not 1
	// or 1
	// question 1
	// that 1
	// the 1
	// to 2
}

// A join of orders with customers, keeping orders without a customer.
func ExampleLeftOuterJoin() {
	type order struct {
		ID, Customer int64
	}
	type customer struct {
		ID   int64
		Name string
	}
	env := dataset.New(dataset.Options{Parallelism: 2})
	orders := dataset.FromSlice(env, []order{{1, 10}, {2, 20}, {3, 10}})
	customers := dataset.FromSlice(env, []customer{{10, "ada"}})
	joined := dataset.LeftOuterJoin(orders, customers,
		func(o order) int64 { return o.Customer }, func(c customer) int64 { return c.ID },
		func(o *order, c *customer) string {
			if c == nil {
				return fmt.Sprintf("order %d: no customer", o.ID)
			}
			return fmt.Sprintf("order %d: %s", o.ID, c.Name)
		})
	result := dataset.Collect(dataset.Sort(joined, func(s string) string { return s }, dataset.Ascending))
	if _, err := env.Execute(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range result.Values() {
		fmt.Println(s)
	}
	// Output:
	// order 1: ada
	// order 2: no customer
	// order 3: ada
}

// A map whose function may fail: the job fails with the function's error.
func ExampleMapErr() {
	env := dataset.New(dataset.Options{Parallelism: 1})
	texts := dataset.FromSlice(env, []string{"1", "2", "x"})
	nums := dataset.MapErr(texts, func(s string) (int, error) { return strconv.Atoi(s) })
	dataset.Collect(nums)
	_, err := env.Execute(context.Background())
	var numErr *strconv.NumError
	fmt.Println(errors.As(err, &numErr), numErr.Num)
	// Output:
	// true x
}
