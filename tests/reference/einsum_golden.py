# Regenerates the PyTorch reference values in tests/test_einsum.cpp (run with Debian's
# python3-torch: /usr/bin/python3 tests/reference/einsum_golden.py). Operand k is filled by a
# formula the C++ test repeats (k = 100, 101, ...); the loss weights are formula 103.
import torch

from golden import emit, filled, values


def fill(shape, k):
    return filled(shape, k).requires_grad_()


CASES = [
    ("ij,jk->ik", [[3, 4], [4, 2]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("ii->i", [[4, 4]]),
    ("ii", [[4, 4]]),
    ("ij->ji", [[3, 5]]),
    ("i,j->ij", [[3], [4]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]),
    ("bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("iij,jk", [[3, 3, 4], [4, 2]]),
    ("ab,ab->", [[3, 4], [3, 4]]),
    ("i,i", [[5], [5]]),
    ("bi,i->b", [[3, 4], [4]]),
    ("ijk->kj", [[2, 3, 4]]),
]
print("const std::vector<EinsumCase> kCases = {")
for eq, shapes in CASES:
    ops = [fill(s, 100 + i) for i, s in enumerate(shapes)]
    y = torch.einsum(eq, *ops)
    (y * fill(list(y.shape), 103).detach()).sum().backward()
    grads = ", ".join(values(o.grad) for o in ops)
    print('    {"%s", {%s}, {%s}, %s, {%s}},' % (
        eq, ", ".join("{" + ", ".join(map(str, s)) + "}" for s in shapes),
        ", ".join(map(str, y.shape)), values(y), grads))
print("};")
