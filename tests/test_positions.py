"""Dual-indexed positions (appendix Algorithms 2–3) and the two sinusoidal encodings."""

import math
from collections import deque

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cadsr_sklearn.expressions.positions import (
    child_position,
    dual_indexed_encoding,
    first_children,
    sequence_encoding,
    tree_positions,
)


# ----------------------------------------------------------------------------- trees
@st.composite
def shapes(draw, max_nodes=32):
    """A random tree shape of at most ``max_nodes`` nodes as nested lists of children."""
    arities = []  # preorder
    open_slots = 1
    while open_slots:
        room = max_nodes - len(arities) - 1  # nodes still available after this one
        choices = [0] + [a for a in (1, 2) if open_slots - 1 + a <= room]
        a = draw(st.sampled_from(choices))
        arities.append(a)
        open_slots += a - 1
    it = iter(arities)

    def build():
        return [build() for _ in range(next(it))]

    return build()


def bfs(tree):
    """Nodes of a nested-list tree in breadth-first order."""
    order, queue = [], deque([tree])
    while queue:
        node = queue.popleft()
        order.append(node)
        queue.extend(node)
    return order


def algorithm3(tree):
    """The paper's recursive PositionEncodingInformation, verbatim: {id(node): (d, h)}."""
    place = {id(tree): (1, 0.5)}  # Algorithm 2: root depth 1, horizontal 1/2

    def visit(node):
        depth, horizontal = place[id(node)]
        if len(node) >= 1:  # "node has left" (a unary operator's only child)
            place[id(node[0])] = (depth + 1, horizontal - 1 / 2 ** (depth + 1))
            visit(node[0])
        if len(node) == 2:  # "node has right"
            place[id(node[1])] = (depth + 1, horizontal + 1 / 2 ** (depth + 1))
            visit(node[1])

    visit(tree)
    return place


# ----------------------------------------------------------------------------- positions
def test_first_children():
    np.testing.assert_array_equal(first_children([2, 2, 1, 0, 0, 0]), [1, 3, 5, 6, 6, 6])
    np.testing.assert_array_equal(first_children([1, 1, 0]), [1, 2, 3])
    np.testing.assert_array_equal(first_children([0]), [1])
    assert first_children([]).shape == (0,)
    assert first_children(np.array([2, 0, 0])).dtype == np.int64


def test_paper_example_tree():
    # y = x1^c + sin(x2); BFS: add, pow, sin, x1, c, x2 (Fig. of the expression tree).
    depth, horizontal = tree_positions([2, 2, 1, 0, 0, 0])
    np.testing.assert_array_equal(depth, [1, 2, 2, 3, 3, 3])
    np.testing.assert_array_equal(horizontal, [1 / 2, 1 / 4, 3 / 4, 1 / 8, 3 / 8, 5 / 8])
    assert depth.dtype == np.int64 and horizontal.dtype == np.float64


def test_single_node_and_unary_chain():
    depth, horizontal = tree_positions([0])
    assert depth.tolist() == [1] and horizontal.tolist() == [0.5]
    # Only children take the left slot, so a chain drifts left: h = 1/2 - sum 1/2^d.
    depth, horizontal = tree_positions([1, 1, 1, 0])
    assert depth.tolist() == [1, 2, 3, 4]
    np.testing.assert_array_equal(horizontal, [0.5, 0.25, 0.125, 0.0625])


def test_prefix_of_a_tree_gets_the_positions_of_the_full_tree():
    full = tree_positions([2, 2, 1, 0, 0, 0])
    for n in range(7):
        depth, horizontal = tree_positions([2, 2, 1, 0, 0, 0][:n])
        np.testing.assert_array_equal(depth, full[0][:n])
        np.testing.assert_array_equal(horizontal, full[1][:n])


@settings(max_examples=150, deadline=None)
@given(shapes())
def test_tree_positions_match_recursive_algorithm_3(tree):
    nodes = bfs(tree)
    depth, horizontal = tree_positions([len(n) for n in nodes])
    place = algorithm3(tree)
    assert depth.tolist() == [place[id(n)][0] for n in nodes]
    assert horizontal.tolist() == [place[id(n)][1] for n in nodes]  # exact: dyadic rationals
    # Every place is distinct and a binary parent sits between its two children.
    assert len(set(zip(depth.tolist(), horizontal.tolist()))) == len(nodes)
    index = {id(n): i for i, n in enumerate(nodes)}
    for i, node in enumerate(nodes):
        if len(node) == 2:
            assert horizontal[index[id(node[0])]] < horizontal[i] < horizontal[index[id(node[1])]]
        assert 0 < horizontal[i] < 1


def test_child_position_numpy_and_torch():
    d, h = child_position(np.array([1, 2]), np.array([0.5, 0.25]), np.array([0, 1]))
    np.testing.assert_array_equal(d, [2, 3])
    np.testing.assert_array_equal(h, [0.25, 0.375])
    td, th = child_position(torch.tensor([1, 2]), torch.tensor([0.5, 0.25], dtype=torch.float64),
                            torch.tensor([0, 1]))
    assert td.tolist() == [2, 3] and th.tolist() == [0.25, 0.375]
    assert child_position(3, 0.625, 0) == (4, 0.625 - 1 / 16)


# ----------------------------------------------------------------------------- encodings
def test_dual_indexed_encoding_hand_computed():
    # E = 8: channels 0-3 encode d with 10000^(4i/E), channels 4-7 encode h with 10^(4j/E).
    out = dual_indexed_encoding(torch.tensor([3]), torch.tensor([0.375], dtype=torch.float64), 8)
    d, h = 3.0, 0.375
    expected = [
        math.sin(d), math.cos(d), math.sin(d / 10000 ** 0.5), math.cos(d / 10000 ** 0.5),
        math.sin(h), math.cos(h), math.sin(h / 10 ** 0.5), math.cos(h / 10 ** 0.5),
    ]
    np.testing.assert_allclose(out[0].double().numpy(), expected, rtol=1e-6, atol=1e-7)


def test_dual_indexed_encoding_matches_eq_3_to_6_elementwise():
    E = 12
    depth = torch.tensor([[1, 2, 2], [1, 2, 3]])
    horizontal = torch.tensor([[0.5, 0.25, 0.75], [0.5, 0.25, 0.125]])
    out = dual_indexed_encoding(depth, horizontal, E)
    assert out.shape == (2, 3, E) and out.dtype == torch.get_default_dtype()
    half = E // 2
    for b in range(2):
        for t in range(3):
            d, h = float(depth[b, t]), float(horizontal[b, t])
            for i in range(half // 2):
                depth_angle = d / 10000 ** (4 * i / E)
                width_angle = h / 10 ** (4 * i / E)
                assert out[b, t, 2 * i] == pytest.approx(math.sin(depth_angle), abs=1e-6)
                assert out[b, t, 2 * i + 1] == pytest.approx(math.cos(depth_angle), abs=1e-6)
                assert out[b, t, half + 2 * i] == pytest.approx(math.sin(width_angle), abs=1e-6)
                assert out[b, t, half + 2 * i + 1] == pytest.approx(math.cos(width_angle), abs=1e-6)


@pytest.mark.parametrize("E", [1, 2, 5, 7, 10, 15])
def test_dual_indexed_encoding_shapes(E):
    depth, horizontal = (torch.from_numpy(a) for a in tree_positions([2, 2, 1, 0, 0, 0]))
    out = dual_indexed_encoding(depth, horizontal, E)
    assert out.shape == (6, E)
    assert torch.all(out.abs() <= 1)
    # The depth half takes the extra channel of an odd E; its first channel is sin(d).
    torch.testing.assert_close(out[:, 0], torch.sin(depth.to(out.dtype)))
    if E > 1:
        torch.testing.assert_close(out[:, (E + 1) // 2], torch.sin(horizontal.to(out.dtype)))
    batched = dual_indexed_encoding(depth.expand(4, 6), horizontal.expand(4, 6), E)
    assert batched.shape == (4, 6, E)
    torch.testing.assert_close(batched[2], out)


def test_sequence_encoding_hand_computed():
    E = 6
    out = sequence_encoding(torch.arange(4), E)
    assert out.shape == (4, E)
    for p in range(4):
        for i in range(E // 2):
            angle = p / 10000 ** (2 * i / E)
            assert out[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert out[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)
    assert sequence_encoding(torch.zeros(2, 3, dtype=torch.long), 5).shape == (2, 3, 5)
