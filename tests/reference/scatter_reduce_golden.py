# PyTorch 1.13's values for tests/test_scatter_reduce.cpp: scatter_reduce along dim 0 and dim 1
# of filled float64 tensors (src of index's shape: PyTorch 1.13's gradient fails for a larger
# src), with ties (src values repeated) so that amax/amin share gradients,
# each reduce with and without include_self; the gradients of sum((out * w)) for filled w. Then
# prod along dim 0 with zeros in src and self: one zero on a target, two, and a zero self.
import torch

from golden import emit, filled

torch.set_printoptions(precision=17)
index0 = torch.tensor([[0, 2, 1], [0, 0, 1], [2, 2, 3], [0, 1, 3]])  # into 5 rows
index1 = torch.tensor([[1, 1, 0, 3], [2, 0, 0, 0]])                 # into 4 columns
for dim, index, self_shape, src_shape in ((0, index0, (5, 3), (4, 3)), (1, index1, (2, 4), (2, 4))):
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            x = filled(self_shape, 1).requires_grad_(True)
            s = filled(src_shape, 2)
            with torch.no_grad():
                s[1, 0] = s[0, 0]  # a tie where both land on one target of dim 0's index
                s[0, 1] = s[0, 0]
            s.requires_grad_(True)
            out = x.scatter_reduce(dim, index, s, reduce, include_self=include_self)
            w = filled(self_shape, 3)
            (out * w).sum().backward()
            name = "d%d_%s_%s" % (dim, reduce, "self" if include_self else "noself")
            emit(name, out)
            emit(name + "_gself", x.grad)
            emit(name + "_gsrc", s.grad)

for include_self in (True, False):
    x = filled((5, 3), 1)
    s = filled((4, 3), 2)
    s[1, 0] = s[3, 0] = 0.0  # two zeros on target (0, 0)
    s[0, 1] = 0.0            # one zero on target (2, 1)
    x[1, 2] = 0.0            # a zero self on target (1, 2)
    x.requires_grad_(True)
    s.requires_grad_(True)
    out = x.scatter_reduce(0, index0, s, "prod", include_self=include_self)
    (out * filled((5, 3), 3)).sum().backward()
    name = "zeros_prod_%s" % ("self" if include_self else "noself")
    emit(name, out)
    emit(name + "_gself", x.grad)
    emit(name + "_gsrc", s.grad)
