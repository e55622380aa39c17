// The queries, from the packages that hold them (a few queries each, so
// that no compile of them needs more than about 1.7 GB).

package tpch

import (
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch/internal/q12to17"
	"github.com/weirdata/weir/tpch/internal/q18to22"
	"github.com/weirdata/weir/tpch/internal/q1to6"
	"github.com/weirdata/weir/tpch/internal/q7to11"
)

// Q1Row is a row of Q1 (Pricing Summary Report): the sums are exact, the
// averages are derived from them.
type Q1Row = q1to6.Q1Row

// Q1 is the Pricing Summary Report:
//
//	lineitem (l_shipdate <= 1998-09-02, in the scan)
//	  ─Map→ one accumulator per line ─GroupBy(flag, status).Reduce→ sums
//	  ─Sort(flag, status)→ rows
func Q1(env *dataset.Env, dir string) (*Rows[Q1Row], error) { return q1to6.Q1(env, dir) }

// Q2Row is a row of Q2 (Minimum Cost Supplier).
type Q2Row = q1to6.Q2Row

// Q2 is Minimum Cost Supplier. The correlated subquery (the least cost of the
// part among European suppliers) is a grouping by part of the very offers the
// outer query joins, so the offers are joined once and each part's group
// keeps its cheapest:
//
//	nation ─SemiJoin─ region (EUROPE, broadcast) ; supplier ─Join─ those nations (broadcast)
//	partsupp ─Join on partkey─ part (size 15 in the scan, type LIKE '%BRASS': Filter), broadcast
//	  ─Join on suppkey─ European suppliers (broadcast)
//	  ─GroupBy(partkey).SortGroup(cost).ReduceGroup(least-cost offers)
//	  ─SortBy(acctbal desc, n_name, s_name, partkey)─First(100)
func Q2(env *dataset.Env, dir string) (*Rows[Q2Row], error) { return q1to6.Q2(env, dir) }

// Q3Row is a row of Q3 (Shipping Priority).
type Q3Row = q1to6.Q3Row

// Q3 is Shipping Priority:
//
//	orders (o_orderdate < 1995-03-15) ─SemiJoin─ customer (BUILDING), broadcast
//	lineitem (l_shipdate > 1995-03-15) ─Join on orderkey─ those orders
//	  ─GroupBy(orderkey).Reduce(Σ revenue)→ Sort(revenue desc, orderdate) ─First(10)
//
// o_orderdate and o_shippriority are functions of l_orderkey = o_orderkey,
// so grouping by the order key alone is the SQL's grouping.
func Q3(env *dataset.Env, dir string) (*Rows[Q3Row], error) { return q1to6.Q3(env, dir) }

// Q4Row is a row of Q4 (Order Priority Checking).
type Q4Row = q1to6.Q4Row

// Q4 is Order Priority Checking. The EXISTS subquery is a semi-join:
//
//	orders (1993 Q3, in the scan)
//	  ─SemiJoin on orderkey─ lineitem (commit < receipt: Filter)
//	  ─GroupBy(orderpriority).Reduce(count)→ Sort(orderpriority)
func Q4(env *dataset.Env, dir string) (*Rows[Q4Row], error) { return q1to6.Q4(env, dir) }

// Q5Row is a row of Q5 (Local Supplier Volume).
type Q5Row = q1to6.Q5Row

// Q5 is Local Supplier Volume:
//
//	nation ─Join─ region (ASIA, broadcast) ; supplier ─Join─ those nations (broadcast)
//	orders (1994) ─Join─ customer ; lineitem ─Join on orderkey─ those orders
//	  ─Join on (suppkey, nationkey)─ Asian suppliers (broadcast)
//	  ─GroupBy(n_name).Reduce(Σ revenue)→ Sort(revenue desc)
func Q5(env *dataset.Env, dir string) (*Rows[Q5Row], error) { return q1to6.Q5(env, dir) }

// Q6Row is the row of Q6 (Forecasting Revenue Change).
type Q6Row = q1to6.Q6Row

// Q6 is Forecasting Revenue Change, a scan with every predicate pushed into
// the Parquet reader and one global sum:
//
//	lineitem (1994 ship dates, discount 0.05..0.07, quantity < 24, in the scan)
//	  ─AggregateAll(Σ price × discount)→ one row
func Q6(env *dataset.Env, dir string) (*Rows[Q6Row], error) { return q1to6.Q6(env, dir) }

// Q7Row is a row of Q7 (Volume Shipping).
type Q7Row = q7to11.Q7Row

// Q7 is Volume Shipping. With both nations FRANCE or GERMANY (in the query.Nation
// scans), the SQL's (FRANCE, GERMANY) or (GERMANY, FRANCE) is "the supplier's
// and the customer's nations differ":
//
//	supplier ─Join─ nation n1 (FRANCE, GERMANY; broadcast)
//	customer ─Join─ nation n2 (FRANCE, GERMANY; broadcast) ; orders ─Join on custkey─ those customers
//	lineitem (shipped 1995..1996, in the scan) ─Join on suppkey─ those suppliers (broadcast)
//	  ─Join on orderkey─ those orders ─Filter(nations differ)
//	  ─GroupBy(supp_nation, cust_nation, l_year).Reduce(Σ volume)→ SortBy(supp_nation, cust_nation, l_year)
func Q7(env *dataset.Env, dir string) (*Rows[Q7Row], error) { return q7to11.Q7(env, dir) }

// Q8Row is a row of Q8 (National Market Share).
type Q8Row = q7to11.Q8Row

// Q8 is National Market Share:
//
//	nation n1 ─SemiJoin─ region (AMERICA, broadcast) ; customer ─SemiJoin─ those nations (broadcast)
//	orders (1995..1996, in the scan) ─SemiJoin on custkey─ those customers
//	lineitem ─Join on partkey─ part (ECONOMY ANODIZED STEEL, in the scan), broadcast
//	  ─Join on orderkey─ those orders
//	  ─Join on suppkey─ supplier ─Join─ nation n2 (broadcast)
//	  ─GroupBy(o_year).Reduce(Σ Brazil's volume, Σ volume)─Map(ratio)→ Sort(o_year)
func Q8(env *dataset.Env, dir string) (*Rows[Q8Row], error) { return q7to11.Q8(env, dir) }

// Q9Row is a row of Q9 (Product Type Profit Measure).
type Q9Row = q7to11.Q9Row

// Q9 is Product Type Profit Measure:
//
//	lineitem ─SemiJoin on partkey─ part (p_name LIKE '%green%': Filter), broadcast
//	  ─Join on (partkey, suppkey)─ partsupp
//	  ─Join on suppkey─ (supplier ─Join─ query.Nation, broadcast)
//	  ─Join on orderkey─ orders
//	  ─GroupBy(query.Nation, o_year).Reduce(Σ amount)→ SortBy(query.Nation, o_year desc)
func Q9(env *dataset.Env, dir string) (*Rows[Q9Row], error) { return q7to11.Q9(env, dir) }

// Q10Row is a row of Q10 (Returned Item Reporting).
type Q10Row = q7to11.Q10Row

// Q10 is Returned Item Reporting:
//
//	lineitem (l_returnflag = 'R') ─Join on orderkey─ orders (1993 Q4)
//	  ─GroupBy(custkey).Reduce(Σ revenue)─Join─ customer ─Join─ nation (broadcast)
//	  ─Sort(revenue desc, custkey)─First(20)
//
// The SQL groups by c_custkey and columns that are functions of it, so the
// revenue is summed per customer key before the customer's columns are
// joined in: the join then sees one record per customer, not per line.
func Q10(env *dataset.Env, dir string) (*Rows[Q10Row], error) { return q7to11.Q10(env, dir) }

// Q11Row is a row of Q11 (Important Stock Identification).
type Q11Row = q7to11.Q11Row

// Q11 is Important Stock Identification:
//
//	supplier ─SemiJoin─ nation (GERMANY, in the scan), broadcast
//	partsupp ─SemiJoin on suppkey─ those suppliers, broadcast
//	  ─Map(supplycost × availqty)─GroupBy(partkey).Reduce(Σ value) ─┬──────────────────────────────┐
//	                                        AggregateAll(Σ value) ──┴→ FlatMapWithBroadcast(value > total × 0.0001)
//	  ─Sort(value desc)
//
// The subquery's total over partsupp ⋈ supplier ⋈ nation is the sum of the
// per-part sums, so it is aggregated from the groups (a few thousand records)
// rather than from the join again; the HAVING is a filter against that one
// record, broadcast.
func Q11(env *dataset.Env, dir string) (*Rows[Q11Row], error) { return q7to11.Q11(env, dir) }

// Q12Row is a row of Q12 (Shipping Modes and Order Priority).
type Q12Row = q12to17.Q12Row

// Q12 is Shipping Modes and Order Priority:
//
//	lineitem (MAIL or SHIP, received in 1994: in the scan; commit < receipt,
//	          ship < commit: Filter) ─Join on orderkey─ orders
//	  ─GroupBy(shipmode).Reduce(counts)→ Sort(shipmode)
func Q12(env *dataset.Env, dir string) (*Rows[Q12Row], error) { return q12to17.Q12(env, dir) }

// Q13Row is a row of Q13 (Customer Distribution).
type Q13Row = q12to17.Q13Row

// Q13 is Customer Distribution:
//
//	orders (comment NOT LIKE '%special%requests%': Filter)
//	  ─GroupBy(custkey).Reduce(count)
//	customer ─LeftOuterJoin on custkey─ those counts (0 without a match)
//	  ─GroupBy(c_count).Reduce(count)─SortBy(custdist desc, c_count desc)
//
// count(o_orderkey) over the outer join counts a customer's matching orders
// (0 for a customer without query.One), so the orders are counted per customer
// before the join: the join then sees one record per customer on each side.
func Q13(env *dataset.Env, dir string) (*Rows[Q13Row], error) { return q12to17.Q13(env, dir) }

// Q14Row is the row of Q14 (Promotion Effect).
type Q14Row = q12to17.Q14Row

// Q14 is Promotion Effect:
//
//	lineitem (September 1995, in the scan) ─Join on partkey─ part
//	  ─AggregateAll(Σ promo, Σ total)─Map→ 100 × promo / total
func Q14(env *dataset.Env, dir string) (*Rows[Q14Row], error) { return q12to17.Q14(env, dir) }

// Q15Row is a row of Q15 (Top Supplier).
type Q15Row = q12to17.Q15Row

// Q15 is Top Supplier:
//
//	lineitem (1996 Q1, in the scan) ─Map(revenue)─GroupBy(suppkey).Reduce(Σ revenue) ─┬────────────────────────┐
//	                                                     AggregateAll(max revenue) ──┴→ FlatMapWithBroadcast(= max)
//	  ─Join on suppkey─ supplier ─Sort(suppkey)
//
// The view is built once and read twice: by the maximum and by the filter
// that keeps the suppliers whose revenue equals it (all of them on a tie).
func Q15(env *dataset.Env, dir string) (*Rows[Q15Row], error) { return q12to17.Q15(env, dir) }

// Q16Row is a row of Q16 (Parts/Supplier Relationship).
type Q16Row = q12to17.Q16Row

// Q16 is Parts/Supplier Relationship:
//
//	partsupp ─AntiJoin on suppkey─ supplier (comment LIKE '%Customer%Complaints%': Filter), broadcast
//	  ─Join on partkey─ part (8 sizes in the scan; brand, type: Filter)
//	  ─Distinct(group, suppkey)─GroupBy(group).Reduce(count)
//	  ─SortBy(supplier_cnt desc, brand, type, size)
//
// ps_suppkey NOT IN (...) is an anti-join: s_suppkey is never NULL.
// count(DISTINCT ps_suppkey) is a Distinct on (group, supplier) followed by a
// count per group.
func Q16(env *dataset.Env, dir string) (*Rows[Q16Row], error) { return q12to17.Q16(env, dir) }

// Q17Row is the row of Q17 (Small-Quantity-Order Revenue).
type Q17Row = q12to17.Q17Row

// Q17 is Small-Quantity-Order Revenue:
//
//	lineitem ─SemiJoin on partkey─ part (Brand#23, MED BOX, in the scan), broadcast
//	  ─GroupBy(partkey).ReduceGroup(Σ price of lines with quantity < 0.2 × the group's avg)
//	  ─AggregateAll(Σ)─Map(/ 7)
//
// The subquery is correlated on p_partkey = l_partkey, so it is the average
// over the lines of the part's group: each group is read once, kept (a part
// has few lines) and read again against its own average.
func Q17(env *dataset.Env, dir string) (*Rows[Q17Row], error) { return q12to17.Q17(env, dir) }

// Q18Row is a row of Q18 (Large Volume Customer).
type Q18Row = q18to22.Q18Row

// Q18 is Large Volume Customer:
//
//	lineitem ─GroupBy(orderkey).Reduce(Σ quantity)─Filter(> 300)
//	  ─Join on orderkey─ orders ─Join on custkey─ customer
//	  ─Sort(totalprice desc, orderdate)─First(100)
//
// The outer query groups the lines of each order (o_orderkey = l_orderkey,
// the other grouping columns are functions of it), so its sum(l_quantity)
// is the subquery's per-order sum: the lines are summed once, and only the
// large orders (a handful) meet orders and customer.
func Q18(env *dataset.Env, dir string) (*Rows[Q18Row], error) { return q18to22.Q18(env, dir) }

// Q19Row is the row of Q19 (Discounted Revenue).
type Q19Row = q18to22.Q19Row

// Q19 is Discounted Revenue. The predicates common to the three disjuncts
// and the union of their ranges go into the scans; each joined pair is then
// checked against the disjunct its part belongs to:
//
//	lineitem (AIR or AIR REG, DELIVER IN PERSON, quantity 1..30, in the scan)
//	  ─Join on partkey─ part (Brand#12/23/34, size 1..15 in the scan; the
//	                          branch's container and size: Filter), broadcast
//	  ─FlatMap(the branch's quantity range)─AggregateAll(Σ revenue)
func Q19(env *dataset.Env, dir string) (*Rows[Q19Row], error) { return q18to22.Q19(env, dir) }

// Q20Row is a row of Q20 (Potential Part Promotion).
type Q20Row = q18to22.Q20Row

// Q20 is Potential Part Promotion:
//
//	part (p_name LIKE 'forest%', in the scan) ── broadcast to both:
//	lineitem (1994) ─SemiJoin on partkey─ forest parts
//	  ─GroupBy(partkey, suppkey).Aggregate(Σ quantity)
//	  ─Join on (partkey, suppkey)─ partsupp ─SemiJoin on partkey─ forest parts
//	  ─Filter(availqty > 0.5 × Σ quantity)
//	supplier ─SemiJoin─ nation (CANADA, broadcast) ─SemiJoin on suppkey─ those partsupps
//	  ─Sort(s_name)
//
// The correlated subquery is a sum per (partkey, suppkey) joined back to
// partsupp: a partsupp with no 1994 line has a NULL sum, which the SQL's
// comparison rejects, as the inner join does. The IN subqueries are semi
// joins. LIKE 'forest%' is the range "forest" <= p_name < "foresu", which
// holds exactly for the names that start with "forest", so the scan applies
// it.
func Q20(env *dataset.Env, dir string) (*Rows[Q20Row], error) { return q18to22.Q20(env, dir) }

// Q21Row is a row of Q21 (Suppliers Who Kept Orders Waiting).
type Q21Row = q18to22.Q21Row

// Q21 is Suppliers Who Kept Orders Waiting:
//
//	lineitem ─GroupBy(orderkey).Aggregate(min/max supplier of all lines and of
//	  the late ones, late lines)─FlatMap(one late supplier among several)
//	  ─SemiJoin on orderkey─ orders (status F)
//	  ─Join on suppkey─ supplier ─SemiJoin─ nation (SAUDI ARABIA), broadcast
//	  ─GroupBy(s_name).Reduce(Σ late lines)─Sort(numwait desc, s_name)─First(100)
//
// The EXISTS and NOT EXISTS subqueries on lineitem both compare suppliers
// within one order, so one aggregation per order decides them for all its
// lines (see q21Wait) instead of two self-joins of lineitem.
func Q21(env *dataset.Env, dir string) (*Rows[Q21Row], error) { return q18to22.Q21(env, dir) }

// Q22Row is a row of Q22 (Global Sales Opportunity).
type Q22Row = q18to22.Q22Row

// Q22 is Global Sales Opportunity:
//
//	customer (code in the list: Filter) ─┬─Filter(acctbal > 0)─AggregateAll(Σ acctbal, count)
//	                                     │                        │ broadcast
//	                                     └─FlatMapWithBroadcast(acctbal > avg)
//	  ─AntiJoin on custkey─ orders
//	  ─GroupBy(cntrycode).Reduce(count, Σ acctbal)─Sort(cntrycode)
//
// The scalar subquery avg(c_acctbal) is one record broadcast to the filter,
// which compares exactly (acctbal × count > Σ) rather than with a rounded
// average; with no qualifying customer the average is NULL and no row passes.
// NOT EXISTS is the anti join.
func Q22(env *dataset.Env, dir string) (*Rows[Q22Row], error) { return q18to22.Q22(env, dir) }
