package iterate

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/graph"
)

// Damping is PageRank's damping factor, Flink's DAMPENING_FACTOR.
const Damping = 0.85

// Page is a page with its rank. The tags name its Parquet columns.
type Page struct {
	ID   int64   `weir:"id"`
	Rank float64 `weir:"rank"`
}

// PageRankInputs name the inputs of RunPageRank; "" means the default data.
type PageRankInputs struct {
	Pages string // page ids, one a line, or a Parquet column id
	Links string // "src dst" lines, or Parquet columns src and dst
}

// PageRankParams are PageRank's iteration parameters.
type PageRankParams struct {
	// Iterations is the greatest number of supersteps.
	Iterations int
	// Epsilon ends the iteration after the first superstep in which no rank
	// changed by more than it (Flink's EPSILON); negative: run all Iterations.
	Epsilon float64
}

// adjacency is a page's out-links.
type adjacency struct {
	ID    int64
	Dests []int64
}

// rankedAdjacency is a page's rank with its out-links (none for a dangling page).
type rankedAdjacency struct {
	ID    int64
	Rank  float64
	Dests []int64
}

// PageRank is Flink's PageRank example as a bulk iteration: every superstep
// joins the ranks with the adjacency lists (a loop-invariant input, kept as a
// join index), sends rank/outdegree along every link, sums what every page
// receives and damps the sums: rank' = (1-d)/N + d*sum, N the number of pages.
//
//	pages ─► rank 1/N ─► Iterate ┬─► left outer join adjacency ─► contributions,
//	                             │   and a zero one per page ─► sum per page ─► damp ─┬─► next
//	                             └────────────────────────── join on id: |next-rank| > ε ◄┘ (criterion)
//
// Unlike Flink's example, every page keeps a rank, (1-d)/N without in-links,
// because every page contributes zero to itself; a dangling page's rank leaks
// as in Flink's. Links should name pages: a link to an id not in pages gives
// that id a rank too. With p.Epsilon >= 0 the iteration ends after the first
// superstep in which no page's rank changed by more than it.
func PageRank(pages *dataset.DataSet[int64], links *dataset.DataSet[Edge], p PageRankParams) *dataset.DataSet[Page] {
	count := dataset.AggregateAll(pages, agg.Count[int64]())
	initial := dataset.MapWithBroadcast(pages, count, func(id int64, n []int64) Page {
		return Page{ID: id, Rank: 1 / float64(n[0])}
	})
	adj := dataset.ReduceGroup(dataset.GroupBy(links, func(l Edge) int64 { return l.Src }),
		func(src int64, ls iter.Seq[Edge], emit func(adjacency)) {
			a := adjacency{ID: src}
			for l := range ls {
				a.Dests = append(a.Dests, l.Dst)
			}
			emit(a)
		})
	return dataset.Iterate(initial, p.Iterations, func(it *dataset.Iteration, ranks *dataset.DataSet[Page]) *dataset.DataSet[Page] {
		withAdj := dataset.LeftOuterJoin(ranks, adj, pageID, func(a adjacency) int64 { return a.ID },
			func(p *Page, a *adjacency) rankedAdjacency {
				r := rankedAdjacency{ID: p.ID, Rank: p.Rank}
				if a != nil {
					r.Dests = a.Dests
				}
				return r
			})
		contribs := dataset.FlatMap(withAdj, func(r rankedAdjacency, emit func(Page)) {
			emit(Page{ID: r.ID})
			share := r.Rank / float64(len(r.Dests)) // not used without links
			for _, dst := range r.Dests {
				emit(Page{ID: dst, Rank: share})
			}
		})
		sums := dataset.GroupBy(contribs, pageID).Reduce(func(a, b Page) Page { return Page{ID: a.ID, Rank: a.Rank + b.Rank} })
		next := dataset.MapWithBroadcast(sums, count, func(s Page, n []int64) Page {
			return Page{ID: s.ID, Rank: (1-Damping)/float64(n[0]) + Damping*s.Rank}
		})
		if p.Epsilon >= 0 {
			eps := p.Epsilon
			changes := dataset.Join(next, ranks, pageID, pageID, func(a, b *Page) float64 { return math.Abs(a.Rank - b.Rank) })
			dataset.TerminateWhenEmpty(it, changes.Filter(func(d float64) bool { return d > eps }))
		}
		return next
	})
}

func pageID(p Page) int64 { return p.ID }

// RunPageRank runs PageRankGraph, PageRank over the links' adjacency
// arrays, on in (default: Flink's PageRankData, 15 pages) and writes "id
// rank" lines sorted by id, or to a Parquet o.Output the rows in that order
// with columns id (INT64) and rank (DOUBLE). Links to or from an id that is
// no page are left out. o.Executed sees the iteration's supersteps in
// Result.Iterations, each with the pages whose rank was set as its records.
func RunPageRank(ctx context.Context, o Options, in PageRankInputs, p PageRankParams) error {
	env := dataset.New(o.Dataset)
	var pages *dataset.DataSet[int64]
	var links *dataset.DataSet[Edge]
	var err error
	if in.Pages == "" {
		pages = dataset.FromSlice(env, PageRankPages)
	} else if pages, err = readVertices(env, "pages", in.Pages); err != nil {
		return fmt.Errorf("iterate: pagerank: pages file: %w", err)
	}
	if in.Links == "" {
		links = dataset.FromSlice(env, PageRankLinks)
	} else if links, err = readEdges(env, "links", in.Links); err != nil {
		return fmt.Errorf("iterate: pagerank: links file: %w", err)
	}
	var stats graph.Stats
	o.Executed = withGraphStats(o.Executed, "PageRank scatter-gather iteration", &stats)
	// the iteration's one task emits the ranks in page order, as
	// PageRankGraph declares: sorted there, at parallelism 1, they pass
	// through the sort as they come
	ranks := dataset.Sort(PageRankGraph(pages, links, p, &stats), pageID, dataset.Ascending).On("id").WithParallelism(1)
	if isParquet(o.Output) {
		err = emitParquet(ctx, env, ranks, o)
	} else {
		err = emit(ctx, env, dataset.Map(ranks, func(p Page) string { return fmt.Sprintf("%d %s", p.ID, formatFloat(p.Rank)) }), o)
	}
	if err != nil {
		return fmt.Errorf("iterate: pagerank: %w", err)
	}
	return nil
}

// withGraphStats returns executed (nil stays nil) with the supersteps of a
// graph iteration named name, as stats holds them once the job has run,
// added to the result's Iterations: each superstep's records are the
// vertices whose value was set.
func withGraphStats(executed func(*dataset.Result), name string, stats *graph.Stats) func(*dataset.Result) {
	if executed == nil {
		return nil
	}
	return func(res *dataset.Result) {
		it := dataset.IterationStats{Name: name}
		for i, s := range stats.Supersteps {
			it.Supersteps = append(it.Supersteps, dataset.SuperstepStats{Superstep: i + 1, Records: s.Updated, Time: s.Time})
		}
		res.Iterations = append(res.Iterations, it)
		executed(res)
	}
}
