package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/parquet"
)

// The quickstart's sample data: customers in countries, and their orders.
type qsCustomer struct {
	ID      int64  `weir:"c_id"`
	Name    string `weir:"c_name"`
	Country string `weir:"c_country"`
}

type qsOrder struct {
	ID       int64        `weir:"o_id"`
	Customer int64        `weir:"o_customer"`
	Date     parquet.Date `weir:"o_date"`
	Amount   float64      `weir:"o_amount"`
}

// qsRevenue is one row of the quickstart's result.
type qsRevenue struct {
	Country string
	Orders  int64
	Revenue float64
}

var qsCountries = []string{"Argentina", "Brazil", "Canada", "Denmark", "Egypt", "France",
	"Germany", "India", "Japan", "Kenya", "Mexico", "Norway"}

// qsData makes the sample tables: 2,000 customers and 100,000 orders over
// 2024-2025, deterministic for a seed.
func qsData(seed uint64) ([]qsCustomer, []qsOrder) {
	r := rand.New(rand.NewPCG(seed, 11))
	cs := make([]qsCustomer, 2000)
	for i := range cs {
		cs[i] = qsCustomer{ID: int64(i + 1), Name: fmt.Sprintf("Customer#%05d", i+1), Country: qsCountries[r.IntN(len(qsCountries))]}
	}
	first := parquet.MakeDate(2024, 1, 1)
	os := make([]qsOrder, 100000)
	for i := range os {
		os[i] = qsOrder{
			ID:       int64(i + 1),
			Customer: int64(r.IntN(len(cs)+50) + 1), // some orders name no known customer
			Date:     first + parquet.Date(r.IntN(731)),
			Amount:   float64(r.IntN(100000)) / 100,
		}
	}
	return cs, os
}

// writeParquet writes rows to path as one Parquet file.
func writeParquet[T any](ctx context.Context, path string, rows []T) error {
	w, err := parquet.NewSink[T](path).Create(ctx, 0, 1)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return w.Commit()
}

// qsProgram is the quickstart's job: revenue and order count per country of
// the 2025 orders of known customers, largest revenue first.
func qsProgram(env *dataset.Env, orders formats.Source[qsOrder], customers formats.Source[qsCustomer]) *dataset.Collected[qsRevenue] {
	o := dataset.FromSource(env, "orders.parquet", orders)
	c := dataset.FromSource(env, "customers.parquet", customers)
	byCountry := dataset.Join(o, c,
		func(o qsOrder) int64 { return o.Customer },
		func(c qsCustomer) int64 { return c.ID },
		func(o *qsOrder, c *qsCustomer) qsRevenue {
			return qsRevenue{Country: c.Country, Orders: 1, Revenue: o.Amount}
		})
	sums := dataset.GroupBy(byCountry, func(r qsRevenue) string { return r.Country }).
		Reduce(func(a, b qsRevenue) qsRevenue {
			return qsRevenue{Country: a.Country, Orders: a.Orders + b.Orders, Revenue: a.Revenue + b.Revenue}
		})
	return dataset.Collect(dataset.Sort(sums, func(r qsRevenue) float64 { return r.Revenue }, dataset.Descending))
}

// qsOracle computes the quickstart's answer naively.
func qsOracle(cs []qsCustomer, os []qsOrder) []qsRevenue {
	country := map[int64]string{}
	for _, c := range cs {
		country[c.ID] = c.Country
	}
	from := parquet.MakeDate(2025, 1, 1)
	agg := map[string]*qsRevenue{}
	for _, o := range os {
		ct, ok := country[o.Customer]
		if !ok || o.Date < from {
			continue
		}
		if agg[ct] == nil {
			agg[ct] = &qsRevenue{Country: ct}
		}
		agg[ct].Orders++
		agg[ct].Revenue += o.Amount
	}
	var out []qsRevenue
	for _, r := range agg {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b qsRevenue) int { return -cmpFloat(a.Revenue, b.Revenue) })
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// runQuickstartJob writes the sample tables as Parquet into dir, runs the job
// with opts, checks its answer against qsOracle and prints the result, plan and
// metrics.
func runQuickstartJob(ctx context.Context, out io.Writer, opts dataset.Options, dir string) error {
	cs, os := qsData(1)
	cpath, opath := filepath.Join(dir, "customers.parquet"), filepath.Join(dir, "orders.parquet")
	if err := writeParquet(ctx, cpath, cs); err != nil {
		return err
	}
	if err := writeParquet(ctx, opath, os); err != nil {
		return err
	}
	orders, err := parquet.Open[qsOrder](opath, parquet.Where("o_date", parquet.Ge, parquet.MakeDate(2025, 1, 1)))
	if err != nil {
		return err
	}
	customers, err := parquet.Open[qsCustomer](cpath)
	if err != nil {
		return err
	}
	env := dataset.New(opts)
	got := qsProgram(env, orders, customers)
	res, err := env.Execute(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "weir quickstart: revenue per country of the 2025 orders (%d orders and %d customers written as Parquet to %s)\n",
		len(os), len(cs), dir)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  country\torders\trevenue\t")
	for _, r := range got.Values() {
		fmt.Fprintf(tw, "  %s\t%d\t%.2f\t\n", r.Country, r.Orders, r.Revenue)
	}
	tw.Flush()
	want := qsOracle(cs, os)
	if err := qsCheck(got.Values(), want); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	fmt.Fprintf(out, "  checked  equal to a naive in-memory computation (%d countries)\n", len(want))
	printPlan(out, res)
	printMetrics(out, res)
	return nil
}

func qsCheck(got, want []qsRevenue) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Country != w.Country || g.Orders != w.Orders || math.Abs(g.Revenue-w.Revenue) > 1e-6*math.Max(1, w.Revenue) {
			return fmt.Errorf("row %d is %+v, want %+v", i+1, g, w)
		}
	}
	return nil
}
