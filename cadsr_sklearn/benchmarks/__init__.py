"""Benchmark suites, SRBench metrics and the benchmark runner."""

from .suites import SUITES, Dataset, Problem, get_problem, get_suite

__all__ = ["SUITES", "Dataset", "Problem", "get_problem", "get_suite"]
