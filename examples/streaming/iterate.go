package streaming

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// IterateBound is IterateExample's BOUND: a pair iterates until one of its
// two latest Fibonacci numbers reaches it.
const IterateBound = 100

// IteratePairs is Flink's IterateExampleData.INPUT_PAIRS, the pairs
// RunIterate reads without an input.
var IteratePairs = []string{
	"(1,40)", "(29,38)", "(11,15)", "(17,39)", "(24,41)", "(7,33)", "(20,2)", "(11,5)", "(3,16)",
	"(23,36)", "(15,23)", "(28,13)", "(1,1)", "(10,6)", "(21,5)", "(14,36)", "(17,15)", "(7,9)",
}

// Pair is a Tuple2<Integer, Integer>, printed "(a,b)".
type Pair struct{ A, B int32 }

// IterateResult is IterateExample's output, a
// Tuple2<Tuple2<Integer, Integer>, Integer>: the input pair and the number
// of steps, printed "((a,b),n)".
type IterateResult struct {
	Pair  Pair
	Steps int32
}

// fib is IterateExample's Tuple5: the input pair, the two latest
// Fibonacci numbers and the step counter.
type fib struct{ A, B, X, Y, N int32 }

// IterateParams are the input and output of RunIterate.
type IterateParams struct {
	// Input is a text file (or a directory or glob) of "(a,b)" lines; ""
	// reads IteratePairs.
	Input string
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
	// MaxWait is the iteration's wait for feedback once the input ended
	// (IterateExample's 5 s when zero).
	MaxWait time.Duration
}

// RunIterate is Flink's IterateExample: every pair (a,b) starts the
// Fibonacci-like sequence a, b, a+b, ... in a stream iteration, one step
// per trip around the loop, until a number reaches IterateBound; it
// prints each pair with its number of steps.
func RunIterate(ctx context.Context, o Options, p IterateParams) error {
	env := o.newEnv()
	var pairs stream.DataStream[Pair]
	if p.Input != "" {
		src, err := source.Files(source.Text(), p.Input)
		if err != nil {
			return fmt.Errorf("examples/streaming: iterate: input %s: %w", p.Input, err)
		}
		pairs = stream.FromSource(env, source.Parse(src, ParsePair), watermark.NoWatermarks[Pair](), "file-input")
	} else {
		in := make([]Pair, len(IteratePairs))
		for i, l := range IteratePairs {
			var err error
			if in[i], err = ParsePair(l); err != nil {
				return fmt.Errorf("examples/streaming: iterate: %w", err)
			}
		}
		pairs = stream.FromSlice(env, in)
	}
	wait := p.MaxWait
	if wait == 0 {
		wait = 5 * time.Second
	}
	results := IterateProgram(pairs, wait)
	if p.Output != "" {
		str := sink.ToString[IterateResult]()
		stream.SinkTo(results, sink.Rows(p.Output, func(dst []byte, v IterateResult) []byte { return append(str(dst, v), '\n') }))
	} else {
		stream.PrintTo(results, o.Stdout, "")
	}
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: iterate: %w", err)
	}
	return nil
}

// ParsePair reads IterateExample's input line "(a,b)" as its
// FibonacciInputMap does.
func ParsePair(line string) (Pair, error) {
	if len(line) < 2 || line[0] != '(' || line[len(line)-1] != ')' {
		return Pair{}, fmt.Errorf("line %q is not (a,b)", line)
	}
	a, b, ok := strings.Cut(line[1:len(line)-1], ",")
	x, err1 := strconv.ParseInt(a, 10, 32)
	y, err2 := strconv.ParseInt(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || strings.Contains(b, ",") {
		return Pair{}, fmt.Errorf("line %q is not (a,b) of integers", line)
	}
	return Pair{A: int32(x), B: int32(y)}, nil
}

// IterateProgram is IterateExample's loop: InputMap, then the iteration
// whose step computes the next number and either feeds the tuple back (the
// "iterate" side output, while both new numbers are below IterateBound)
// or emits it; OutputMap gives the pair and the step count.
func IterateProgram(pairs stream.DataStream[Pair], maxWait time.Duration) stream.DataStream[IterateResult] {
	tuples := stream.Map(pairs, func(p Pair) fib { return fib{A: p.A, B: p.B, X: p.A, Y: p.B} })
	it := stream.Iterate(tuples, maxWait)
	iterateTag := stream.NewOutputTag[fib]("iterate")
	step := stream.Process(it.DataStream, func() stream.ProcessFunction[fib, fib] {
		return stream.ProcessFunction[fib, fib]{
			ProcessElement: func(v fib, ctx *stream.Context, out stream.Collector[fib]) error {
				next := fib{A: v.A, B: v.B, X: v.Y, Y: v.X + v.Y, N: v.N + 1}
				if next.X < IterateBound && next.Y < IterateBound {
					stream.Output(ctx, iterateTag, next)
				} else {
					out.Collect(next)
				}
				return nil
			},
		}
	})
	it.CloseWith(stream.GetSideOutput(step, iterateTag))
	return stream.Map(step, func(v fib) IterateResult { return IterateResult{Pair: Pair{A: v.A, B: v.B}, Steps: v.N} })
}
