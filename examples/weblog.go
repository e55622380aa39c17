package examples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
)

// Document is a row of WebLogAnalysis's documents relation.
type Document struct {
	URL  string
	Text string
}

// Rank is a row of the ranks relation, and of the result.
type Rank struct {
	Rank        int32
	URL         string
	AvgDuration int32
}

// Visit is the part of a row of the visits relation the query reads.
type Visit struct {
	URL  string
	Date string // YYYY-MM-DD; months and days may have one digit
}

// The constants of Flink's WebLogAnalysis query.
const (
	// RankThreshold: ranks must be greater.
	RankThreshold = 40
	// VisitYear: documents visited in this year are dropped.
	VisitYear = 2007
)

// Keywords must all occur in a document's text, spaces included.
var Keywords = []string{" editors ", " oscillations "}

// WebLogInputs name the files of the three relations; an empty name reads
// Flink's default data (WebLogDocuments, WebLogRanks, WebLogVisits). The files
// are Flink's '|'-separated formats, a trailing '|' allowed:
//
//	documents: url|text
//	ranks:     rank|url|avg_duration
//	visits:    ip|url|date|...      (only url and date are read)
type WebLogInputs struct {
	Documents, Ranks, Visits string
}

// RunWebLog is Flink's WebLogAnalysis:
//
//	SELECT r.rank, r.url, r.avg_duration
//	FROM documents d JOIN ranks r ON d.url = r.url
//	WHERE d.text contains every keyword AND r.rank > 40
//	  AND NOT EXISTS (SELECT * FROM visits v WHERE v.url = d.url AND year(v.date) = 2007)
//
// It writes "rank|url|avg_duration" lines (Flink's writeAsCsv format) sorted by
// rank, then url.
func RunWebLog(ctx context.Context, o Options, in WebLogInputs) error {
	env := dataset.New(o.Dataset)
	docs, err := relation(env, "documents", in.Documents, WebLogDocuments, parseDocument)
	if err != nil {
		return err
	}
	ranks, err := relation(env, "ranks", in.Ranks, WebLogRanks, parseRank)
	if err != nil {
		return err
	}
	visits, err := relation(env, "visits", in.Visits, WebLogVisits, parseVisit)
	if err != nil {
		return err
	}
	res := WebLogProgram(docs, ranks, visits)
	sorted := dataset.Sort(res, func(r Rank) rankOrder { return rankOrder{r.Rank, r.URL, r.AvgDuration} }, dataset.Ascending)
	out := dataset.Map(sorted, formatRank)
	if err := emit(ctx, env, out, o); err != nil {
		return fmt.Errorf("examples: weblog: %w", err)
	}
	return nil
}

// rankOrder is the sort key of the result.
type rankOrder struct {
	Rank        int32
	URL         string
	AvgDuration int32
}

func formatRank(r Rank) string {
	return strconv.Itoa(int(r.Rank)) + "|" + r.URL + "|" + strconv.Itoa(int(r.AvgDuration))
}

// relation reads a file of records, or defaults when path is "".
func relation[T any](env *dataset.Env, name, path string, defaults []T, parse func([]byte, *slab) (T, error)) (*dataset.DataSet[T], error) {
	if path == "" {
		return dataset.FromSlice(env, defaults), nil
	}
	src, err := openLines(path, parse)
	if err != nil {
		return nil, fmt.Errorf("examples: weblog: %s file: %w", name, err)
	}
	return dataset.FromSource(env, name+" "+path, src), nil
}

// WebLogProgram is the query of RunWebLog over the three relations, in no
// particular order. Like Flink's, it joins documents with ranks (a URL listed
// twice in documents yields its rank twice) and anti-joins the result with the
// URLs visited in VisitYear.
func WebLogProgram(docs *dataset.DataSet[Document], ranks *dataset.DataSet[Rank], visits *dataset.DataSet[Visit]) *dataset.DataSet[Rank] {
	docURLs := dataset.Map(docs.Filter(hasKeywords), func(d Document) string { return d.URL })
	goodRanks := ranks.Filter(func(r Rank) bool { return r.Rank > RankThreshold })
	visited := dataset.Map(visits.Filter(func(v Visit) bool { return visitYear(v.Date) == VisitYear }),
		func(v Visit) string { return v.URL })
	joined := dataset.Join(docURLs, goodRanks, identity, rankURL, func(_ *string, r *Rank) Rank { return *r })
	return dataset.AntiJoin(joined, visited, rankURL, identity)
}

func identity(s string) string { return s }
func rankURL(r Rank) string    { return r.URL }

func hasKeywords(d Document) bool {
	for _, kw := range Keywords {
		if !strings.Contains(d.Text, kw) {
			return false
		}
	}
	return true
}

// visitYear is the year of a date, as Integer.parseInt(date.substring(0, 4))
// reads it; -1 when there is none (the parser rejects such dates).
func visitYear(date string) int {
	if len(date) < 4 {
		return -1
	}
	y, err := strconv.Atoi(date[:4])
	if err != nil {
		return -1
	}
	return y
}

// fields splits line on '|' into want fields or more, dropping one empty field
// after a trailing '|'. The slices alias line.
func fields(line []byte, want int, dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	for {
		i := bytes.IndexByte(line, '|')
		if i < 0 {
			if len(line) > 0 || len(dst) < want {
				dst = append(dst, line)
			}
			break
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
	if len(dst) < want {
		return nil, fmt.Errorf("%d '|'-separated fields, want %d", len(dst), want)
	}
	return dst, nil
}

var errNoInt = errors.New("not an integer")

// atoi32 parses a decimal int32 without allocating.
func atoi32(field string, b []byte) (int32, error) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, fmt.Errorf("%s %q: %w", field, b, errNoInt)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s %q: %w", field, b, errNoInt)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	if n < -1<<31 || n > 1<<31-1 {
		return 0, fmt.Errorf("%s %q: out of range", field, b)
	}
	return int32(n), nil
}

func parseDocument(line []byte, sl *slab) (Document, error) {
	var buf [4][]byte
	f, err := fields(line, 2, buf[:0])
	if err != nil {
		return Document{}, err
	}
	return Document{URL: sl.String(f[0]), Text: sl.String(f[1])}, nil
}

func parseRank(line []byte, sl *slab) (Rank, error) {
	var buf [4][]byte
	f, err := fields(line, 3, buf[:0])
	if err != nil {
		return Rank{}, err
	}
	rank, err := atoi32("rank", f[0])
	if err != nil {
		return Rank{}, err
	}
	dur, err := atoi32("avg_duration", f[2])
	if err != nil {
		return Rank{}, err
	}
	return Rank{Rank: rank, URL: sl.String(f[1]), AvgDuration: dur}, nil
}

func parseVisit(line []byte, sl *slab) (Visit, error) {
	var buf [10][]byte
	f, err := fields(line, 3, buf[:0])
	if err != nil {
		return Visit{}, err
	}
	if len(f[2]) < 4 {
		return Visit{}, fmt.Errorf("date %q: want YYYY-MM-DD", f[2])
	}
	if _, err := atoi32("date", f[2][:4]); err != nil {
		return Visit{}, fmt.Errorf("date %q: want YYYY-MM-DD", f[2])
	}
	return Visit{URL: sl.String(f[1]), Date: sl.String(f[2])}, nil
}
