"""How much the schema fuzzer ran, for the line pytest prints at the end of the run."""

from collections import Counter

cases: Counter[str] = Counter()  # "<run>: <METHOD path>" -> cases sent
