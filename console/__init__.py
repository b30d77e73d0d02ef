"""What joulesim tells the person at the terminal besides errors: progress on long runs (also
when stderr is not a terminal) and how to install a missing extra.

Used from every layer; imports nothing of joulesim.
"""
