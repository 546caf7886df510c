"""Greet people by name."""


def hello(name):
    """Return a greeting for name."""
    return f"Hello, {name}!"
