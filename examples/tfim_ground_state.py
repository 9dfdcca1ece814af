"""Ground state of the open transverse-field Ising chain with a variational MPS (``make demo``).

A thin script around :mod:`tenferro.examples.tfim`, which holds the algorithm and its
documentation; ``python -m tenferro.examples.tfim`` is the same program. Defaults:
``--sites 16 --bond 8 --g 1.0 --tol 1e-6 --seed 0``; ``--help`` lists the options.
"""

import sys

from tenferro.examples.tfim import main

if __name__ == "__main__":
    sys.exit(main())
