def pytest_terminal_summary(terminalreporter):
    """The schema fuzzer's case count, so every CI log shows how much was fuzzed."""
    from tests.proof import fuzz_stats

    if not fuzz_stats.cases:
        return
    runs: dict[str, list[int]] = {}
    for key, count in fuzz_stats.cases.items():
        run = key.split(":", 1)[0]
        runs.setdefault(run, []).append(count)
    total = sum(fuzz_stats.cases.values())
    detail = ", ".join(
        f"{run}: {sum(counts)} cases over {len(counts)} operations"
        for run, counts in sorted(runs.items())
    )
    terminalreporter.write_line(f"schemathesis: {total} cases ({detail})")
