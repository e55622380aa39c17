// Package q18to22 holds TPC-H Q18 to Q22 of package tpch, which documents
// and runs them; package query holds what they share. The queries are
// split into packages of a few each so that no compile of them needs more
// than about 1.7 GB.
package q18to22
