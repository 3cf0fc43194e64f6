"""The JVM operators' timer service (``TimerService.java``) under flatMapGroupsWithState's
calls, in memory (``TimerCases.java`` through the harness): many timers per key, firing
order, deletion, watermark jumps, both clocks, and a restart from the state's bytes."""

from __future__ import annotations

from typing import Any

from tests.unit.server_ext.jvm_harness import run_cases


def _case(wake_by: str, batches: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"timers": True, "wake_by": wake_by, "batches": batches, **extra}


def _reg(key: int, time: int, tag: int = 0, domain: str = "event") -> list[Any]:
    return [key, "register", domain, time, tag]


def _del(key: int, time: int, tag: int = 0, domain: str = "event") -> list[Any]:
    return [key, "delete", domain, time, tag]


def test_many_event_time_timers_per_key_fire_in_time_order_as_the_watermark_passes() -> None:
    times = [50, 10, 30, 20, 40, 30]  # 30 twice: one timer (registering again is a no-op)
    [result] = run_cases(
        [
            _case(
                "event",
                [
                    {"now": 0, "watermark": 0, "ops": [_reg(1, t) for t in times] + [_reg(2, 25)]},
                    {"now": 0, "watermark": 19},  # nothing at or before 19... but 10
                    {"now": 0, "watermark": 30},  # 20 and 30 (at the watermark: due), key 2's 25
                    {"now": 0, "watermark": 30},  # the watermark stands still: nothing
                    {"now": 0, "watermark": 1000},  # a jump past the rest: all, in order
                ],
            )
        ]
    )
    assert result["batches"] == [
        [],
        [[1, "event", 10, 0]],
        [[1, "event", 20, 0], [1, "event", 30, 0], [2, "event", 25, 0]],
        [],
        [[1, "event", 40, 0], [1, "event", 50, 0]],
    ]
    assert result["state_keys"] == 0  # no timers and no value left: no state


def test_ties_fire_by_tag_and_deleted_timers_do_not_fire() -> None:
    [result] = run_cases(
        [
            _case(
                "event",
                [
                    {
                        "now": 0,
                        "watermark": 0,
                        "ops": [_reg(1, 10, 3), _reg(1, 10, 1), _reg(1, 10, 2)],
                    },
                    {"now": 0, "watermark": 5, "ops": [_del(1, 10, 2), _del(1, 99, 0)]},
                    {"now": 0, "watermark": 10},
                ],
            )
        ]
    )
    assert result["batches"] == [[], [], [[1, "event", 10, 1], [1, "event", 10, 3]]]


def test_a_timer_registered_while_firing_fires_in_the_same_call_when_due() -> None:
    [result] = run_cases(
        [
            _case(
                "event",
                [
                    {"now": 0, "watermark": 0, "ops": [_reg(1, 10, 1)]},
                    {"now": 0, "watermark": 35},  # 10 -> 20 -> 30 -> 40 (not due)
                ],
                rearm_ms=10,
            )
        ]
    )
    assert result["batches"][1] == [[1, "event", t, 1] for t in (10, 20, 30)]
    assert result["pending"] == {"1": [["event", 40, 1]]}


def test_timers_survive_a_restart_from_the_state() -> None:
    [result] = run_cases(
        [
            _case(
                "event",
                [
                    {
                        "now": 0,
                        "watermark": 0,
                        "ops": [_reg(k, t, k) for k in (1, 2) for t in (10, 20)],
                    },
                    {"now": 0, "watermark": 10},
                    {"now": 0, "watermark": 10, "restart": True, "ops": [_reg(1, 15, 9)]},
                    {"now": 0, "watermark": 20},
                ],
            )
        ]
    )
    assert result["batches"] == [
        [],
        [[1, "event", 10, 1], [2, "event", 10, 2]],
        [],
        [[1, "event", 15, 9], [1, "event", 20, 1], [2, "event", 20, 2]],
    ]


def test_processing_time_timers_fire_as_the_clock_passes_them() -> None:
    ops = [_reg(1, t, 0, "processing") for t in (1500, 1100, 3000)]
    [result] = run_cases(
        [
            _case(
                "processing",
                [
                    {"now": 1000, "ops": ops},
                    {"now": 1099},
                    {"now": 1100},  # at its time: due
                    {"now": 2000, "ops": [_del(1, 3000, 0, "processing")]},  # 1500 fires first
                    {"now": 9000},
                ],
            )
        ]
    )
    assert result["batches"] == [
        [],
        [],
        [[1, "processing", 1100, 0]],
        [[1, "processing", 1500, 0]],
        [],
    ]
    assert result["state_keys"] == 0


def test_timers_of_the_other_clock_fire_at_the_keys_next_call() -> None:
    """A query has one timeout domain: an event-time operator's processing-time timers wake
    no key, they fire when the key is next called (here by its event-time timer)."""
    [result] = run_cases(
        [
            _case(
                "event",
                [
                    {"now": 0, "watermark": 0, "ops": [_reg(1, 100, 0, "processing"), _reg(1, 50)]},
                    {"now": 500, "watermark": 10},  # the clock passed 100: no call, no firing
                    {"now": 500, "watermark": 60},  # called by the event timer: both fire
                ],
            )
        ]
    )
    assert result["batches"] == [[], [], [[1, "event", 50, 0], [1, "processing", 100, 0]]]
