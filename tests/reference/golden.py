# What the scripts beside this one share (each regenerates the PyTorch values of one C++ test;
# run them with Debian's python3-torch: /usr/bin/python3 tests/reference/<name>.py): the one
# formula that fills every input and parameter, repeated by tests/golden.h's filled(), and the
# printing of values as C++ initializers. float64 throughout.
import math
import torch

torch.set_default_dtype(torch.float64)


def formula(n, k):
    # Element j of the k-th filled tensor: 0.4 sin(1.7 j + 0.9 k + 0.1).
    return torch.tensor([0.4 * math.sin(1.7 * j + 0.9 * k + 0.1) for j in range(n)])


def filled(shape, k):
    """A new tensor of `shape` holding formula k."""
    return formula(math.prod(shape), k).reshape(shape)


def fill_(t, k):
    """Overwrites `t` (a parameter, say) with formula k; returns it."""
    with torch.no_grad():
        t.copy_(formula(t.numel(), k).reshape(t.shape))
    return t


def values(t):
    return "{" + ", ".join("%.17g" % x for x in t.detach().reshape(-1).tolist()) + "}"


def emit(name, t):
    print("const std::vector<double> k_%s = %s;" % (name, values(t)))
