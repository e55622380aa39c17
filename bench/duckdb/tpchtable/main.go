// Command tpchtable turns the output of BenchmarkTPCH at two thread counts
// into the Markdown table of BENCHMARKS.md: per query, the median time of
// weir and of DuckDB at each thread count, their ratio, and the geometric
// mean of the ratios.
//
//	go run ./tpchtable "2 threads=tpch2.txt" "1 thread=tpch1.txt"
//
// Each argument is a file, or label=file to name its columns.
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var line = regexp.MustCompile(`^BenchmarkTPCH/(q\d+)/engine=(\w+)-\d+\s+\d+\s+([0-9.]+) ns/op`)

// read returns, per query and engine, the ns/op of every run in file.
func read(file string) (map[string]map[string][]float64, []string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	runs := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ns, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %w", file, sc.Text(), err)
		}
		if runs[m[1]] == nil {
			runs[m[1]] = map[string][]float64{}
			order = append(order, m[1])
		}
		runs[m[1]][m[2]] = append(runs[m[1]][m[2]], ns)
	}
	return runs, order, sc.Err()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tpchtable FILE...   (BenchmarkTPCH output, one file per thread count)")
		os.Exit(2)
	}
	var all []map[string]map[string][]float64
	var order, labels []string
	for _, arg := range os.Args[1:] {
		label, file, ok := strings.Cut(arg, "=")
		if !ok {
			label, file = arg, arg
		}
		labels = append(labels, label)
		runs, o, err := read(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tpchtable:", err)
			os.Exit(1)
		}
		if len(o) == 0 {
			fmt.Fprintf(os.Stderr, "tpchtable: %s: no BenchmarkTPCH lines\n", file)
			os.Exit(1)
		}
		all = append(all, runs)
		if order == nil {
			order = o
		}
	}
	fmt.Print("| query |")
	for _, l := range labels {
		fmt.Printf(" weir, %s (ms) | DuckDB, %s (ms) | ratio |", l, l)
	}
	fmt.Print("\n|---|")
	for range all {
		fmt.Print("---:|---:|---:|")
	}
	fmt.Println()
	logs := make([]float64, len(all))
	n := make([]int, len(all))
	for _, q := range order {
		fmt.Printf("| %s |", q)
		for i, runs := range all {
			w, d := median(runs[q]["weir"]), median(runs[q]["duckdb"])
			r := w / d
			if !math.IsNaN(r) {
				logs[i] += math.Log(r)
				n[i]++
			}
			fmt.Printf(" %.1f | %.1f | %.2f |", w/1e6, d/1e6, r)
		}
		fmt.Println()
	}
	fmt.Print("| geometric mean of ratios |")
	for i := range all {
		fmt.Printf(" | | **%.2f** |", math.Exp(logs[i]/float64(n[i])))
	}
	fmt.Println()
}
