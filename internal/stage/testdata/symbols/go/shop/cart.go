package shop

// MaxItems bounds a cart. func NotAFunction() is not one.
const MaxItems = 50

// Cart holds items.
type Cart struct{ items []string }

// NewCart makes an empty cart.
func NewCart() *Cart { return &Cart{} }

// AddItem adds one item.
func (c *Cart) AddItem(name string) { c.items = append(c.items, name) }

func loadCart() *Cart {
	helperInner := func() *Cart { return NewCart() }
	return helperInner()
}
