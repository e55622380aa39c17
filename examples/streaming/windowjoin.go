package streaming

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// NameValue is one element of a WindowJoin input, Flink's
// Tuple2<String, Integer> (name, grade) or (name, salary).
type NameValue struct {
	Name  string
	Value int32
}

// GradeSalary is one result of WindowJoin, Flink's
// Tuple3<String, Integer, Integer> (name, grade, salary), printed
// "(name,grade,salary)".
type GradeSalary struct {
	Name   string
	Grade  int32
	Salary int32
}

// WindowJoinNames are the names of Flink's WindowJoinSampleData.
var WindowJoinNames = []string{"tom", "jerry", "alice", "bob", "john", "grace"}

// The value ranges of WindowJoinSampleData: grades in [1, 5], salaries in
// [1, 10000].
const (
	WindowJoinGradeMax  = 5
	WindowJoinSalaryMax = 10000
)

// WindowJoinParams configure RunWindowJoin.
type WindowJoinParams struct {
	// WindowSize is the size of the tumbling event-time windows (Flink's
	// --windowSize, 2000 ms by default); whole milliseconds.
	WindowSize time.Duration
	// Rate is the elements per second each input releases (Flink's
	// --rate, 3 by default); it must be positive.
	Rate float64
	// Events bounds each input; zero or less makes them unbounded, as
	// Flink's generators are.
	Events int64
	// Seed seeds the grades generator; the salaries generator draws from
	// Seed + 1.
	Seed int64
	// Grades and Salaries, when set (both), are the inputs instead of the
	// generators: files of lines "time,name,value" (CSV without a header),
	// time in milliseconds, each file read in order as one stream.
	Grades, Salaries string
	// Output is a directory to write part files to; "" prints to
	// Options.Stdout.
	Output string
}

// WindowJoinSample returns a generator of Flink's WindowJoinSampleData: the
// element of every index is (a name of WindowJoinNames, a value in [1,
// maxValue]), drawn from java.util.Random with seed in index order.
func WindowJoinSample(seed int64, maxValue int32) func(index int64) NameValue {
	var mu sync.Mutex
	rnd := newJavaRandom(seed)
	return func(int64) NameValue {
		mu.Lock()
		defer mu.Unlock()
		name := WindowJoinNames[rnd.nextInt(int32(len(WindowJoinNames)))]
		return NameValue{Name: name, Value: rnd.nextInt(maxValue) + 1}
	}
}

// WindowJoinTimestamp is the event time of an input's element index at
// rate elements per second: the time it is due, index * 1000 / rate
// milliseconds.
func WindowJoinTimestamp(index int64, rate float64) int64 {
	return int64(float64(index) * 1000 / rate)
}

// RunWindowJoin is Flink's WindowJoin: a grades and a salaries stream
// (sources of parallelism 1) joined on the name in tumbling event-time
// windows of WindowSize; every pair of a grade and a salary of one name in
// one window gives (name,grade,salary). The streams are two generators each
// releasing Rate elements per second, or the files Grades and Salaries.
//
// A generated element is stamped with the time it is due
// (WindowJoinTimestamp) where Flink stamps the wall clock, so that the
// result depends on the parameters alone. A file's element carries the time
// in its first field; its name is the second field as it is (Flink's parser
// does not trim it) and its value the third. Either way the watermark of a
// stream is its largest timestamp - 1: the elements of each stream should
// come in time order, and one behind its stream's watermark is late and
// dropped, as in Flink. A malformed line, or a time whose window would reach
// past the int64 range, is an error naming the file, the line and the
// column.
func RunWindowJoin(ctx context.Context, o Options, p WindowJoinParams) error {
	if p.WindowSize <= 0 || p.WindowSize%time.Millisecond != 0 {
		return errors.New("examples/streaming: window join: the window size must be positive whole milliseconds")
	}
	assigner := window.TumblingEventTimeWindows(p.WindowSize)
	err := assigner.Err()
	if err != nil {
		return fmt.Errorf("examples/streaming: window join: %w", err)
	}
	env := o.newEnv()
	var grades, salaries stream.DataStream[NameValue]
	switch {
	case p.Grades != "" && p.Salaries != "":
		lo, hi := timeRange(assigner)
		spec := fmt.Sprintf("tumbling:%v", p.WindowSize)
		for _, in := range []struct {
			path string
			ds   *stream.DataStream[NameValue]
			name string
		}{{p.Grades, &grades, "grades"}, {p.Salaries, &salaries, "salaries"}} {
			if *in.ds, err = joinInput(env, in.path, in.name, lo, hi, spec); err != nil {
				return fmt.Errorf("examples/streaming: window join: %w", err)
			}
		}
	case p.Grades != "" || p.Salaries != "":
		return errors.New("examples/streaming: window join: give both the grades and the salaries file, or neither")
	default:
		if !(p.Rate > 0) {
			return fmt.Errorf("examples/streaming: window join: rate %v must be positive", p.Rate)
		}
		input := func(seed int64, maxValue int32, name string) stream.DataStream[NameValue] {
			// the source has one reader, which asks for indexes in order
			gen := WindowJoinSample(seed, maxValue)
			indexed := func(i int64) indexedNameValue { return indexedNameValue{i, gen(i)} }
			rate := p.Rate
			strategy := watermark.ForMonotonousTimestamps[indexedNameValue]().
				WithTimestampAssigner(func(e indexedNameValue, _ int64) int64 { return WindowJoinTimestamp(e.index, rate) })
			src := stream.FromSource(env, source.Generator(indexed, p.Events, p.Rate), strategy, name).SetParallelism(1)
			// chained to the source, as Flink's generator emits the tuples itself
			return stream.Map(src, func(e indexedNameValue) NameValue { return e.v }).SetParallelism(1)
		}
		grades = input(p.Seed, WindowJoinGradeMax, "Grades Data Generator")
		salaries = input(p.Seed+1, WindowJoinSalaryMax, "Salaries Data Generator")
	}
	joined := WindowJoin(grades, salaries, assigner)
	emit(joined, o, p.Output)
	created := newDirs(p.Output)
	if _, err := env.Execute(ctx); err != nil {
		created.removeEmpty()
		return fmt.Errorf("examples/streaming: window join: %w", inputCause(err))
	}
	return nil
}

// joinRow is a line of a window-join input file: time, name, value, and
// the byte offset where it starts (for errors naming its line).
type joinRow struct {
	Time   int64  `weir:"time"`
	Name   string `weir:"name"`
	Value  int32  `weir:"value"`
	Offset int64  `weir:",offset"`
}

// joinInput is the stream of the file path, "time,name,value" lines: a
// source of parallelism 1 named name, timestamps from the time (which must
// be in [lo, hi]: the times with windows of spec), ascending.
func joinInput(env *stream.Env, path, name string, lo, hi int64, spec string) (stream.DataStream[NameValue], error) {
	opts := csv.Options{NoHeader: true}
	if _, err := csv.Open[joinRow](path, opts); err != nil {
		return stream.DataStream[NameValue]{}, err
	}
	src, err := source.Files(source.CSV[joinRow](opts), path)
	if err != nil {
		return stream.DataStream[NameValue]{}, err
	}
	strategy := watermark.ForMonotonousTimestamps[joinRow]().WithTimestampAssignerErr(func(r joinRow, _ int64) (int64, error) {
		if r.Time < lo || r.Time > hi {
			return 0, badTime(path, r.Offset, "time", r.Time, spec, lo, hi)
		}
		return r.Time, nil
	})
	rows := stream.FromSource(env, src, strategy, name).SetParallelism(1)
	return stream.Map(rows, func(r joinRow) NameValue { return NameValue{Name: r.Name, Value: r.Value} }).SetParallelism(1), nil
}

// indexedNameValue is a generated element with its index, from which its
// timestamp follows.
type indexedNameValue struct {
	index int64
	v     NameValue
}

// WindowJoin is Flink's WindowJoin.runWindowJoin: grades joined with
// salaries on the name in the windows of assigner, each pair giving
// (name, grade, salary).
func WindowJoin[W window.Window](grades, salaries stream.DataStream[NameValue], assigner window.Assigner[W]) stream.DataStream[GradeSalary] {
	name := func(v NameValue) string { return v.Name }
	return stream.JoinApply(stream.WindowJoin(grades, salaries, name, name, assigner),
		func(g, s NameValue) GradeSalary { return GradeSalary{Name: g.Name, Grade: g.Value, Salary: s.Value} })
}
