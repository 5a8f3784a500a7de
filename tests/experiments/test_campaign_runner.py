"""The one campaign loop (tcpmodels.experiments.campaign.run_samples), with a stand-in testbed: no root needed."""

import pytest

from tcpmodels.experiments.campaign import run_samples
from tcpmodels.records import JsonlRecords
from tcpmodels.testbed import TestbedError


class FakeSession:
    opened = 0
    closed = 0

    def __init__(self, delay):
        self.delay = delay

    def __enter__(self):
        FakeSession.opened += 1
        return self

    def __exit__(self, *exc):
        FakeSession.closed += 1


@pytest.fixture(autouse=True)
def _reset():
    FakeSession.opened = FakeSession.closed = 0


def _session_for(s, session):
    if session is None:
        return FakeSession(s["delay"]).__enter__()
    session.delay = s["delay"]
    return session


PLAN = [{"k": i, "order": i, "delay": 10 * i} for i in range(4)]


def test_runs_what_is_pending_reuses_the_testbed_and_resumes(tmp_path):
    records = JsonlRecords(tmp_path / "r.jsonl", ("k",))
    seen = []

    def measure(s, session):
        seen.append((s["k"], session.delay))
        return {"y": s["k"] ** 2}

    kw = dict(desc="t", session_for=_session_for, progress=False, lock_path=tmp_path / "lock", yield_s=0.0)
    assert run_samples(records, PLAN, measure, limit=2, **kw) == 2
    assert run_samples(records, PLAN, measure, **kw) == 2  # only the two not yet recorded
    assert run_samples(records, PLAN, measure, **kw) == 0
    assert seen == [(0, 0), (1, 10), (2, 20), (3, 30)]
    recs = records.read()
    assert [r["y"] for r in recs] == [0, 1, 4, 9]
    assert all({"load_avg", "load_avg_after", "lock_wait_s", "wall_s", "started_utc"} <= set(r) for r in recs)
    assert FakeSession.opened == FakeSession.closed == 2  # one testbed per call that ran samples


def test_a_failed_testbed_is_rebuilt_and_three_failures_in_a_row_propagate(tmp_path, capsys):
    records = JsonlRecords(tmp_path / "r.jsonl", ("k",))
    attempts = []

    def flaky(s, session):
        attempts.append(s["k"])
        if s["k"] == 1 and attempts.count(1) == 1:
            raise TestbedError("link went away")
        return {}

    kw = dict(desc="t", session_for=_session_for, progress=False, lock_path=tmp_path / "lock", yield_s=0.0)
    assert run_samples(records, PLAN, flaky, **kw) == 3  # sample 1 failed once and was skipped this time
    assert "rebuilding the testbed" in capsys.readouterr().err
    assert FakeSession.opened == 2 and FakeSession.closed == 2
    assert run_samples(records, PLAN, flaky, **kw) == 1  # the rerun picks it up

    def broken(s, session):
        raise TestbedError("no")

    with pytest.raises(TestbedError):
        run_samples(JsonlRecords(tmp_path / "b.jsonl", ("k",)), PLAN, broken, **kw)
    assert FakeSession.opened == FakeSession.closed


def test_samples_off_the_host_take_no_lock_and_finish_runs_after_it(tmp_path):
    records = JsonlRecords(tmp_path / "r.jsonl", ("k",))
    lock = tmp_path / "locks" / "lock"  # host_lock would create its folder
    n = run_samples(records, PLAN[:2], lambda s, session: {"raw": s["k"]}, desc="t", on_host=lambda s: False,
                    finish=lambda s, res: {"done": res["raw"] + 1}, progress=False, lock_path=lock)
    assert n == 2 and [r["done"] for r in records.read()] == [1, 2]
    assert all(r["lock_wait_s"] == 0.0 and "raw" not in r for r in records.read())
    assert not lock.parent.exists()


def test_a_stop_time_ends_the_call_at_a_sample_boundary(tmp_path, monkeypatch, capsys):
    """The sample running at the stop time finishes and is recorded; the next does not start."""
    from datetime import datetime, timezone

    import tcpmodels.experiments.campaign as campaign

    clock = iter([datetime(2026, 12, 7, 11, m, tzinfo=timezone.utc) for m in (30, 34, 35, 36)])

    class FakeDatetime(datetime):
        @classmethod
        def now(cls, tz=None):
            return next(clock)

    monkeypatch.setattr(campaign, "datetime", FakeDatetime)
    records = JsonlRecords(tmp_path / "r.jsonl", ("k",))
    kw = dict(desc="t", session_for=_session_for, progress=False, lock_path=tmp_path / "lock", yield_s=0.0)
    assert run_samples(records, PLAN, lambda s, session: {}, stop_at_utc="2026-12-07T11:35", **kw) == 2
    assert [r["k"] for r in records.read()] == [0, 1]
    assert "stopped by the clock at 2026-12-07T11:35 UTC after 2 samples" in capsys.readouterr().err


def test_a_stop_time_that_is_not_a_time_is_a_clear_error(tmp_path):
    records = JsonlRecords(tmp_path / "r.jsonl", ("k",))
    with pytest.raises(ValueError, match=r"'half past eleven' is not an ISO 8601 time"):
        run_samples(records, PLAN, lambda s, session: {}, desc="t", progress=False, stop_at_utc="half past eleven")
    assert not (tmp_path / "r.jsonl").exists() or records.read() == []
