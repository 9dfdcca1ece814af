"""Runnable scientific examples that double as end-to-end tests of tenferro.

Each module has a ``main(argv)`` entry point, so ``python -m tenferro.examples.<name>`` runs it;
the scripts in the repository's ``examples/`` folder call the same functions.

- :mod:`tenferro.examples.tfim` -- variational matrix-product-state ground state of the open
  transverse-field Ising chain, optimised with tenferro gradients and L-BFGS (``make demo``).
- :mod:`tenferro.examples.digits` -- L2-regularised multinomial logistic regression on
  scikit-learn's handwritten digits, trained with tenferro gradients and L-BFGS.

The examples need ``scipy`` (and optionally ``tqdm``, ``matplotlib``, ``scikit-learn``), which are
not dependencies of the package itself; ``requirements-dev.txt`` installs them.
"""
