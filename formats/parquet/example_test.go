package parquet_test

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/formats/parquet"
)

func ExampleOpen() {
	type region struct {
		Key  int64  `weir:"r_regionkey"`
		Name string `weir:"r_name"`
	}
	src, err := parquet.Open[region]("../../testdata/tpch/region.parquet", parquet.Where("r_regionkey", parquet.Between, 1, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	splits, _ := src.Splits(ctx)
	for _, sp := range splits {
		_ = src.Read(ctx, sp, func(batch []region) error {
			for _, r := range batch {
				fmt.Println(r.Key, r.Name)
			}
			return nil
		})
	}
	// Output:
	// 1 AMERICA
	// 2 ASIA
	// 3 EUROPE
}
