def average(scores):
    """The mean of the scores, rounded down; 0 for none."""
    if not scores:
        return 0
    return sum(scores) // len(scores)
