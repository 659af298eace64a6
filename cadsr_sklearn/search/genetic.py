"""Genetic programming inside the loop: the policy's batch seeds a population, a few
generations recombine it, and its best children join the epoch (DSO's "GP meld").

The policy writes a formula token by token, and rarely gets two right sub-trees in one
sample: a law such as ``m0/sqrt(1 - v**2/c**2)`` needs the sum inside the root and the
quotient around it at once. Recombining sub-trees that the batch already holds is what
genetic operators do well (Mundhenk et al., NeurIPS 2021: 65 % more laws than DSR at the
same budget). Each epoch (:class:`GeneticStage`):

1. the population is the epoch's scored batch and the replay buffer (a random subset of
   them when they are more than ``genetic_population``);
2. each generation draws parents by tournament (the highest reward of
   ``tournament_size``), crosses pairs over with probability ``crossover_rate``
   (one random sub-tree of each swapped) and mutates each child with probability
   ``mutation_rate`` (one of: a random sub-tree replaces one, a node becomes another
   token of its arity, a new operator is inserted above a sub-tree, or a node is
   replaced by one of its sub-trees);
3. a child the sampler could not have written (length, the hard constraints,
   ``max_constants``, the required features, the units) is replaced by its parent, as
   DSO does; the children are fitted and scored by the search's own scorer and its
   cache, and replace the population;
4. the ``genetic_elites`` best new formulas (by reward) enter the epoch's selection
   beside the policy's samples; every child scored can become τ* or join the hall of
   fame.

The trees are edited in preorder (a sub-tree is a contiguous run of tokens there) and
handed back in the breadth-first order the rest of the search uses.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..sampling.constraints import Constraints
from ..scoring.scorer import Candidate, Scorer
from ..settings import TrainingSettings

__all__ = ["GeneticStage", "GeneticResult", "breadth_first", "crossover", "mutate",
           "subtree_end"]

#: Depth of the random sub-trees that a mutation grows (a root at depth 0).
NEW_SUBTREE_DEPTH = 2


def subtree_end(prefix: Sequence[int], start: int, arity: Sequence[int]) -> int:
    """One past the last token of the sub-tree rooted at ``prefix[start]`` (preorder)."""
    open_slots, i = 1, start
    while open_slots:
        open_slots += arity[prefix[i]] - 1
        i += 1
    return i


def breadth_first(prefix: Sequence[int], arity: Sequence[int]) -> list[int]:
    """The tokens of a preorder tree in breadth-first order (the search's)."""
    children: list[list[int]] = [[] for _ in prefix]
    open_nodes: list[int] = []  # nodes still missing children, innermost last
    for i, token in enumerate(prefix):
        if open_nodes:
            parent = open_nodes[-1]
            children[parent].append(i)
            if len(children[parent]) == arity[prefix[parent]]:
                open_nodes.pop()
        if arity[token]:
            open_nodes.append(i)
    order = [0]
    for i in order:
        order.extend(children[i])
    return [prefix[i] for i in order]


def crossover(a: list[int], b: list[int], arity: Sequence[int],
              rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """One-point sub-tree crossover: a random sub-tree of each parent swapped (preorder)."""
    i, j = int(rng.integers(len(a))), int(rng.integers(len(b)))
    i_end, j_end = subtree_end(a, i, arity), subtree_end(b, j, arity)
    return a[:i] + b[j:j_end] + a[i_end:], b[:j] + a[i:i_end] + b[j_end:]


class _Grammar:
    """The tokens a mutation draws from, by arity."""

    def __init__(self, library: Library) -> None:
        self.arity = library.arity_by_id
        self.terminals = [int(t) for t in library.terminal_ids]
        self.unary = [int(t) for t in library.unary_ids]
        self.binary = [int(t) for t in library.binary_ids]
        self.by_arity = {0: self.terminals, 1: self.unary, 2: self.binary}
        self.operators = self.unary + self.binary

    def random_tree(self, rng: np.random.Generator, depth: int = NEW_SUBTREE_DEPTH) -> list[int]:
        """A random sub-tree (preorder) of at most ``depth`` levels below its root: at each
        node a terminal, a unary or a binary operator with equal odds (the uniform-arity
        prior of the sampler), then a token of that kind."""
        kinds = [k for k in (0, 1, 2) if self.by_arity[k]] if depth > 0 else [0]
        kind = kinds[int(rng.integers(len(kinds)))]
        tokens = self.by_arity[kind]
        out = [tokens[int(rng.integers(len(tokens)))]]
        for _ in range(kind):
            out += self.random_tree(rng, depth - 1)
        return out


def mutate(tree: list[int], grammar: _Grammar, rng: np.random.Generator) -> list[int]:
    """One of DSO's four mutations, chosen uniformly, at a random node (preorder)."""
    arity = grammar.arity
    i = int(rng.integers(len(tree)))
    end = subtree_end(tree, i, arity)
    kind = int(rng.integers(4))
    if kind == 0:  # a random sub-tree replaces the one at i
        return tree[:i] + grammar.random_tree(rng) + tree[end:]
    if kind == 1:  # node replacement: another token of the same arity
        choices = [t for t in grammar.by_arity[arity[tree[i]]] if t != tree[i]]
        if not choices:
            return tree
        return tree[:i] + [choices[int(rng.integers(len(choices)))]] + tree[i + 1:]
    if kind == 2:  # insertion: a new operator above the sub-tree at i
        op = grammar.operators[int(rng.integers(len(grammar.operators)))]
        if arity[op] == 1:
            return tree[:i] + [op] + tree[i:end] + tree[end:]
        other = grammar.random_tree(rng, depth=0)
        pair = tree[i:end] + other if rng.random() < 0.5 else other + tree[i:end]
        return tree[:i] + [op] + pair + tree[end:]
    # shrink: the node at i replaced by one of its sub-trees (hoisting it)
    if arity[tree[i]] == 0:
        return tree
    child, starts = i + 1, []
    for _ in range(arity[tree[i]]):
        starts.append(child)
        child = subtree_end(tree, child, arity)
    s = starts[int(rng.integers(len(starts)))]
    return tree[:i] + tree[s:subtree_end(tree, s, arity)] + tree[end:]


@dataclass
class GeneticResult:
    """One epoch's genetic stage: what it gives the epoch, and what it cost."""

    elites: list[Candidate]  # the best new formulas, for the epoch's selection
    scored: list[Candidate]  # every distinct formula it scored (the hall of fame, τ*)
    evaluations: int  # formulas scored, a generation's distinct children each
    generations: int  # generations run (fewer than asked when the budget ran out)


class GeneticStage:
    """The genetic stage of an epoch, with its own random generator.

    Parameters
    ----------
    library : Library
    constraints : Constraints
        The sampler's: a child must obey them as a sample does.
    rng : numpy.random.Generator
        Every draw of the stage (a checkpoint keeps it, so that a resumed search goes on
        with the draws an uninterrupted one would make).
    """

    def __init__(self, library: Library, constraints: Constraints,
                 rng: np.random.Generator) -> None:
        self.library, self.constraints, self.rng = library, constraints, rng
        self.grammar = _Grammar(library)
        self._prefixes: dict[tuple, list[int]] = {}  # the trees of a run in preorder

    def run(self, seeds: list[Candidate], scorer: Scorer, config: TrainingSettings,
            deadline: float | None = None,
            evaluations_left: int | None = None) -> GeneticResult:
        """``config.genetic_generations`` generations from ``seeds`` (scored candidates);
        no generation starts once ``time.perf_counter()`` has passed ``deadline`` or
        ``evaluations_left`` formulas have been scored."""
        population = self._initial(seeds, config.genetic_population)
        seen = {c.expression.key for c in seeds}
        scored: dict[tuple, Candidate] = {}
        evaluations = generations = 0
        for _ in range(config.genetic_generations):
            if (len(population) < 2 or (deadline is not None and time.perf_counter() > deadline)
                    or (evaluations_left is not None and evaluations >= evaluations_left)):
                break
            children = self._offspring(population, config)
            distinct = list({e.key: e for e in children}.values())
            by_key = {c.expression.key: c for c in scorer(distinct)}
            evaluations += len(distinct)
            generations += 1
            population = [by_key[e.key] for e in children]
            for key, cand in by_key.items():
                if key not in seen:
                    scored[key] = cand
        self._prefixes.clear()  # not part of a checkpoint
        finite = [c for c in scored.values() if math.isfinite(c.reward)]
        finite.sort(key=lambda c: -c.reward)
        return GeneticResult(finite[:config.genetic_elites], list(scored.values()), evaluations,
                             generations)

    def _initial(self, seeds: list[Candidate], size: int) -> list[Candidate]:
        """The first population: the seeds whose reward is finite, a random ``size`` of them."""
        finite = [c for c in seeds if math.isfinite(c.reward)]
        if len(finite) <= size:
            return finite
        return [finite[i] for i in np.sort(self.rng.choice(len(finite), size, replace=False))]

    def _tournament(self, rewards: np.ndarray, size: int) -> int:
        entrants = self.rng.integers(len(rewards), size=min(size, len(rewards)))
        return int(entrants[np.argmax(rewards[entrants])])

    def _offspring(self, population: list[Candidate], config: TrainingSettings) -> list[Expression]:
        """As many children as the population: tournament, crossover, mutation, and each
        child the sampler could not have written replaced by its parent."""
        rewards = np.array([c.reward for c in population])
        arity, rng = self.grammar.arity, self.rng
        parents, trees = [], []
        while len(trees) < len(population):
            a = population[self._tournament(rewards, config.tournament_size)]
            b = population[self._tournament(rewards, config.tournament_size)]
            pair = [self._prefix(a.expression), self._prefix(b.expression)]
            if rng.random() < config.crossover_rate:
                pair = list(crossover(pair[0], pair[1], arity, rng))
            for parent, tree in zip((a, b), pair):
                if rng.random() < config.mutation_rate:
                    tree = mutate(tree, self.grammar, rng)
                parents.append(parent)
                trees.append(tree)
        parents, trees = parents[:len(population)], trees[:len(population)]
        return self._admitted(parents, trees)

    def _prefix(self, expression: Expression) -> list[int]:
        prefix = self._prefixes.get(expression.key)
        if prefix is None:
            prefix = self._prefixes[expression.key] = expression.prefix()
        return prefix

    def _admitted(self, parents: list[Candidate], trees: list[list[int]]) -> list[Expression]:
        """Each tree as an expression, or its parent's where the sampler could not write it."""
        children: list[Expression | None] = []
        arity = self.grammar.arity
        for parent, tree in zip(parents, trees):
            if tree == self._prefix(parent.expression) or len(tree) > self.constraints.max_length:
                children.append(None)
            else:
                children.append(Expression(breadth_first(tree, arity), self.library))
        fresh = [j for j, e in enumerate(children) if e is not None]
        admitted = self.constraints.admits([children[j].tokens for j in fresh]) if fresh else []
        units = self.constraints.units
        for j, ok in zip(fresh, admitted):
            if not ok or (units is not None and not units.consistent(children[j])):
                children[j] = None
        return [parent.expression if e is None else e for parent, e in zip(parents, children)]
