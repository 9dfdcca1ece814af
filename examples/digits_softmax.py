"""Multinomial logistic regression on scikit-learn's handwritten digits, with tenferro gradients.

A thin script around :mod:`tenferro.examples.digits` (same as ``python -m
tenferro.examples.digits``): trains an L2-regularised softmax classifier with L-BFGS on tenferro
gradients and prints its test accuracy next to ``sklearn.linear_model.LogisticRegression`` on the
same split and regularisation.
"""

import sys

from tenferro.examples.digits import main

if __name__ == "__main__":
    sys.exit(main())
