"""The side-by-side table, the targets next to ferry's figures, and the README block."""

from __future__ import annotations

import os
import platform
import re
import sqlite3
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bench.claim_latency import ClaimLatency
from bench.pinned import Pinned
from bench.server import Server
from bench.sizes import Sizes
from bench.stats import Percentiles, Rate, Soak
from bench.workflows import Workflows

README = Path(__file__).with_name("README.md")
_BEGIN, _END = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"
_PACKAGES = ("ferry", "pgqueuer", "procrastinate", "asyncpg", "psycopg", "redis")
_WAKE_P99_CEILING_MS = 10.0
_CPU_PER_JOB_TARGET_US = 30.0


@dataclass
class SystemFigures:
    """Everything measured for one system."""

    single: Rate | None = None
    batch: Rate | None = None
    end_to_end: dict[int, Rate] = field(default_factory=dict)
    """By worker concurrency, at the system's default settings."""
    best: Rate | None = None
    """At the system's best setting: pgqueuer at ``Sizes.pgqueuer_big_batch`` with no
    concurrency limit, ferry at ``Sizes.ferry_best_concurrency``."""
    best_asyncio: Rate | None = None
    """``best`` again with the worker on asyncio's own loop (ferry and pgqueuer run on
    uvloop by default)."""
    fleet: dict[int, Rate] = field(default_factory=dict)
    """By how many worker processes drained one queue together."""
    soak: Soak | None = None
    pinned: Pinned | None = None
    """(g) the steady stream under a pinned xmin horizon."""
    wake: Percentiles | None = None
    wake_complete: bool = True
    settings: list[str] = field(default_factory=list)


@dataclass
class Results:
    """One run: where it ran, how big it was, what every system did."""

    server: Server
    sizes: Sizes
    quick: bool
    systems: dict[str, SystemFigures]
    versions: dict[str, str]
    claims: dict[str, ClaimLatency] = field(default_factory=dict)
    """(d) by ferry system."""
    workflows: dict[str, Workflows] = field(default_factory=dict)
    """(h) and (i) by ferry system."""
    redis: str | None = None
    """The Redis server ``ferry-redis`` ran on (version and persistence), if it ran."""
    reference: Rate | None = None
    """The raw asyncpg claim+settle loop (``bench/reference.py``)."""
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    """The machine's 1-minute load average before and after the run."""


def _rate(rate: Rate | None) -> str:
    if rate is None:
        return "—"
    cpu = f" ({rate.cpu_us:,.0f} µs)" if rate.cpu_us is not None else ""
    return f"{rate.per_second:,.0f}" + ("" if rate.complete else "*") + cpu


def _soak(soak: Soak | None) -> str:
    if soak is None or not soak.warm_rss or not soak.rss:
        return "—"
    mb = 2**20
    return (
        f"{soak.warm_rss / mb:.1f} / {soak.rss / mb:.1f} MB ({soak.bytes_per_run:+,.0f} B/run)"
        + ("" if soak.rate.complete else "*")
    )


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _spread(p: Percentiles | None, complete: bool = True) -> str:
    if p is None:
        return "—"
    spread = f"{_ms(p.p50)} / {_ms(p.p95)} / {_ms(p.p99)}"
    return spread if complete else f"{spread}* ({p.samples} samples)"


def _ratio_verdict(ours: float | None, best_peer: float | None, needed: float) -> str:
    if ours is None or not best_peer:
        return "n/a"
    ratio = ours / best_peer
    return f"{ratio:.2f}× — {'met' if ratio >= needed else 'missed'}"


def _best(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def table(results: Results) -> str:
    """The Markdown table (it reads as well in a terminal as in the README)."""
    names = list(results.systems)
    ferry = results.systems.get("ferry")
    pgqueuer = results.systems.get("pgqueuer")
    procrastinate = results.systems.get("procrastinate")
    # The targets compare ferry on Postgres with the other queues, never with itself.
    peers = [f for n, f in results.systems.items() if not n.startswith("ferry")]
    sizes = results.sizes
    header = [
        "workload",
        *(f"{n} {results.versions.get(n.partition('-')[0], '')}" for n in names),
    ]
    header += ["target (ferry)", "ferry vs target"]
    rows: list[list[str]] = []

    def row(label: str, cells: list[str], target: str, verdict: str) -> None:
        rows.append([label, *cells, target, verdict])

    def per_second(rate: Rate | None) -> float | None:
        return rate.per_second if rate is not None else None

    def of(figures: SystemFigures | None, concurrency: int) -> float | None:
        return per_second(figures.end_to_end.get(concurrency)) if figures else None

    figures = list(results.systems.values())
    best_of_a = f", best of {sizes.enqueue_runs}" if sizes.enqueue_runs > 1 else ""
    best_of_b = f", best of {sizes.end_to_end_runs}" if sizes.end_to_end_runs > 1 else ""
    row(
        f"(a) enqueue, single (jobs/s, N={sizes.single:,}{best_of_a})",
        [_rate(f.single) for f in figures],
        "≥ 1.0× better peer",
        _ratio_verdict(
            per_second(ferry.single) if ferry else None,
            _best([per_second(p.single) for p in peers]),
            1.0,
        ),
    )
    row(
        f"(a) enqueue, batches of {sizes.batch:,} (jobs/s, N={sizes.batch_total:,}{best_of_a})",
        [_rate(f.batch) for f in figures],
        "≥ 1.2× better peer",
        _ratio_verdict(
            per_second(ferry.batch) if ferry else None,
            _best([per_second(p.batch) for p in peers]),
            1.2,
        ),
    )
    targets = {1: (procrastinate, 2.0, "procrastinate"), 32: (pgqueuer, 3.0, "pgqueuer")}
    for concurrency in sizes.concurrencies:
        peer, needed, peer_name = targets.get(concurrency, (None, 0.0, ""))
        row(
            f"(b) end-to-end no-op, concurrency {concurrency} "
            f"(jobs/s, {sizes.end_to_end:,} pre-filled{best_of_b})",
            [_rate(f.end_to_end.get(concurrency)) for f in figures],
            f"≥ {needed:g}× {peer_name}" if peer else "—",
            _ratio_verdict(of(ferry, concurrency), of(peer, concurrency), needed) if peer else "—",
        )
    ferry_best = _fastest(ferry)
    row(
        f"(b) … best setting: ferry concurrency {sizes.ferry_best_concurrency}, pgqueuer "
        f"batch_size={sizes.pgqueuer_big_batch} with no limit",
        [_rate(f.best) for f in figures],
        f"best ≥ 1.5× pgqueuer's best; CPU ≤ {_CPU_PER_JOB_TARGET_US:.0f} µs/job",
        _ratio_verdict(
            per_second(ferry_best),
            per_second(_fastest(pgqueuer)),
            1.5,
        )
        + (
            f"; CPU {ferry_best.cpu_us:.0f} µs — "
            f"{'met' if ferry_best.cpu_us <= _CPU_PER_JOB_TARGET_US else 'missed'}"
            if ferry_best is not None and ferry_best.cpu_us is not None
            else ""
        ),
    )
    row(
        "(b) … the same best settings, the worker on asyncio's own loop (not uvloop)",
        [_rate(f.best_asyncio) for f in figures],
        "—",
        "—",
    )
    one_process = per_second(ferry.fleet.get(1)) if ferry else None
    for processes in sizes.shared_processes:
        scaling = processes == 2 and one_process is not None
        row(
            f"(b) … {processes} worker process{'es' if processes > 1 else ''} on one queue, "
            f"concurrency {sizes.shared_concurrency} each",
            [_rate(f.fleet.get(processes)) for f in figures],
            "≥ 1.5× one process" if processes == 2 else "—",
            _ratio_verdict(per_second(ferry.fleet.get(2)) if ferry else None, one_process, 1.5)
            if scaling
            else "—",
        )
    row(
        f"(c) enqueue→start p50 / p95 / p99 (ms), {sizes.latency_rate:.0f} jobs/s, "
        f"{sizes.latency_samples} samples",
        [_spread(f.wake, f.wake_complete) for f in figures],
        f"p50 ≤ better peer; p99 < {_WAKE_P99_CEILING_MS:.0f} ms",
        _wake_verdict(ferry, peers),
    )
    claims = results.claims
    if claims:

        def per_ferry(cell: Callable[[ClaimLatency], str]) -> list[str]:
            return [cell(claims[n]) if n in claims else "—" for n in names]

        row(
            f"(d) claim+ack of {sizes.claim_batch}, empty table (rated runs waiting, the claimer "
            "runs no rated job) p50 / p99 (ms)",
            per_ferry(lambda c: f"{_ms(c.empty.p50)} / {_ms(c.empty.p99)}"),
            "—",
            "—",
        )
        row(
            "(d) … the claimer also runs a rated job (the rated claim, same run, interleaved) "
            "p50 / p99 (ms)",
            per_ferry(lambda c: f"{_ms(c.rated_present.p50)} / {_ms(c.rated_present.p99)}"),
            "a worker with no rated job pays nothing",
            "; ".join(
                f"{n} {c.rated_present.p50 / c.empty.p50:.2f}× empty p50" for n, c in claims.items()
            ),
        )
        row(
            f"(d) … claim+ack of {sizes.claim_batch} rated runs (100 keys, each start "
            "checked) p50 / p99 (ms)",
            per_ferry(lambda c: f"{_ms(c.rated.p50)} / {_ms(c.rated.p99)}"),
            "—",
            "—",
        )
        row(
            f"(d) … with {sizes.retained:,} completed rows p50 / p99 (ms)",
            per_ferry(lambda c: f"{_ms(c.retained.p50)} / {_ms(c.retained.p99)}"),
            "within 2× of empty",
            "; ".join(f"{n} {_flat_verdict(c)}" for n, c in claims.items()),
        )
    row(
        f"(e) worker RSS after {sizes.soak_warm_runs:,} / {sizes.soak_runs:,} runs, "
        f"concurrency {sizes.shared_concurrency}",
        [_soak(f.soak) for f in figures],
        "within 10 %",
        _soak_verdict(ferry.soak if ferry else None),
    )
    if any(f.pinned is not None for f in figures):
        row(
            f"(g) pinned xmin horizon, {sizes.pinned_rate:.0f} jobs/s for {sizes.pinned_s:.0f} "
            "s: claim p50 / p99 (ms), unpinned → pinned",
            [_pinned_claims(f.pinned) for f in figures],
            "pinned p50 ≤ 3× unpinned",
            _pinned_verdict(ferry.pinned if ferry else None),
        )
        row(
            "(g) … jobs started/s while pinned; dead tuples at pin start / end / "
            f"{sizes.pinned_after_s:.0f} s after release",
            [_pinned_tuples(f.pinned) for f in figures],
            "throughput held",
            _held_verdict(ferry.pinned if ferry else None),
        )
    workflows = results.workflows
    if workflows:

        def per_driver(cell: Callable[[Workflows], str]) -> list[str]:
            return [cell(workflows[n]) if n in workflows else "—" for n in names]

        row(
            f"(h) a fan-out of {sizes.fan_out_children:,} children end to end: parent enqueued "
            "→ its result in hand (s; children/s)",
            per_driver(
                lambda w: (
                    f"{w.fan_out_seconds:.1f} s; {w.fan_out_children / w.fan_out_seconds:,.0f}/s"
                )
            ),
            "—",
            "—",
        )
        row(
            f"(i) result wait, enqueue → result in hand, another process working, p50 / p99 "
            f"(ms), {sizes.result_samples} runs one at a time",
            per_driver(lambda w: f"{_ms(w.result_wait.p50)} / {_ms(w.result_wait.p99)}"),
            "—",
            "—",
        )
    reference = results.reference
    if reference is not None:
        best = per_second(ferry_best)
        row(
            f"(f) physical reference: raw asyncpg claim+settle, batches of "
            f"{sizes.reference_batch} (rows/s)",
            ["—" for _ in names],
            _rate(reference),
            f"ferry's best is {best / reference.per_second:.0%} of it (target ≥ 35 %) — "
            f"{'met' if best / reference.per_second >= 0.35 else 'missed'}"
            if best and reference.per_second
            else "—",
        )
    return _markdown([header, *rows])


def _pinned_claims(pinned: Pinned | None) -> str:
    if pinned is None:
        return "—"
    u, p = pinned.unpinned, pinned.pinned
    return f"{_ms(u.p50)} / {_ms(u.p99)} → {_ms(p.p50)} / {_ms(p.p99)}"


def _pinned_tuples(pinned: Pinned | None) -> str:
    if pinned is None:
        return "—"
    return (
        f"{pinned.pinned_throughput:,.0f}; {pinned.dead_start:,} / {pinned.dead_end:,} / "
        f"{pinned.dead_after:,}"
    )


def _pinned_verdict(pinned: Pinned | None) -> str:
    if pinned is None or not pinned.unpinned.p50:
        return "n/a"
    ratio = pinned.pinned.p50 / pinned.unpinned.p50
    return f"{ratio:.2f}× — {'met' if ratio <= 3 else 'missed'}"


def _held_verdict(pinned: Pinned | None) -> str:
    if pinned is None:
        return "n/a"
    share = pinned.pinned_throughput / pinned.rate
    return f"{share:.0%} of the rate — {'met' if share >= 0.95 else 'missed'}"


def _fastest(figures: SystemFigures | None) -> Rate | None:
    """A system's fastest single-process drain, whatever its setting: its best."""
    if figures is None:
        return None
    drains = [r for r in (figures.best, *figures.end_to_end.values()) if r is not None]
    return max(drains, key=lambda r: r.per_second) if drains else None


def _soak_verdict(soak: Soak | None) -> str:
    if soak is None or not soak.warm_rss or not soak.rss:
        return "n/a"
    return f"{soak.growth:+.1%} — {'met' if soak.growth <= 0.10 else 'missed'}"


def _wake_verdict(ferry: SystemFigures | None, peers: list[SystemFigures]) -> str:
    if ferry is None or ferry.wake is None:
        return "n/a"
    peer_p50 = [p.wake.p50 for p in peers if p.wake is not None]
    p50_ok = not peer_p50 or ferry.wake.p50 <= min(peer_p50)
    p99_ok = ferry.wake.p99 < _WAKE_P99_CEILING_MS
    parts = [
        f"p50 {'met' if p50_ok else 'missed'}" if peer_p50 else "p50 n/a",
        f"p99 {'met' if p99_ok else 'missed'}",
    ]
    return ", ".join(parts)


def _flat_verdict(claim: ClaimLatency) -> str:
    p50 = claim.retained.p50 / claim.empty.p50
    p99 = claim.retained.p99 / claim.empty.p99
    met = p50 <= 2 and p99 <= 2
    return f"p50 {p50:.2f}×, p99 {p99:.2f}× — {'met' if met else 'missed'}"


def _markdown(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def package_versions() -> dict[str, str]:
    """Installed versions of the systems and their database clients."""
    found = {}
    for name in _PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def environment(results: Results) -> str:
    """Machine, server, versions and date, as a Markdown list."""
    server = results.server
    packages = ", ".join(f"{n} {v}" for n, v in results.versions.items())
    return "\n".join(
        [
            f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; whole run "
            f"{results.seconds / 60:.1f} min ({'--quick' if results.quick else 'full'})",
            f"- Machine: {os.cpu_count()} CPUs ({_cpu_model()}), {_memory_gib():.0f} GiB memory, "
            f"{platform.system()} {platform.release()}; load average "
            f"{results.load[0]:.1f} before, {results.load[1]:.1f} after",
            f"- Server: {server.version} ({server.where}), fsync={server.fsync}, "
            f"synchronous_commit={server.synchronous_commit}; workers and the bench share "
            "the machine with it",
            *(
                [
                    f"- SQLite {sqlite3.sqlite_version} (WAL) for ferry-sqlite: a file per "
                    "workload in the temporary folder on the machine's disk, "
                    "synchronous=FULL (ferry-sqlite-normal: NORMAL); no server"
                ]
                if any(n.startswith("ferry-sqlite") for n in results.systems)
                else []
            ),
            *(
                [f"- Redis (ferry-redis): {results.redis}, on the same machine"]
                if results.redis
                else []
            ),
            f"- Python {platform.python_version()}; {packages}; ferry source {_revision()}",
        ]
    )


def footnotes(results: Results) -> str:
    """How each system's worker was configured, and what a starred figure means."""
    lines = [f"- {name}: {'; '.join(f.settings)}" for name, f in results.systems.items()]
    lines.append(
        "- (b), (e) and (f) cells: jobs/s, and in brackets the CPU time the worker "
        "process(es) spent per job (`time.process_time`, first body to the end)."
    )
    lines.append(
        f"- `*` stopped at its bound ({results.sizes.drain_timeout_s:.0f} s for a drain) before "
        "finishing; the figure is the rate over the jobs finished by then."
    )
    return "\n".join(lines)


def render(results: Results) -> str:
    """Everything the run prints, and the README block."""
    return "\n\n".join([environment(results), table(results), footnotes(results)])


def write_readme(block: str) -> None:
    """Replace the results block of ``bench/README.md`` with ``block``."""
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(_BEGIN) + r".*?" + re.escape(_END), re.S)
    README.write_text(
        pattern.sub(lambda _: f"{_BEGIN}\n{block}\n{_END}", text, count=1), encoding="utf-8"
    )


def _revision() -> str:
    """The git commit ferry was measured at, marked when the working tree had changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "runtime"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} + uncommitted changes" if dirty else head


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0
