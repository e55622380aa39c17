// Package nexmarktest checks the results of Nexmark queries: Oracle
// computes each query naively over a slice of events, with maps and
// sorts and no stream code, and Compare and CheckRows judge a query's
// CSV rows against it by the comparison rule of the formats note (rows as
// a multiset, numbers as numbers rounded to 6 decimals, then rows paired
// when their strings are equal and their numbers within 1e-6 absolute or
// 1e-9 relative). The tests of nexmark and of the command line share it.
package nexmarktest
