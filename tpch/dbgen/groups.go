package dbgen

// The table groups Generate writes: tables generated together share a
// driving row (an order and its lines, a part and its suppliers).

func (g *generation) orders(wantOrders, wantLines bool) error {
	type block struct {
		orders []Order
		lines  []Lineitem
	}
	var ws []openFile
	var cons []func(*block) error
	err := func() error {
		if wantOrders {
			if err := open(g, &ws, &cons, "orders", func(b *block) []Order { return b.orders }); err != nil {
				return err
			}
		}
		if wantLines {
			if err := open(g, &ws, &cons, "lineitem", func(b *block) []Lineitem { return b.lines }); err != nil {
				return err
			}
		}
		return runGroup(g, g.sc.Rows("orders"), orderBlock, func(b *block, from, to int64) {
			b.orders, b.lines = b.orders[:0], b.lines[:0]
			gen := newOrderGen(g.sc, from)
			var ls [maxLines]Lineitem
			for i := from; i < to; i++ {
				b.orders = append(b.orders, Order{})
				n := gen.next(i+1, &b.orders[len(b.orders)-1], &ls)
				b.lines = append(b.lines, ls[:n]...)
			}
		}, cons)
	}()
	return g.finish(ws, err)
}

func (g *generation) parts(wantParts, wantSupps bool) error {
	type block struct {
		parts []Part
		supps []PartSupp
	}
	var ws []openFile
	var cons []func(*block) error
	err := func() error {
		if wantParts {
			if err := open(g, &ws, &cons, "part", func(b *block) []Part { return b.parts }); err != nil {
				return err
			}
		}
		if wantSupps {
			if err := open(g, &ws, &cons, "partsupp", func(b *block) []PartSupp { return b.supps }); err != nil {
				return err
			}
		}
		return runGroup(g, g.sc.Rows("part"), partBlock, func(b *block, from, to int64) {
			b.parts, b.supps = b.parts[:0], b.supps[:0]
			gen := newPartGen(g.sc, from)
			var ps [suppPerPart]PartSupp
			for i := from; i < to; i++ {
				b.parts = append(b.parts, Part{})
				gen.next(i+1, &b.parts[len(b.parts)-1], &ps)
				b.supps = append(b.supps, ps[:]...)
			}
		}, cons)
	}()
	return g.finish(ws, err)
}

func (g *generation) customers() error {
	type block struct{ rows []Customer }
	var ws []openFile
	var cons []func(*block) error
	err := func() error {
		if err := open(g, &ws, &cons, "customer", func(b *block) []Customer { return b.rows }); err != nil {
			return err
		}
		return runGroup(g, g.sc.Rows("customer"), otherBlock, func(b *block, from, to int64) {
			b.rows = b.rows[:0]
			gen := newCustomerGen(from)
			for i := from; i < to; i++ {
				b.rows = append(b.rows, Customer{})
				gen.next(i+1, &b.rows[len(b.rows)-1])
			}
		}, cons)
	}()
	return g.finish(ws, err)
}

func (g *generation) suppliers() error {
	type block struct{ rows []Supplier }
	var ws []openFile
	var cons []func(*block) error
	err := func() error {
		if err := open(g, &ws, &cons, "supplier", func(b *block) []Supplier { return b.rows }); err != nil {
			return err
		}
		return runGroup(g, g.sc.Rows("supplier"), otherBlock, func(b *block, from, to int64) {
			b.rows = b.rows[:0]
			gen := newSupplierGen(from)
			for i := from; i < to; i++ {
				b.rows = append(b.rows, Supplier{})
				gen.next(i+1, &b.rows[len(b.rows)-1])
			}
		}, cons)
	}()
	return g.finish(ws, err)
}
