"""What a formula is: token trees over a library, and how they are evaluated.

- :mod:`~cadsr_sklearn.expressions.library`: the tokens a search writes with
  (operators, variables, ``1``, the constant ``c``);
- :mod:`~cadsr_sklearn.expressions.custom_operators`: operators of your own;
- :mod:`~cadsr_sklearn.expressions.expression`: a tree in breadth-first order, its
  constants, SymPy and LaTeX forms;
- :mod:`~cadsr_sklearn.expressions.positions`: where each node sits in its tree;
- :mod:`~cadsr_sklearn.expressions.formula_parser`: a formula a person writes, as a tree;
- :mod:`~cadsr_sklearn.expressions.notation`: formulas and numbers written for people;
- :mod:`~cadsr_sklearn.expressions.simple_numbers`: the simple numbers a constant may be;
- the compiled kernels: :mod:`~cadsr_sklearn.expressions.opcodes` (what a node
  computes), :mod:`~cadsr_sklearn.expressions.operations` (each operator's value
  and derivatives), :mod:`~cadsr_sklearn.expressions.program` (the interpreter and
  its Jacobian), :mod:`~cadsr_sklearn.expressions.parallel` (threads over a batch).

The lowest layer: it imports nothing else of the package.
"""
