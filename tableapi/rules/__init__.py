"""Optimizer rules: pure functions from plan to plan, applied in order by ``optimize``."""

from tableapi.rules.optimize import OptimizedPlan, optimize

__all__ = ["OptimizedPlan", "optimize"]
