# Regenerates the PyTorch reference values in tests/test_conv_transpose.cpp (run with Debian's
# python3-torch: /usr/bin/python3 tests/reference/conv_transpose_golden.py). Inputs, weights
# and the loss weights are filled by a formula that the C++ test repeats.
import torch

from golden import emit, filled


def fill(shape, k):
    return filled(shape, k).requires_grad_()


F = torch.nn.functional


def case(name, fn, x_shape, w_shape, b_shape, **kw):
    x, w = fill(x_shape, 100), fill(w_shape, 101)
    b = fill(b_shape, 102) if b_shape else None
    y = fn(x, w, b, **kw)
    emit(name, y)
    (y * fill(list(y.shape), 103)).sum().backward()
    emit(name + "_dx", x.grad)
    emit(name + "_dw", w.grad)
    if b is not None:
        emit(name + "_db", b.grad)


case("t2d", F.conv_transpose2d, [2, 4, 3, 3], [4, 3, 3, 2], [6], stride=(2, 1),
     padding=(1, 0), output_padding=(1, 0), groups=2, dilation=(1, 2))
case("t1d", F.conv_transpose1d, [2, 2, 5], [2, 3, 3], [3], stride=2, padding=1, output_padding=1)
# A 1x1 kernel whose output_padding (below the dilation) adds a row and a column.
case("t2d_1x1", F.conv_transpose2d, [1, 2, 3, 3], [2, 2, 1, 1], None, output_padding=1,
     dilation=2)
