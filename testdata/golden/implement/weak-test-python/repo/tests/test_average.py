from grade.average import average


def test_average():
    assert average([90, 80, 71]) == 80
    assert average([]) == 0
