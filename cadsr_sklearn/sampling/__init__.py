"""How the policy writes formulas: the transformer, and what it may write.

- :mod:`~cadsr_sklearn.sampling.policy`: the DCT-attention decoder-only transformer;
- :mod:`~cadsr_sklearn.sampling.constraints`: the hard rules each node's token obeys,
  and their replay over given trees;
- :mod:`~cadsr_sklearn.sampling.priors`: soft log-weights on the allowed tokens;
- :mod:`~cadsr_sklearn.sampling.sampler`: breadth-first sampling of a batch, and
  teacher forcing of given trees under the same masks.
"""
