"""Carts.

def NotAFunction(): this is a docstring, not a declaration.
"""
import functools

MAX_ITEMS = 50
default_tax: float = 0.2


@functools.total_ordering
class Cart:
    """A cart of items."""

    def __init__(self):
        self.items = []

    @property
    def size(self):
        return len(self.items)

    def add_item(self, name):
        # def not_a_method(): a comment
        self.items.append(name)

    async def checkout_async(self):
        def helper_inner():
            return 1
        return helper_inner()


def new_cart():
    s = "class NotAClass:"
    return Cart()


async def load_cart(
    path,
    strict=False,
):
    return new_cart()
