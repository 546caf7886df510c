from greet import hello


def test_hello():
    assert hello("Ada") == "Hello, Ada!"
