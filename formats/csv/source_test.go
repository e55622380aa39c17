package csv

import (
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Three is a record of three text columns, for comparing with encoding/csv.
type Three struct {
	A string
	B string
	C string
}

func threes(recs [][]string) []Three {
	var out []Three
	for _, r := range recs {
		out = append(out, Three{r[0], r[1], r[2]})
	}
	return out
}

// stdParse is the oracle: encoding/csv with three fields a record.
func stdParse(data string) ([][]string, error) {
	r := stdcsv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = 3
	return r.ReadAll()
}

var parseCases = map[string]string{
	"plain":              "a,b,c\n1,2,3\n4,5,6\n",
	"no trailing":        "a,b,c\n1,2,3\n4,5,6",
	"crlf":               "a,b,c\r\n1,2,3\r\n4,5,6\r\n",
	"quoted delimiters":  "a,b,c\n\"x,y\",\"\",\"z\"\n",
	"escaped quotes":     "a,b,c\n\"he said \"\"hi\"\"\",\"\"\"\",q\n",
	"quoted newlines":    "a,b,c\n\"line1\nline2\",\"\r\n\",x\n\"a\r\nb\",y,z\r\n",
	"blank lines":        "\n\na,b,c\n\n1,2,3\n\r\n4,5,6\n\n",
	"unicode":            "a,b,c\nhéllo,世界,\"🙂,🙃\"\n",
	"empty fields":       "a,b,c\n,,\n\"\",,\"\"\n",
	"header only":        "a,b,c\n",
	"header only no nl":  "a,b,c",
	"empty":              "",
	"trailing cr at eof": "a,b,c\n1,2,3\r",
	"spaces kept":        "a,b,c\n 1 , 2,3 \n",
	"lone cr in field":   "a,b,c\nx\ry,2,3\n",
}

func TestParseMatchesEncodingCSV(t *testing.T) {
	for name, data := range parseCases {
		t.Run(name, func(t *testing.T) {
			recs, err := stdParse(data)
			if err != nil {
				t.Fatal(err)
			}
			var want []Three
			if len(recs) > 0 {
				want = threes(recs[1:])
			}
			p := writeFile(t, data)
			for _, split := range []int64{1, 2, 5, 1 << 20} {
				for _, chunk := range []int{1, 3, 1 << 10} {
					src := mustOpen[Three](t, p, Options{SplitSize: split, ChunkSize: chunk, BatchRows: 2})
					got, err := readAll(t, src)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("split %d chunk %d:\n got %q\nwant %q", split, chunk, got, want)
					}
				}
			}
		})
	}
}

func TestHeaderMapsColumns(t *testing.T) {
	type Row struct {
		OrderKey int64
		Comment  string `weir:"o_comment"`
		Price    float64
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("order_key,O_COMMENT,price,extra\n1,x,1.5,e\n2,y,2.5,e\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte("price,o_comment,ORDERKEY\n3.5,z,3\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	want := []Row{{1, "x", 1.5}, {2, "y", 2.5}, {3, "z", 3.5}}
	for _, path := range []string{dir, filepath.Join(dir, "*.csv")} {
		got, err := readAll(t, mustOpen[Row](t, path, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %v", path, got)
		}
	}
	// Without a header, columns map in field order.
	p := writeFile(t, "7|a b|0.25\n8||1e3\n")
	got, err := readAll(t, mustOpen[Row](t, p, Options{NoHeader: true, Delimiter: '|'}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Row{{7, "a b", 0.25}, {8, "", 1000}}; !slices.Equal(got, want) {
		t.Fatalf("no header: got %v", got)
	}
}

type Order struct {
	OKey       int64   `weir:"o_orderkey"`
	TotalPrice float64 `weir:"o_totalprice"`
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, data, want string
	}{
		{"bad number", "o_orderkey,o_totalprice\n1,1.5\n\n2,12x.5\n",
			`line 4, column o_totalprice: parsing "12x.5": invalid syntax`},
		{"bad number after quoted newline", "o_orderkey,o_totalprice,note\n1,1,\"a\nb\"\n2,x,c\n",
			`line 4, column o_totalprice: parsing "x": invalid syntax`},
		{"out of range", "o_orderkey,o_totalprice\n99999999999999999999,1\n",
			`line 2, column o_orderkey: parsing "99999999999999999999": value out of range`},
		{"short row", "o_orderkey,o_totalprice\n1,2\n3\n", "line 3: 1 fields, want 2"},
		{"extra field", "o_orderkey,o_totalprice\n1,2,3\n", "line 2: 3 fields, want 2"},
		{"bare quote", "o_orderkey,o_totalprice\n1,2\"3\n", `line 2: bare " in non-quoted field`},
		{"text after quote", "o_orderkey,o_totalprice\n\"1\"x,2\n", `line 2: extraneous or missing " in quoted field`},
		{"unterminated", "o_orderkey,o_totalprice\n1,\"2\n", "line 2: quoted field not terminated"},
		{"null in non-pointer", "o_orderkey,o_totalprice\n1,\n", `line 2, column o_totalprice: parsing "": invalid syntax`},
	}
	for _, c := range cases {
		p := filepath.Join(t.TempDir(), "orders.csv")
		os.WriteFile(p, []byte(c.data), 0o644)
		for _, split := range []int64{1, 1 << 20} {
			_, err := readAll(t, mustOpen[Order](t, p, Options{SplitSize: split}))
			if err == nil || !strings.HasPrefix(err.Error(), "formats/csv: "+p+" ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s split %d: got %v, want %q", c.name, split, err, c.want)
			}
		}
	}
	p := writeFile(t, "o_orderkey,price\n1,2\n")
	_, err := Open[Order](p, Options{})
	if err == nil || !strings.Contains(err.Error(), "TotalPrice") || !strings.Contains(err.Error(), "o_totalprice") {
		t.Fatalf("missing column: %v", err)
	}
	if _, err := Open[Order](filepath.Join(t.TempDir(), "none.csv"), Options{}); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Open[struct{ C complex128 }](p, Options{}); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("unsupported type: %v", err)
	}
	if _, err := Open[Order](p, Options{Delimiter: '"'}); err == nil {
		t.Fatal("quote as delimiter accepted")
	}
	// Cancellation and callback errors.
	src := mustOpen[Order](t, writeFile(t, "o_orderkey,o_totalprice\n1,2\n"), Options{})
	splits, _ := src.Splits(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.Read(ctx, splits[0], func([]Order) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	boom := errors.New("boom")
	if err := src.Read(context.Background(), splits[0], func([]Order) error { return boom }); err != boom {
		t.Fatalf("callback error: %v", err)
	}
}

func TestNulls(t *testing.T) {
	type Row struct {
		I *int64
		S *string
		F *float32
		B []byte
		T *time.Time
		N string
	}
	data := "i,s,f,b,t,n\n" +
		",,,,,\n" +
		"NULL,NULL,NULL,NULL,NULL,NULL\n" +
		"\"5\",\"\",\"1.5\",\"\",\"2024-02-29\",\"NULL\"\n" +
		"-3,\"NULL\",2,xy,2024-02-29T10:11:12.5+02:00,z\n"
	p := writeFile(t, data)
	got, err := readAll(t, mustOpen[Row](t, p, Options{NullString: "NULL", BatchRows: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d rows", len(got))
	}
	for i := range 2 {
		r := got[i]
		if r.I != nil || r.S != nil || r.F != nil || r.B != nil || r.T != nil {
			t.Fatalf("row %d: not all NULL: %+v", i, r)
		}
	}
	if got[0].N != "" || got[1].N != "NULL" {
		t.Fatalf("non-pointer strings %q %q", got[0].N, got[1].N)
	}
	r := got[2]
	if *r.I != 5 || *r.S != "" || *r.F != 1.5 || r.B == nil || len(r.B) != 0 || !r.T.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) || r.N != "NULL" {
		t.Fatalf("quoted row: %+v", r)
	}
	r = got[3]
	want := time.Date(2024, 2, 29, 10, 11, 12, 5e8, time.FixedZone("", 7200))
	if *r.I != -3 || *r.S != "NULL" || *r.F != 2 || string(r.B) != "xy" || !r.T.Equal(want) {
		t.Fatalf("values row: %+v", r)
	}
	// Pointees of different rows are distinct.
	if got[2].I == got[3].I {
		t.Fatal("rows share a pointee")
	}
}

func TestLargeRecordsAndSkew(t *testing.T) {
	type Row struct {
		K    int64
		Text string
	}
	var b strings.Builder
	b.WriteString("k,text\n")
	var want []Row
	for i := range 300 {
		s := strings.Repeat(fmt.Sprintf("%d\"x,\n", i%7), (i*37)%500)
		want = append(want, Row{int64(i % 3), s})
		fmt.Fprintf(&b, "%d,\"%s\"\n", i%3, strings.ReplaceAll(s, "\"", "\"\""))
	}
	p := writeFile(t, b.String())
	for _, split := range []int64{100, 4096, 1 << 30} {
		src := mustOpen[Row](t, p, Options{SplitSize: split, ChunkSize: 512, BatchRows: 7})
		got, err := readAll(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("split %d: rows differ", split)
		}
		if got := readParallel(t, src); !slices.Equal(got, want) {
			t.Fatalf("split %d parallel: rows differ", split)
		}
	}
}

func TestStats(t *testing.T) {
	p := writeFile(t, "o_orderkey,o_totalprice\n1,2\n")
	st, err := mustOpen[Order](t, p, Options{}).Stats(context.Background())
	if err != nil || st.Bytes != 28 || st.Rows != -1 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if st.Columns != nil {
		t.Fatalf("columns %v", st.Columns)
	}
}

func TestParseDate(t *testing.T) {
	for _, s := range []string{"2024-02-29", "2023-02-29", "0000-01-01", "9999-12-31", "2024-13-01", "2024-00-10", "2024-04-31", "2024-1-011", "20x4-01-01", "2024/01/01", "+024-01-01"} {
		want, werr := time.Parse(time.DateOnly, s)
		got, ok := parseDate([]byte(s))
		if ok != (werr == nil) || (ok && !got.Equal(want)) || (ok && got.Location() != want.Location()) {
			t.Errorf("%s: got %v %v, want %v %v", s, got, ok, want, werr)
		}
	}
}

func TestCommentsAndTrim(t *testing.T) {
	data := "# leading comment, with \"quote\n a , b ,c\n#x,y\n  1 ,\" 2 \" ,  \"3\"  \n\n# end"
	p := writeFile(t, data)
	for _, split := range []int64{1, 1 << 20} {
		got, err := readAll(t, mustOpen[Three](t, p, Options{Comment: '#', TrimSpace: true, SplitSize: split, ChunkSize: 4}))
		if err != nil {
			t.Fatal(err)
		}
		if want := []Three{{"1", " 2 ", "3"}}; !slices.Equal(got, want) {
			t.Fatalf("split %d: got %q", split, got)
		}
	}
	// A tab delimiter is not trimmed: empty fields between tabs stay.
	p = writeFile(t, "a\tb\tc\n x \t\t\"\"\n\t\t\n")
	got, err := readAll(t, mustOpen[Three](t, p, Options{Delimiter: '\t', TrimSpace: true}))
	if err != nil || !slices.Equal(got, []Three{{"x", "", ""}, {"", "", ""}}) {
		t.Fatalf("tab delimiter: got %q %v", got, err)
	}
	// Without Comment, '#' is data.
	p = writeFile(t, "a,b,c\n#x,y,z\n")
	got, err = readAll(t, mustOpen[Three](t, p, Options{}))
	if err != nil || !slices.Equal(got, []Three{{"#x", "y", "z"}}) {
		t.Fatalf("got %q %v", got, err)
	}
}

func TestLongPreamble(t *testing.T) {
	// More blank and comment lines before the header than one header read.
	pre := strings.Repeat("\n", 70000) + strings.Repeat("# comment\n", 10000)
	p := writeFile(t, pre+"a,b,c\n1,2,3\n")
	got, err := readAll(t, mustOpen[Three](t, p, Options{Comment: '#'}))
	if err != nil || !slices.Equal(got, []Three{{"1", "2", "3"}}) {
		t.Fatalf("got %q %v", got, err)
	}
	p = writeFile(t, pre)
	got, err = readAll(t, mustOpen[Three](t, p, Options{Comment: '#'}))
	if err != nil || len(got) != 0 {
		t.Fatalf("comments only: %q %v", got, err)
	}
}

// TestParquetTags maps a struct carrying parquet-go's tags to CSV columns;
// a weir tag wins over a parquet tag and parquet:"-" skips a field.
func TestParquetTags(t *testing.T) {
	type line struct {
		OrderKey int64   `parquet:"l_orderkey"`
		Flag     string  `parquet:"l_returnflag,optional"`
		Price    float64 `weir:"l_extendedprice" parquet:"price"`
		Note     string  `parquet:"-"`
	}
	path := filepath.Join(t.TempDir(), "lineitem.csv")
	data := "l_returnflag,l_extendedprice,l_orderkey,note\nA,1.5,7,x\nR,2.25,9,y\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, mustOpen[line](t, path, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	want := []line{{7, "A", 1.5, ""}, {9, "R", 2.25, ""}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	type bad struct {
		Key int64 `parquet:"l_partkey"`
	}
	src, err := Open[bad](path, Options{})
	if err == nil {
		_, err = readAll(t, src)
	}
	if err == nil || !strings.Contains(err.Error(), "lineitem.csv") || !strings.Contains(err.Error(), `"l_partkey"`) {
		t.Errorf("bad mapping: err = %v", err)
	}
}
