"""The issue's acceptance for letter, held back from the agent.

letter is imported inside the test: at main, where grade/letter.py does not
exist, only this test fails, and the repository's own tests still run (an
import at the top would stop pytest's collection, and every test with it).
"""


def test_hidden_grade_bands():
    """90 or more is an A, 80 to 89 a B, below 80 a C."""
    from grade.letter import letter

    for score, want in {100: "A", 95: "A", 90: "A", 89: "B", 85: "B", 80: "B", 79: "C", 50: "C", 0: "C"}.items():
        assert letter(score) == want, f"letter({score}) = {letter(score)!r}, want {want!r}"
